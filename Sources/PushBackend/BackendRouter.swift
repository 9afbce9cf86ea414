import HTTPTypes
package import Hummingbird
import HummingbirdAuth
import Metrics
import NIOCore
import OpenAPIRuntime
import PushCore
import Tracing

extension BackendAPI {
    /// The router: request logging around everything, exact paths; the operations generated from
    /// `openapi.yaml` (``APIProtocol``), each on the group whose middleware it needs; the three
    /// written by hand; and the 405 answers derived from the routes all of them added.
    package func router() throws -> Router<Context> {
        let router = Router(context: Context.self)
        // Outermost, so that they see the answer RequestLogging makes of an error; and only when
        // the process bootstrapped a metrics backend or a tracer, since even with none they cost
        // about a tenth of the requests a loaded server answers.
        if !(MetricsSystem.factory is NOOPMetricsHandler) { router.add(middleware: MetricsMiddleware()) }
        if !(InstrumentationSystem.tracer is NoOpTracer) { router.add(middleware: TracingMiddleware()) }
        router.add(middleware: RequestLogging())
        router.add(middleware: ExactPaths())

        // The document's operations without security (the contract and the probes) are the ones
        // outside /api. Live Activities and channels need APNs delivery, and all but registering a
        // token need the sender role. The generated handlers read the context from RequestScope,
        // set innermost, once the caller is known.
        let authenticated = router.group().add(middleware: CallerAuthentication(authenticator: authenticator))
        let apns = authenticated.group().add(middleware: RequireDirectAPNs(delivery: delivery))
        let senders = apns.group().add(middleware: RequireSenderRole())
        let scoped = [router.group(), authenticated.group(), apns.group(), senders.group()].map { $0.add(middleware: RequestScope.Middleware()) }
        let (open, api, activities, senderOnly) = (scoped[0], scoped[1], scoped[2], scoped[3])
        let transport = GroupedTransport { path in
            if !path.hasPrefix("/api/") { return open }
            if path.hasPrefix("/api/channels") || (path.hasPrefix("/api/activities/") && path.hasSuffix("/updates")) { return senderOnly }
            return path.hasPrefix("/api/activities") ? activities : api
        }
        // Compact JSON, in a stable order: the runtime's default pretty-prints, a third more bytes for no reader.
        try registerHandlers(on: transport, configuration: Configuration(jsonEncodingOptions: [.sortedKeys]), middlewares: [ContractInput()])

        // By hand (docs/backend.md says why): the upload, stored as it streams in, and the fetch,
        // which authenticates itself, reading the caller and the notification together.
        api.post("api/images") { request, context in try await uploadImage(request, caller: context.caller) }
        router.get("api/notifications/{id}") { request, context in
            try await fetch(id: context.parameters.require("id"), request: request, context: context)
        }
        router.head("api/notifications/{id}") { request, context in
            try await fetch(id: context.parameters.require("id"), request: request, context: context)
        }

        // Added last, it wraps only the answer for requests no route matched (see AllowedMethods).
        router.add(middleware: AllowedMethods(router.routes))
        return router
    }
}

/// Live Activities and channels are APNs features: a server sending through a hub answers 501.
struct RequireDirectAPNs: RouterMiddleware {
    typealias Context = BackendRequestContext
    let delivery: any PushDeliverer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard delivery.apns != nil else { throw APIError.apnsDeliveryRequired }
        return try await next(request, context)
    }
}

/// Routes only users with the sender role may call: 403 for anyone else.
struct RequireSenderRole: RouterMiddleware {
    typealias Context = BackendRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard try context.caller.role == .sender else { throw APIError(status: 403, code: .forbidden, "this needs the sender role") }
        return try await next(request, context)
    }
}
