import HTTP2Transport
import Logging
import NIOCore
import NIOHPACK
public import PushAPNs
import PushAPNsTokens
import PushJSON

/// What APNs keeps of a channel's broadcasts for a device that is offline.
public enum APNsMessageStoragePolicy: Int, Sendable, Hashable, CaseIterable {
    /// Delivered to the devices reachable now, kept for none; APNs' advice for frequent updates.
    /// Broadcasts on it take no `apns-expiration` but 0.
    case noStorage = 0
    /// The most recent broadcast is kept for a device that is offline.
    case mostRecentMessage = 1
}

/// A broadcast channel (iOS 18): devices subscribe to it through ActivityKit, and one broadcast
/// reaches every subscribed Live Activity.
public struct APNsChannel: Sendable, Hashable {
    /// `apns-channel-id`, the id APNs gave it (base64).
    public let id: String
    public let storagePolicy: APNsMessageStoragePolicy
}

/// A channel management request that did not succeed.
public struct APNsChannelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Later versions may add failures: a `switch` outside this package needs a `default` case.
    @nonexhaustive
    public enum Failure: Hashable, Sendable {
        /// APNs answered with an error (`ChannelNotRegistered`, `BadChannelId`, `CannotCreateChannelConfig`, …).
        case rejected(status: Int, reason: APNsRejectionReason)
        /// No answer came. `mayHaveBeenApplied` is false only when the request was never written:
        /// a create that may have been applied may have made a channel, so list before creating again.
        case unanswered(APNsTransportFailure, mayHaveBeenApplied: Bool)
        /// An answer this client cannot read (no channel id on a created channel, a body that is not the documented JSON).
        case unreadableAnswer(String)
        /// Not sent: a bundle ID or channel id that cannot go into the request.
        case invalidRequest(String)
    }

    public let failure: Failure
    /// `apns-request-id` of the answer, for Apple's support.
    public let requestID: String?

    public var description: String {
        switch failure {
        case .rejected(let status, let reason): "APNs refused the channel request: \(status) \(reason)"
        case .unanswered(let failure, let applied): "no answer (\(failure))\(applied ? "; it may have been applied" : "")"
        case .unreadableAnswer(let what): "unreadable answer: \(what)"
        case .invalidRequest(let what): what
        }
    }

    init(_ failure: Failure, requestID: String? = nil) {
        self.failure = failure
        self.requestID = requestID
    }

    init(_ outcome: APNsSendOutcome, requestID: String?) {
        switch outcome {
        case .rejected(let status, let reason, _): self.init(.rejected(status: status, reason: reason), requestID: requestID)
        case .failed(let failure, let written): self.init(.unanswered(failure, mayHaveBeenApplied: written), requestID: requestID)
        case .delivered: self.init(.unreadableAnswer("success taken for a failure"), requestID: requestID)
        }
    }
}

/// The result of one broadcast: APNs takes it for every subscriber at once, or refuses it.
public struct APNsBroadcastResult: Hashable, Sendable, CustomStringConvertible {
    public let channelID: String
    /// `.delivered` when APNs accepted it for the channel's subscribers.
    public let outcome: APNsSendOutcome
    /// `apns-request-id` of the answer.
    public let requestID: String?
    public let attempts: Int

    public var isDelivered: Bool { outcome == .delivered }

    /// `STATUS REASON REQUEST-ID`, as for a device: `200 - ID`, `404 ChannelNotRegistered ID`, `- timeout -`.
    public var summary: String {
        APNsSendResult(deviceToken: channelID, outcome: outcome, apnsID: requestID, uniqueID: nil, attempts: attempts).summary
    }

    public var description: String { "channel \(channelID) \(summary)" }
}

