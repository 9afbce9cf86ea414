// The whole core under one import: the JSON codec, the APNs payload model, Notification Hubs'
// SAS tokens and resource streaming. Each is also a library product of its own, so a package
// that needs only the codec can depend on `PushJSON` (no swift-crypto, no libxxhash).
@_exported import PushAPNs
@_exported import PushJSON
@_exported import PushResources
@_exported import PushSAS
