import Foundation
import HTTPTypes
package import Hummingbird
import NIOCore
import NotificationHubs
import PushCore
import PushFCM
import PushInternals
import PushServerSupport
import Synchronization

/// A request to the emulator: Hummingbird's context, and for hub routes the tracking id of the
/// answer and the verified token.
package struct HubRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    var trackingID = ""
    var token: SASTokenInfo?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// The hub the route names, as ``HubGate`` found it.
    var hub: String { get throws { try parameters.require("hub") } }
}

/// How the hub refuses a request: `<Error><Code>…</Code><Detail>… TrackingId:…</Detail></Error>`.
struct HubError: HTTPResponseError {
    let status: HTTPResponse.Status
    let detail: String
    let trackingID: String
    var retryAfter: String?

    init(_ status: Int, _ detail: String, trackingID: String, retryAfter: String? = nil) {
        self.status = .init(code: status)
        self.detail = detail
        self.trackingID = trackingID
        self.retryAfter = retryAfter
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let escaped = xmlEscaped(detail)
        var fields: HTTPFields = [.contentType: "application/xml; charset=utf-8", .trackingID: trackingID]
        if let retryAfter { fields[.retryAfter] = retryAfter }
        let body = "<Error><Code>\(status.code)</Code><Detail>\(escaped) TrackingId:\(trackingID)</Detail></Error>"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// In front of every hub route, matched or not, in the order the service checks: the hub exists,
/// a queued fault answers instead, the SAS token is valid for the namespace's URI of the path;
/// then a path no route takes is 404. The test hooks under `/_emulator` pass straight through.
struct HubGate: RouterMiddleware {
    typealias Context = HubRequestContext
    let emulator: HubEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let firstSegment = path.split(separator: "/").first.map { $0.removingPercentEncoding ?? String($0) }
        if firstSegment == "_emulator" {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                throw HookRefusal(404, "no such test hook")
            }
        }
        var context = context
        context.trackingID = UUID().uuidString.lowercased()
        let trackingID = context.trackingID
        guard let hubName = firstSegment, let hub = emulator.hubs[hubName], let verifier = emulator.verifiers[hubName] else {
            throw HubError(404, "The hub \(firstSegment ?? "") does not exist in this namespace.", trackingID: trackingID)
        }
        var request = request
        let body = Array(try await request.collectBody(upTo: 1 << 20).readableBytesView)
        var headers: [String: String] = [:]
        for field in request.headers where field.name != .authorization {
            headers[field.name.canonicalName, default: ""] += (headers[field.name.canonicalName] == nil ? "" : ", ") + field.value
        }
        let record = HubRequestRecord(
            method: request.method.rawValue, target: request.uri.path + (request.uri.query.map { "?" + $0 } ?? ""), headers: headers, body: body)
        let fault = emulator.state.withLock { storage -> Fault? in
            storage.requests += 1
            if storage.requestLog.count == HubEmulator.requestLogCapacity { storage.requestLog.removeFirst() }
            storage.requestLog.append(record)
            return storage.faults.next()
        }
        switch fault {
        case .status(let status, let retryAfter)?:
            throw HubError(status, "Injected fault.", trackingID: trackingID, retryAfter: retryAfter)
        case .delay(let delay)?:
            try? await Task.sleep(for: delay)
        case nil:
            break
        }
        // Every request is signed for the namespace's https URI, whatever address it came to.
        do throws(SASError) {
            context.token = try verifier.verify(
                request.headers[.authorization] ?? "", uri: "https://\(hub.connection.host)\(path)", now: emulator.clock.now())
        } catch {
            let reason = error.code == .expired ? "ExpiredToken" : "InvalidSignature"
            throw HubError(401, "\(reason): \(error.message)", trackingID: trackingID)
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw HubError(404, "No route for \(request.method.rawValue) \(path).", trackingID: trackingID)
        }
    }
}

extension HTTPField.Name {
    static let trackingID = HTTPField.Name("TrackingId")!
}

extension Response {
    /// A hub's answer without a body.
    static func hub(_ status: HTTPResponse.Status, trackingID: String) -> Response {
        Response(status: status, headers: [.trackingID: trackingID])
    }
}

extension HubEmulator {
    /// The routes: the test hooks, then the hub's routes behind ``HubGate``.
    package func router() -> Router<HubRequestContext> {
        let router = Router(context: HubRequestContext.self)
        router.add(middleware: HubGate(emulator: self))

        let hooks = router.group("_emulator")
        hooks.addRecordingHooks(for: self)
        // Off in a demo, where anyone on the machine reaches the port: moving the clock would
        // release every scheduled send at once.
        if allowsFaultInjection {
            hooks.addFaultHook(for: self)
            hooks.post("clock") { [self] request, _ in try await advanceClock(body(of: request)) }
        }

        let hub = router.group(":hub")
        hub.post("messages") { [self] request, context in try await send(request, context: context, batch: false) }
        hub.get("messages/:id") { [self] request, context in
            try notificationDetails(request, hub: context.hub, id: try context.parameters.require("id"), trackingID: context.trackingID)
        }
        hub.post("schedulednotifications") { [self] request, context in try await schedule(request, context: context) }
        hub.delete("schedulednotifications/:id") { [self] _, context in
            try cancelScheduled(hub: context.hub, id: try context.parameters.require("id"), trackingID: context.trackingID)
        }
        hub.post("messages/$batch") { [self] request, context in try await send(request, context: context, batch: true) }
        for method in [HTTPRequest.Method.put, .patch, .get, .delete, .post, .head, .options] {
            hub.on("installations/:id", method: method) { [self] request, context in
                let id = try context.parameters.require("id")
                return try await installation(
                    method: request.method, hub: context.hub, id: id.removingPercentEncoding ?? id, body: body(of: request),
                    trackingID: context.trackingID)
            }
        }
        return router
    }

    func body(of request: Request) async throws -> [UInt8] {
        var request = request
        return Array(try await request.collectBody(upTo: 1 << 20).readableBytesView)
    }
}

/// Text as XML character data.
func xmlEscaped(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
}

/// The document for `bytes`, or nil when they are not JSON.
func parsedJSON(_ bytes: some Collection<UInt8>) -> JSONDocument? {
    var parser = JSONParser()
    return try? parser.parse(Array(bytes))
}