extension APNsClient {
    /// Creates a channel for the app's Live Activities.
    /// - Throws: ``APNsChannelError``; APNs keeps at most 10,000 channels per app and environment
    ///   (`CannotCreateChannelConfig` beyond).
    public func createChannel(bundleID: String, storagePolicy: APNsMessageStoragePolicy) async throws(APNsChannelError) -> APNsChannel {
        let body = JSON.object([
            JSONMember("message-storage-policy", .number(JSONNumber(storagePolicy.rawValue))), JSONMember("push-type", "LiveActivity"),
        ])
        var bytes: [UInt8] = []
        try? body.write(into: &bytes)
        let answer = try await manage("POST", bundleID: bundleID, path: "channels", channelID: nil, body: bytes)
        guard let id = answer.headers.first(name: "apns-channel-id"), Self.isChannelID(id) else {
            throw APNsChannelError(.unreadableAnswer("no apns-channel-id on the created channel"), requestID: answer.requestID)
        }
        return APNsChannel(id: id, storagePolicy: storagePolicy)
    }

    /// A channel's settings.
    public func channel(_ id: String, bundleID: String) async throws(APNsChannelError) -> APNsChannel {
        let answer = try await manage("GET", bundleID: bundleID, path: "channels", channelID: id, body: nil)
        var parser = JSONParser()
        guard let document = try? parser.parse(answer.body), let number = document.root["message-storage-policy"]?.int,
            let policy = APNsMessageStoragePolicy(rawValue: number)
        else { throw APNsChannelError(.unreadableAnswer("no message-storage-policy in the channel's settings"), requestID: answer.requestID) }
        return APNsChannel(id: id, storagePolicy: policy)
    }

    /// The ids of every channel the app has in this environment.
    public func channelIDs(bundleID: String) async throws(APNsChannelError) -> [String] {
        let answer = try await manage("GET", bundleID: bundleID, path: "all-channels", channelID: nil, body: nil)
        var parser = JSONParser()
        guard let document = try? parser.parse(answer.body), let list = document.root["channels"], list.kind == .array else {
            throw APNsChannelError(.unreadableAnswer("no channels array in the list"), requestID: answer.requestID)
        }
        var ids: [String] = []
        for element in list.elements {
            guard let id = element.string else {
                throw APNsChannelError(.unreadableAnswer("a channel id that is not a string"), requestID: answer.requestID)
            }
            ids.append(id)
        }
        return ids
    }

    /// Deletes a channel; its subscribers get nothing more on it.
    public func deleteChannel(_ id: String, bundleID: String) async throws(APNsChannelError) {
        _ = try await manage("DELETE", bundleID: bundleID, path: "channels", channelID: id, body: nil)
    }

    /// Broadcasts a Live Activity update or end to every device subscribed to a channel: one request.
    /// - Parameters:
    ///   - payload: A Live Activity event (`aps.event`), within the push type's limit.
    ///   - channelID: The channel's id, as APNs gave it.
    ///   - bundleID: The app's bundle ID, which owns the channel.
    ///   - priority: 10, 5 or 1 (10 when nil); APNs budgets priority 10 broadcasts.
    ///   - expiration: Unix seconds; only 0 on a ``APNsMessageStoragePolicy/noStorage`` channel.
    /// - Throws: ``APNsClientError`` when the payload is not a Live Activity event or the request cannot be made.
    public func broadcast(
        _ payload: APNsPayload, to channelID: String, bundleID: String, priority: Int? = nil, expiration: Int? = nil
    ) async throws(APNsClientError) -> APNsBroadcastResult {
        guard payload.aps.event != nil else {
            throw APNsClientError(code: .invalidPayload, message: "a broadcast carries a Live Activity event (aps.event)")
        }
        let body: [UInt8]
        do throws(APNsPayloadError) {
            body = try payload.encoded(limit: APNsPushType.liveactivity.payloadLimit)
        } catch {
            throw APNsClientError(code: .invalidPayload, message: "the payload cannot be encoded: \(error)")
        }
        return try await broadcast(encodedPayload: body, to: channelID, bundleID: bundleID, priority: priority, expiration: expiration)
    }

