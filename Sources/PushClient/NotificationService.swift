public import Foundation

/// What a notification shows: the lines the system displays and the image it attaches.
public struct NotificationContent: Sendable, Hashable {
    public var title: String
    public var subtitle: String
    public var body: String
    /// The downloaded image, in the extension's own container, to attach.
    public var image: DownloadedImage?

    public init(title: String = "", subtitle: String = "", body: String = "", image: DownloadedImage? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.image = image
    }
}

/// What a notification service extension delegates its work to: it reads the push, fetches the
/// secure body or downloads and attaches the image within the extension's time, and hands the
/// content to the system exactly once, with the best attempt when anything fails or time runs
/// out. It never throws to the extension.
///
/// The extension forwards its two calls, `didReceive(_:withContentHandler:)` and
/// `serviceExtensionTimeWillExpire()`; on Apple platforms the `UserNotifications` forms of both
/// are a few lines over ``didReceive(_:showing:deliver:)`` and ``timeWillExpire()``.
public final class NotificationServiceHelper: Sendable {
    let backend: PushBackendClient
    let imageDirectory: URL
    let timeLimit: Duration
    let maximumImageBytes: Int
    /// The pushes in flight, by the number each was given; and the next number.
    private let inFlight = Locked<(attempts: [UInt64: Attempt], next: UInt64)>(([:], 0))

    /// - Parameters:
    ///   - backend: The client the app itself uses, with credentials the extension can read (a
    ///     Keychain access group the app and its extension share).
    ///   - imageDirectory: Where images are written: the extension's own container, whose files
    ///     the system moves into its store as it attaches them.
    ///   - timeLimit: How long a push may take: iOS gives an extension about 30 seconds, and the
    ///     default leaves a margin of 5 for the content handler and a slow device.
    ///   - maximumImageBytes: The largest image downloaded; a larger one is not attached.
    public init(backend: PushBackendClient, imageDirectory: URL, timeLimit: Duration = .seconds(25), maximumImageBytes: Int = 10 << 20) {
        self.backend = backend
        self.imageDirectory = imageDirectory
        self.timeLimit = timeLimit
        self.maximumImageBytes = maximumImageBytes
    }

    /// Handles one push: `deliver` is called exactly once, with `original` completed by what the
    /// push names (the secure body in place of the placeholder, the image attached), or with
    /// `original` itself when the push names nothing, a fetch fails or time runs out.
    public func didReceive(_ message: PushMessage, showing original: NotificationContent, deliver: @escaping @Sendable (NotificationContent) -> Void)
    {
        let attempt = Attempt(original: original, deliver: deliver)
        let key = inFlight.withLock { state in
            defer { state.next += 1 }
            state.attempts[state.next] = attempt
            return state.next
        }
        attempt.start { [self] in
            let content = await content(for: message, original: original, within: timeLimit)
            attempt.deliver(content)
            inFlight.withLock { _ = $0.attempts.removeValue(forKey: key) }
        }
    }

    /// The system is about to give up on the extension: every push in flight is delivered now,
    /// as far as it got, and its fetches are cancelled (a partial image is removed).
    public func timeWillExpire() {
        // Each leaves the list when its work ends, which cancelling hastens.
        for attempt in inFlight.withLock({ Array($0.attempts.values) }) { attempt.expire() }
    }

    /// Waits until every push handed over has finished its work, delivered or not: for tests, and
    /// for an extension that wants its files settled.
    public func finished() async {
        while let attempt = inFlight.withLock({ $0.attempts.values.first }) {
            if let task = attempt.task { await task.value } else { await Task.yield() }
        }
    }

    /// The content to show for `message`: what to fetch, and what to fall back to. Never throws:
    /// any failure, cancellation included, leaves `original` as it is.
    public func content(for message: PushMessage, original: NotificationContent, within timeout: Duration) async -> NotificationContent {
        var content = original
        switch message {
        case .richAlert(let id, _, _):
            try? FileManager.default.createDirectory(at: imageDirectory, withIntermediateDirectories: true)
            let file = imageDirectory.appendingPathComponent(id)
            guard let image = try? await backend.downloadImage(id: id, to: file, maximumBytes: maximumImageBytes, within: timeout) else {
                return original
            }
            guard !Task.isCancelled else {
                try? FileManager.default.removeItem(at: file)
                return original
            }
            content.image = image
        case .secureAlert(let id, _):
            guard let text = try? await backend.secureBody(id: id, within: timeout), !Task.isCancelled else { return original }
            content.body = text
        default:
            // Silent pushes reach the app, not an extension; another sender's alert is shown as sent.
            break
        }
        return content
    }

    /// One push's delivery: the handler called once, by whichever comes first, the work or the
    /// system's deadline.
    private final class Attempt: Sendable {
        let original: NotificationContent
        private let handler: Locked<(@Sendable (NotificationContent) -> Void)?>
        private let work = Locked<Task<Void, Never>?>(nil)

        init(original: NotificationContent, deliver: @escaping @Sendable (NotificationContent) -> Void) {
            self.original = original
            handler = Locked(deliver)
        }

        var task: Task<Void, Never>? { work.withLock { $0 } }

        func start(_ body: @escaping @Sendable () async -> Void) {
            work.withLock { $0 = Task { await body() } }
        }

        /// Calls the handler with `content` unless it was called already.
        func deliver(_ content: NotificationContent) {
            let handler = handler.withLock { handler in
                defer { handler = nil }
                return handler
            }
            handler?(content)
        }

        func expire() {
            deliver(original)
            task?.cancel()
        }
    }
}
