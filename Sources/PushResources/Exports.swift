// The shape of this module's errors, for its users: `code`, `message` and their descriptions come
// from these protocols, which users see only when a module they import exports them.
@_exported public import protocol PushInternals.CodedError
@_exported public import protocol PushInternals.ErrorCode