    /// Broadcasts an encoded Live Activity payload to a channel's subscribers.
    public func broadcast(
        encodedPayload: [UInt8], to channelID: String, bundleID: String, priority: Int? = nil, expiration: Int? = nil
    ) async throws(APNsClientError) -> APNsBroadcastResult {
        guard Self.isBundleID(bundleID) else { throw APNsClientError(code: .invalidChannel, message: "not a bundle ID") }
        guard Self.isChannelID(channelID) else { throw APNsClientError(code: .invalidChannel, message: "not a channel id (base64)") }
        let headers = APNsHeaders(pushType: .liveactivity, priority: priority, expiration: expiration)
        do throws(APNsHeaders.ValidationError) {
            try headers.validate()
        } catch {
            throw APNsClientError(code: .invalidHeaders, message: "invalid header: \(error)")
        }
        guard encodedPayload.count <= APNsPushType.liveactivity.payloadLimit else {
            throw APNsClientError(
                code: .payloadTooLarge,
                message: "the payload is \(encodedPayload.count) bytes; broadcasts take at most \(APNsPushType.liveactivity.payloadLimit)")
        }
        let token: String?
        do throws(APNsTokenError) {
            token = try providerToken()
        } catch {
            throw APNsClientError(code: .noProviderToken, message: "no provider token: \(error.code)")
        }
        let pool = try connectionPools().push
        var request = HTTP2Request(
            method: "POST", path: "/4/broadcasts/apps/" + bundleID,
            headers: HPACKHeaders(
                headers.fields.map { ($0.name, $0.value) } + [("apns-channel-id", channelID), ("content-type", "application/json")]),
            body: ByteBuffer(bytes: encodedPayload), responseLimit: 64 << 10)
        let exchange = await exchange(
            &request, on: pool, token: token, budget: RetryBudget(configuration.retry.maximumAttempts), subject: ["channel": "\(channelID)"])
        metrics.countSend(exchange.outcome.metricLabels)
        return APNsBroadcastResult(
            channelID: channelID, outcome: exchange.outcome, requestID: exchange.headers.first(name: "apns-request-id"), attempts: exchange.attempts)
    }

    /// One management request, on APNs' terms for retries; the answer when it is a 2xx.
    private func manage(
        _ method: String, bundleID: String, path: String, channelID: String?, body: [UInt8]?
    ) async throws(APNsChannelError) -> (headers: HPACKHeaders, body: [UInt8], requestID: String?) {
        guard Self.isBundleID(bundleID) else { throw APNsChannelError(.invalidRequest("not a bundle ID")) }
        if let channelID, !Self.isChannelID(channelID) { throw APNsChannelError(.invalidRequest("not a channel id (base64)")) }
        let token: String?
        do throws(APNsTokenError) {
            token = try providerToken()
        } catch {
            throw APNsChannelError(.unanswered(.other("no provider token: \(error.code)"), mayHaveBeenApplied: false))
        }
        let pool: HTTP2ConnectionPool
        do throws(APNsClientError) {
            pool = try connectionPools().management
        } catch {
            throw APNsChannelError(.invalidRequest(error.message))
        }
        // A list of 10,000 channel ids is about 300 KB.
        var request = HTTP2Request(method: method, path: "/1/apps/" + bundleID + "/" + path, headers: [:], body: nil, responseLimit: 4 << 20)
        if let channelID { request.headers.add(name: "apns-channel-id", value: channelID) }
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = ByteBuffer(bytes: body)
        }
        let exchange = await exchange(
            &request, on: pool, token: token, budget: RetryBudget(configuration.retry.maximumAttempts),
            subject: ["channel": "\(channelID ?? "-")"])
        let requestID = exchange.headers.first(name: "apns-request-id")
        guard exchange.outcome == .delivered else { throw APNsChannelError(exchange.outcome, requestID: requestID) }
        return (exchange.headers, exchange.body, requestID)
    }

    /// Letters, digits, `.` and `-`: a bundle ID, and nothing that could change the request's path.
    static func isBundleID(_ text: String) -> Bool {
        isWord(text, lengths: 1...255, punctuation: ".-")
    }

    /// Base64's alphabet and padding: a channel id, and nothing that could break a header.
    static func isChannelID(_ text: String) -> Bool {
        isWord(text, lengths: 1...256, punctuation: "+/=")
    }
}
