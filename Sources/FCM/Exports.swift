// The proxy settings' and transport failures' members live in the internal transport module:
// without this, a user's file with `MemberImportVisibility` could name the types but not use them.
@_exported public import struct HTTP2Transport.HTTPProxy
@_exported public import struct HTTP2Transport.HTTPProxyError
@_exported public import enum HTTP2Transport.TransportFailure
// The shape of this module's errors, for its users: `code`, `message` and their descriptions come
// from these protocols, which users see only when a module they import exports them.
@_exported public import protocol PushInternals.CodedError
@_exported public import protocol PushInternals.ErrorCode
