// The shape of this module's errors and of its linter's findings, for its users: `code`,
// `message`, their descriptions and equality come from these declarations, which users see only
// when a module they import exports them.
@_exported public import protocol PushInternals.CodedError
@_exported public import protocol PushInternals.ErrorCode
@_exported public import struct PushJSON.CodedPayloadError
@_exported public import struct PushJSON.PayloadDiagnostic
@_exported public import protocol PushJSON.PayloadError
