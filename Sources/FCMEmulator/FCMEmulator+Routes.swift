package import APNsEmulator
import FCM
import Foundation
import HTTPTypes
package import Hummingbird
import NIOCore
import PushFCM
import PushInternals
package import PushJSON
package import PushServerSupport
import Synchronization

extension FCMEmulator {
    package func router() -> Router<APNsEmulatorRequestContext> {
        let router = Router(context: APNsEmulatorRequestContext.self)
        router.add(
            middleware: UnroutedRequestGate { request in
                GoogleError(status: .notFound, canonical: "NOT_FOUND", message: "The requested URL \(request.uri.path.prefix(200)) was not found.")
            })
        router.post("token") { [self] request, context in try await grant(request, context: context) }
        router.post("v1/projects/:project/:method") { [self] request, context in
            let project = try context.parameters.require("project")
            guard try context.parameters.require("method") == "messages:send" else {
                throw GoogleError(status: .notFound, canonical: "NOT_FOUND", message: "The requested method was not found.")
            }
            if isBenchmark { return try await benchmarkSend(request, project: project) }
            return try await applyingFaults(context: context) { try await send(request, context: context, project: project) }
        }
        let hooks = router.group("_emulator")
        hooks.addRecordingHooks(for: self)
        hooks.get("token-requests") { [self] _, _ in Response.json(Array(String(tokenRequestCount).utf8)) }
        guard allowsFaultInjection else { return router }
        hooks.put("tokens/:token") { [self] request, context in
            let token = try context.parameters.require("token")
            guard Self.isWellFormedToken(token) else { throw HookRefusal(400, "a registration token is 20 to 4,096 of A-Z a-z 0-9 - _ :") }
            var parser = JSONParser()
            guard let document = try? parser.parse(try await request.hookBody(upTo: 1024)), let name = document.root["state"]?.string else {
                throw HookRefusal(400, #"give {"state": "unregistered" | "senderIdMismatch" | "active"}"#)
            }
            let tokenState: FCMTokenState
            switch name {
            case "unregistered": tokenState = .unregistered
            case "senderIdMismatch": tokenState = .senderIDMismatch
            case "active": tokenState = .active
            default: throw HookRefusal(400, #"state is "unregistered", "senderIdMismatch" or "active""#)
            }
            setState(tokenState, for: token)
            return Response(status: .noContent)
        }
        hooks.post("revoke") { [self] _, _ in
            revokeAccessTokens()
            return Response(status: .noContent)
        }
        hooks.addFaultHook(for: self)
        return router
    }

    // MARK: The token endpoint

    private func grant(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        state.withLock { $0.tokenRequests += 1 }
        guard let body = try await request.collectBytes(upTo: 16 << 10) else { throw TokenRefusal("invalid_request", "The request is too large.") }
        var form: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let plus = { (bytes: ArraySlice<UInt8>) in bytes.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 } }
            guard parts.count == 2, let key = PercentEncoding.decode(plus(parts[0])), let value = PercentEncoding.decode(plus(parts[1])) else {
                throw TokenRefusal("invalid_request", "The request body is not form-encoded.")
            }
            form[String(decoding: key, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            throw TokenRefusal("unsupported_grant_type", "Invalid grant_type: \(escapingControls((form["grant_type"] ?? "").prefix(100)))")
        }
        guard let assertion = form["assertion"] else { throw TokenRefusal("invalid_request", "Missing required parameter: assertion") }
        let audiences = [account.tokenURI, "https://\(request.head.authority ?? "")\(request.uri.path)"]
        try verify(assertion, audiences: audiences)
        var random = SystemRandomNumberGenerator()
        let token = "ya29.emulator-" + (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
        let lifetime = accessTokenLifetime
        state.withLock { storage in
            if storage.accessTokens.count >= Self.maximumAccessTokens {
                let now = ContinuousClock.now
                storage.accessTokens = storage.accessTokens.filter { $0.value > now }
                if storage.accessTokens.count >= Self.maximumAccessTokens { storage.accessTokens.removeAll() }
            }
            storage.accessTokens[token] = .now + lifetime
        }
        var json: [UInt8] = []
        try JSON.object([
            JSONMember("access_token", .string(token)), JSONMember("expires_in", .number(JSONNumber(Int(lifetime.components.seconds)))),
            JSONMember("token_type", .string("Bearer")),
        ]).write(into: &json)
        return Response.json(json)
    }

    /// Checks an assertion as Google does: RS256 by the account's key, the account as `iss`, the
    /// token URI as `aud`, a scope that grants sending, and a current lifetime of an hour at most.
    private func verify(_ assertion: String, audiences: [String]) throws {
        let parts = assertion.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64.decode(parts[0], .url), let claimBytes = Base64.decode(parts[1], .url),
            let signature = Base64.decode(parts[2], .url)
        else { throw TokenRefusal("invalid_grant", "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.") }
        var parser = JSONParser()
        guard let header = try? parser.parse(headerBytes), header.root["alg"]?.string == "RS256" else {
            throw TokenRefusal("invalid_grant", "Invalid JWT: the algorithm must be RS256.")
        }
        let signingInput = assertion.utf8.prefix(parts[0].count + 1 + parts[1].count)
        guard account.isSignature(signature, of: Array(signingInput)) else { throw TokenRefusal("invalid_grant", "Invalid JWT Signature.") }
        guard let claims = try? parser.parse(claimBytes), claims.root.kind == .object else {
            throw TokenRefusal("invalid_grant", "Invalid JWT: the claims are not a JSON object.")
        }
        let root = claims.root
        guard root["iss"]?.string == account.clientEmail else { throw TokenRefusal("invalid_grant", "Invalid JWT: iss is not the service account.") }
        guard let audience = root["aud"]?.string, audiences.contains(audience) else {
            throw TokenRefusal("invalid_grant", "Invalid JWT: aud is not the token URI.")
        }
        let scopes = Set((root["scope"]?.string ?? "").split(separator: " ").map(String.init))
        guard !scopes.isDisjoint(with: Self.sendingScopes) else {
            throw TokenRefusal("invalid_scope", "The scope does not grant Firebase Cloud Messaging.")
        }
        let now = unixSeconds()
        guard let issuedAt = root["iat"]?.int, let expires = root["exp"]?.int, expires > issuedAt, expires - issuedAt <= 3600,
            Int64(issuedAt) <= now + 60, Int64(expires) > now - 60
        else { throw TokenRefusal("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.") }
    }

    // MARK: Sends

    /// Counts the request and applies the next queued fault, if its turn has come, around `handle`.
    private func applyingFaults(context: APNsEmulatorRequestContext, _ handle: () async throws -> Response) async throws -> Response {
        let fault = state.withLock { storage -> FCMFault? in
            storage.requests += 1
            return storage.faults.next()
        }
        switch fault {
        case .status(let status, let retryAfter)?:
            throw GoogleError.forStatus(status, retryAfter: retryAfter)
        case .connection(let fault)?:
            return try await EmulatorConnectionFaults.answer(after: fault, context: context, handle)
        case nil:
            return try await handle()
        }
    }

    private func authorise(_ request: Request, project: String) throws {
        guard let authorization = request.headers[.authorization], authorization.utf8.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else { throw GoogleError.unauthenticated }
        let token = String(authorization.dropFirst(7))
        let now = ContinuousClock.now
        guard let expires = state.withLock({ $0.accessTokens[token] }), now < expires else { throw GoogleError.unauthenticated }
        guard project == projectID else {
            throw GoogleError(
                status: .forbidden, canonical: "PERMISSION_DENIED",
                message:
                    "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project.prefix(100))' (or it may not exist)."
            )
        }
    }

    private func send(_ request: Request, context: APNsEmulatorRequestContext, project: String) async throws -> Response {
        try authorise(request, project: project)
        guard let body = try await request.collectBytes(upTo: 64 << 10) else {
            throw GoogleError(status: .contentTooLarge, canonical: "INVALID_ARGUMENT", message: "Request payload size exceeds the limit.")
        }
        var parser = JSONParser()
        guard let document = try? parser.parse(body), document.root.kind == .object else {
            throw GoogleError.invalidArgument("Invalid JSON payload received.")
        }
        // PushFCM's lint, but for the size: FCM counts the message, not its target.
        let findings = FCMLinter.lint(document).filter { $0.severity == .error && $0.code != .payloadTooLarge }
        if let first = findings.first {
            throw GoogleError.invalidArgument("Invalid value at '\(first.error.path)': \(first.message)")
        }
        guard let message = document.root["message"] else { throw GoogleError.invalidArgument("Message is required.") }
        let targets = [("token", ""), ("fid", ""), ("topic", "/topics/"), ("condition", "")].compactMap { key, prefix in
            message[key]?.string.map { (key, prefix + $0, $0) }
        }
        guard targets.count == 1, let (kind, target, value) = targets.first else {
            throw GoogleError.invalidArgument("Exactly one of token, fid, topic or condition must be specified.")
        }
        guard body.count - value.utf8.count <= FCMLimits.messageSize + 64 else {
            throw GoogleError.invalidArgument("Message is too big. The maximum size is \(FCMLimits.messageSize) bytes.")
        }
        if kind == "token" || kind == "fid" {
            guard Self.isWellFormedToken(value) else {
                throw GoogleError.invalidArgument("The registration token is not a valid FCM registration token")
            }
            switch state.withLock({ $0.tokenStates[value] }) {
            case .unregistered?: throw GoogleError.forStatus(404, retryAfter: nil)
            case .senderIDMismatch?: throw GoogleError.forStatus(403, retryAfter: nil)
            case .active?, nil: break
            }
        }
        let validateOnly = document.root["validate_only"]?.bool ?? document.root["validateOnly"]?.bool ?? false
        let version = context.isHTTP2 ? "2" : "1.1"
        let name =
            validateOnly
            ? "projects/\(projectID)/messages/fake_message_id"
            : state.withLock { storage in
                storage.sequence += 1
                let name = "projects/\(projectID)/messages/\(storage.sequence)"
                if storage.deliveries.count >= deliveryCapacity { storage.deliveries.removeFirst(storage.deliveries.count / 2) }
                storage.deliveries.append(FCMDelivery(sequence: storage.sequence, name: name, target: target, body: body, httpVersion: version))
                return name
            }
        var json: [UInt8] = []
        try JSON.object([JSONMember("name", .string(name))]).write(into: &json)
        return Response.json(json)
    }

    /// `--benchmark`: the bearer token checked, then 200 to every send, nothing parsed or recorded.
    private func benchmarkSend(_ request: Request, project: String) async throws -> Response {
        try authorise(request, project: project)
        guard try await request.collectBytes(upTo: 64 << 10) != nil else {
            throw GoogleError(status: .contentTooLarge, canonical: "INVALID_ARGUMENT", message: "Request payload size exceeds the limit.")
        }
        let sequence = benchmarkSequence.add(1, ordering: .relaxed).newValue
        return Response.json(Array(#"{"name":"projects/\#(projectID)/messages/\#(sequence)"}"#.utf8))
    }

    /// What FCM's tokens are made of; long enough that a typo is not one.
    static func isWellFormedToken(_ token: String) -> Bool {
        isASCIIWord(token, lengths: 20...4096, punctuation: "-_:")
    }

    // MARK: Hooks

    /// A delivery as `GET /_emulator/deliveries` lists it.
    package static func hookJSON(_ delivery: FCMDelivery) -> JSON {
        let body = (try? RawJSON(bytes: delivery.body)).map(JSON.raw) ?? .string(String(decoding: delivery.body, as: UTF8.self))
        return .object([
            JSONMember("sequence", .number(JSONNumber(delivery.sequence))), JSONMember("name", .string(delivery.name)),
            JSONMember("target", .string(delivery.target)), JSONMember("httpVersion", .string(delivery.httpVersion)),
            JSONMember("body", body),
        ])
    }

    package static func faults(from bytes: [UInt8]) throws(HookRefusal) -> (faults: [FCMFault], after: Int) {
        var parser = JSONParser()
        guard let document = try? parser.parse(bytes), document.root.kind == .object else { throw HookRefusal(400, "the body is not a JSON object") }
        let root = document.root
        let count = root["count"]?.int ?? 1
        let after = root["after"]?.int ?? 0
        guard (1...maximumQueuedFaults).contains(count) else { throw HookRefusal(400, "count is 1 to \(maximumQueuedFaults)") }
        guard (0...1_000_000).contains(after) else { throw HookRefusal(400, "after is 0 to 1000000") }
        let fault: FCMFault
        if let status = root["status"]?.int {
            guard (400...599).contains(status) else { throw HookRefusal(400, "status is 400 to 599") }
            let retryAfter = root["retryAfter"]?.string
            if let retryAfter, !isASCIIWord(retryAfter, lengths: 1...64, punctuation: " ,:-") {
                throw HookRefusal(400, "retryAfter is seconds or an HTTP date")
            }
            fault = .status(status, retryAfter: retryAfter)
        } else if let milliseconds = root["delayMilliseconds"]?.int {
            guard milliseconds >= 0, Duration.milliseconds(milliseconds) <= maximumFaultDelay else {
                throw HookRefusal(400, "delayMilliseconds is 0 to \(maximumFaultDelay.components.seconds * 1000)")
            }
            fault = .connection(.delay(.milliseconds(milliseconds)))
        } else if let connection = root["connection"]?.string {
            fault = .connection(try ConnectionFault(hookName: connection))
        } else {
            throw HookRefusal(400, "give status, delayMilliseconds or connection")
        }
        return (Array(repeating: fault, count: count), after)
    }
}

/// Google's error answer: `{"error": {"code", "message", "status", "details": [FcmError]}}`.
struct GoogleError: HTTPResponseError {
    let status: HTTPResponse.Status
    /// The canonical status: `INVALID_ARGUMENT`, `NOT_FOUND`, `UNAUTHENTICATED`, …
    let canonical: String
    let message: String
    /// `FcmError.errorCode`, when FCM gives one.
    var fcmCode: String?
    var retryAfter: String?

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var error = [
            JSONMember("code", .number(JSONNumber(Int(status.code)))), JSONMember("message", .string(message)),
            JSONMember("status", .string(canonical)),
        ]
        if let fcmCode {
            error.append(
                JSONMember(
                    "details",
                    .array([
                        .object([
                            JSONMember("@type", .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")),
                            JSONMember("errorCode", .string(fcmCode)),
                        ])
                    ])))
        }
        var json: [UInt8] = []
        try? JSON.object([JSONMember("error", .object(error))]).write(into: &json)
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let retryAfter { headers[.retryAfter] = retryAfter }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }

    static func invalidArgument(_ message: String) -> GoogleError {
        GoogleError(status: .badRequest, canonical: "INVALID_ARGUMENT", message: message, fcmCode: "INVALID_ARGUMENT")
    }

    static let unauthenticated = GoogleError(
        status: .unauthorized, canonical: "UNAUTHENTICATED",
        message:
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")

    /// What FCM answers for a status a fault asks for.
    static func forStatus(_ status: Int, retryAfter: String?) -> GoogleError {
        let (canonical, code, message) =
            switch status {
            case 429: ("RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded for the project's sending rate.")
            case 500: ("INTERNAL", "INTERNAL", "Internal error encountered.")
            case 503: ("UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable.")
            case 400: ("INVALID_ARGUMENT", "INVALID_ARGUMENT", "Request contains an invalid argument.")
            case 401: ("UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", "Auth error from APNS or Web Push Service")
            case 403: ("PERMISSION_DENIED", "SENDER_ID_MISMATCH", "SenderId mismatch")
            case 404: ("NOT_FOUND", "UNREGISTERED", "Requested entity was not found.")
            default: ("UNKNOWN", "UNSPECIFIED_ERROR", "Unknown error.")
            }
        return GoogleError(status: .init(code: status), canonical: canonical, message: message, fcmCode: code, retryAfter: retryAfter)
    }
}

/// The token endpoint's refusal: `{"error": "invalid_grant", "error_description": …}`.
struct TokenRefusal: HTTPResponseError {
    let error: String
    let detail: String
    var status: HTTPResponse.Status { .badRequest }

    init(_ error: String = "invalid_grant", _ detail: String) {
        self.error = error
        self.detail = detail
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var json: [UInt8] = []
        try? JSON.object([JSONMember("error", .string(error)), JSONMember("error_description", .string(detail))]).write(into: &json)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
