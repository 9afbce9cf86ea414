public import PushJSON

/// A message of FCM's HTTP v1 API, as it goes in a `{"message": {…}}` body: to FCM itself
/// (`projects/…/messages:send`), or to Notification Hubs with `ServiceBusNotification-Format: fcmv1`,
/// where the hub supplies the target.
///
/// ```swift
/// let message = FCMMessage(
///     notification: FCMNotification(title: "Sunset", body: "at the pier"),
///     data: ["richId": "42", "richType": "img"],
///     android: FCMAndroidConfig(priority: .high, ttl: .seconds(3600)))
/// var buffer: [UInt8] = []
/// try message.encode(into: &buffer)
/// ```
public struct FCMMessage: Sendable, Hashable {
    /// Whom FCM delivers to. Leave it out for Notification Hubs, which picks the devices.
    public enum Target: Sendable, Hashable {
        /// One app instance's registration token.
        case token(String)
        /// Every device subscribed to the topic (the name without `/topics/`).
        case topic(String)
        /// A boolean expression of topics, such as `'news' in topics && 'eu' in topics`.
        case condition(String)
    }

    public var target: Target?
    /// What every platform shows.
    public var notification: FCMNotification?
    /// Strings for the app, on every platform.
    public var data: FCMStringMap
    public var android: FCMAndroidConfig?
    public var apns: FCMAPNsConfig?
    public var webpush: FCMWebpushConfig?
    /// `fcm_options.analytics_label`: up to 50 characters from `A-Za-z0-9-_.~%`.
    public var analyticsLabel: String?

    public init(
        target: Target? = nil, notification: FCMNotification? = nil, data: FCMStringMap = [:], android: FCMAndroidConfig? = nil,
        apns: FCMAPNsConfig? = nil, webpush: FCMWebpushConfig? = nil, analyticsLabel: String? = nil
    ) {
        self.target = target
        self.notification = notification
        self.data = data
        self.android = android
        self.apns = apns
        self.webpush = webpush
        self.analyticsLabel = analyticsLabel
    }
}

/// The notification every platform shows: `message.notification`.
public struct FCMNotification: Sendable, Hashable {
    public var title: String?
    public var body: String?
    /// An HTTPS URL of an image the device downloads and shows.
    public var image: String?

    public init(title: String? = nil, body: String? = nil, image: String? = nil) {
        self.title = title
        self.body = body
        self.image = image
    }
}

/// A map of strings in the order given, as FCM's `data` and `headers` are (JSON objects whose
/// values are strings). A literal keeps its order: `["richId": "42", "richType": "img"]`.
public struct FCMStringMap: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: String

        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry] = []) { self.entries = entries }

    public init(dictionaryLiteral elements: (String, String)...) {
        entries = elements.map { Entry($0.0, $0.1) }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The value of the first entry with `key`.
    public subscript(key: String) -> String? {
        entries.first { $0.key == key }?.value
    }
}

/// `message.android`: how FCM treats the message on Android devices.
public struct FCMAndroidConfig: Sendable, Hashable {
    /// How urgently FCM delivers: `high` wakes a dozing device, for what the user must see now.
    public enum Priority: String, Sendable, Hashable, CaseIterable {
        case normal = "NORMAL"
        case high = "HIGH"
    }

    /// Messages with the same key replace each other while the device is offline.
    public var collapseKey: String?
    public var priority: Priority?
    /// How long FCM keeps the message for an offline device, up to four weeks; `.zero` delivers
    /// now or never. FCM counts whole seconds.
    public var ttl: Duration?
    /// The package name the registration token must belong to.
    public var restrictedPackageName: String?
    /// Replaces the message's `data` on Android.
    public var data: FCMStringMap
    public var notification: FCMAndroidNotification?
    /// Delivered while the device is in direct boot mode (before the first unlock).
    public var directBootOK: Bool?

    public init(
        collapseKey: String? = nil, priority: Priority? = nil, ttl: Duration? = nil, restrictedPackageName: String? = nil,
        data: FCMStringMap = [:], notification: FCMAndroidNotification? = nil, directBootOK: Bool? = nil
    ) {
        self.collapseKey = collapseKey
        self.priority = priority
        self.ttl = ttl
        self.restrictedPackageName = restrictedPackageName
        self.data = data
        self.notification = notification
        self.directBootOK = directBootOK
    }
}

/// `message.android.notification`: what an Android device shows, beyond the common notification.
public struct FCMAndroidNotification: Sendable, Hashable {
    public var title: String?
    public var body: String?
    /// A drawable resource of the app.
    public var icon: String?
    /// The icon's color, `#rrggbb`.
    public var color: String?
    /// A sound resource of the app, or `default`.
    public var sound: String?
    /// Notifications with the same tag replace each other in the drawer.
    public var tag: String?
    /// The activity that opens when the notification is tapped (an intent filter's action).
    public var clickAction: String?
    /// The notification channel (Android 8 and later) it is posted to.
    public var channelID: String?
    public var image: String?

    public init(
        title: String? = nil, body: String? = nil, icon: String? = nil, color: String? = nil, sound: String? = nil, tag: String? = nil,
        clickAction: String? = nil, channelID: String? = nil, image: String? = nil
    ) {
        self.title = title
        self.body = body
        self.icon = icon
        self.color = color
        self.sound = sound
        self.tag = tag
        self.clickAction = clickAction
        self.channelID = channelID
        self.image = image
    }
}

/// `message.apns`: what FCM passes on to APNs for iOS devices.
public struct FCMAPNsConfig: Sendable, Hashable {
    /// APNs request headers, such as `apns-priority` and `apns-push-type`.
    public var headers: FCMStringMap
    /// The whole APNs payload (`{"aps": {…}, …}`), already encoded: an `APNsPayload`'s bytes.
    public var payload: RawJSON?

    public init(headers: FCMStringMap = [:], payload: RawJSON? = nil) {
        self.headers = headers
        self.payload = payload
    }
}

/// `message.webpush`: what FCM sends to browsers.
public struct FCMWebpushConfig: Sendable, Hashable {
    /// Web Push headers, such as `TTL` and `Urgency`.
    public var headers: FCMStringMap
    public var data: FCMStringMap
    /// A Web Notification's options as JSON (`title`, `body`, `icon`, `actions`, …).
    public var notification: RawJSON?
    /// `fcm_options.link`: the HTTPS page that opens when the notification is clicked.
    public var link: String?

    public init(headers: FCMStringMap = [:], data: FCMStringMap = [:], notification: RawJSON? = nil, link: String? = nil) {
        self.headers = headers
        self.data = data
        self.notification = notification
        self.link = link
    }
}
