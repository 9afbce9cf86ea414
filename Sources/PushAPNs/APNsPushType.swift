import PushJSON

/// The `apns-push-type` header's values, with their payload limits and topic suffixes.
public enum APNsPushType: String, Sendable, Hashable, CaseIterable {
    case alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk, widgets

    /// Bytes APNs accepts in a payload of this type: 5120 for VoIP, 4096 otherwise.
    public var payloadLimit: Int {
        self == .voip ? APNsLimits.voipPayloadSize : APNsLimits.payloadSize
    }

    /// What `apns-topic` must end with for this push type (after the bundle ID), if anything.
    public var topicSuffix: String? {
        switch self {
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .location: return ".location-query"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .alert, .background, .mdm: return nil
        }
    }
}

public enum APNsLimits {
    /// Payload limit for every push type but VoIP.
    public static let payloadSize = 4096
    /// Payload limit for VoIP pushes.
    public static let voipPayloadSize = 5120
    /// Longest `apns-collapse-id`, in bytes.
    public static let collapseIDSize = 64
}
