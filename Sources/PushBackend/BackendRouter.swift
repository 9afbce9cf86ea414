import HTTPTypes
package import Hummingbird
import HummingbirdAuth
import Metrics
import NIOCore
import PushCore
import Tracing

extension BackendAPI {
    /// The router: request logging around everything, exact paths, the probes and the contract,
    /// the API's controllers behind Basic authentication, and the 405 answers derived from the
    /// routes those controllers added.
    package func router() -> Router<Context> {
        let router = Router(context: Context.self)
        // Outermost, so that they see the answer RequestLogging makes of an error; and only when
        // the process bootstrapped a metrics backend or a tracer, since even with none they cost
        // about a tenth of the requests a loaded server answers.
        if !(MetricsSystem.factory is NOOPMetricsHandler) { router.add(middleware: MetricsMiddleware()) }
        if !(InstrumentationSystem.tracer is NoOpTracer) { router.add(middleware: TracingMiddleware()) }
        router.add(middleware: RequestLogging())
        router.add(middleware: ExactPaths())

        ServiceController(api: self).addRoutes(to: router)
        let api = router.group("api").add(middleware: CallerAuthentication(authenticator: authenticator))
        RegistrationsController(api: self).addRoutes(to: api.group("register"))
        NotificationsController(api: self).addRoutes(to: api.group("notifications"))
        ImagesController(api: self).addRoutes(to: api.group("images"))
        // The busiest routes authenticate themselves, reading the caller and the notification together.
        NotificationsController(api: self).addFetchRoutes(to: router.group("api/notifications"))
        let apns = api.add(middleware: RequireDirectAPNs(delivery: delivery))
        ActivitiesController(api: self).addRoutes(to: apns.group("activities"))
        ChannelsController(api: self).addRoutes(to: apns.group("channels").add(middleware: RequireSenderRole()))

        // Added last, it wraps only the answer for requests no route matched (see AllowedMethods).
        router.add(middleware: AllowedMethods(router.routes))
        return router
    }
}

/// What the process serves about itself, without authentication: the API's contract and the
/// probes of an orchestrator (`/health`: the process answers; `/ready`: its store answers too).
struct ServiceController {
    let api: BackendAPI

    func addRoutes(to router: Router<BackendAPI.Context>) {
        let contract = Contract.document(withLiveActivities: api.delivery.apns != nil)
        let contractHeaders: HTTPFields = [.contentType: "application/yaml", .contentLength: String(contract.count)]
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: contractHeaders, body: ResponseBody(byteBuffer: ByteBuffer(bytes: contract)))
        }
        router.head("openapi.yaml") { _, _ in Response(status: .ok, headers: contractHeaders) }
        router.get("health") { _, _ in Response.json(200, .object([JSONMember("status", "ok")])) }
        router.get("ready") { _, _ in
            do throws(StoreError) {
                try await api.store.checkAvailable()
            } catch {
                var refusal = APIError(status: 503, code: .storageUnavailable, "the database does not answer", headers: [("Retry-After", "1")])
                refusal.detail = error.description
                throw refusal
            }
            return Response.json(200, .object([JSONMember("status", "ready")]))
        }
    }
}

/// `/api/register`: a device's token, registered to the caller and unregistered by its id.
struct RegistrationsController {
    let api: BackendAPI

    func addRoutes(to group: RouterGroup<BackendAPI.Context>) {
        group.post { request, context in
            var request = request
            return try await api.register(RequestBody.object(of: &request), caller: context.caller)
        }
        group.delete(":id") { _, context in
            try await api.unregister(id: context.parameters.require("id"), caller: context.caller)
        }
    }
}

/// `/api/notifications`: sending, listing, and fetching what a push names.
struct NotificationsController {
    let api: BackendAPI

    func addRoutes(to group: RouterGroup<BackendAPI.Context>) {
        group.post { request, context in
            var request = request
            return try await api.send(NotificationRequest(RequestBody.object(of: &request)), caller: context.caller, logger: context.logger)
        }
        group.get { request, context in
            try await api.list(query: request.uri.query ?? "", caller: context.caller)
        }
        group.put(":id/read") { _, context in
            try await api.markRead(id: context.parameters.require("id"), caller: context.caller)
        }
    }

    /// `GET|HEAD /{id}`, without the authentication middleware: ``BackendAPI/fetch(id:request:context:)`` authenticates.
    func addFetchRoutes(to group: RouterGroup<BackendAPI.Context>) {
        group.get(":id") { request, context in
            try await api.fetch(id: context.parameters.require("id"), request: request, context: context)
        }
        group.head(":id") { request, context in
            try await api.fetch(id: context.parameters.require("id"), request: request, context: context)
        }
    }
}

/// `/api/activities`: ActivityKit tokens, registered by their owners and updated by senders.
struct ActivitiesController {
    let api: BackendAPI

    func addRoutes(to group: RouterGroup<BackendAPI.Context>) {
        group.post { request, context in
            var request = request
            return try await api.registerActivity(RequestBody.object(of: &request), caller: context.caller)
        }
        group.delete(":id") { _, context in
            guard try await api.store.deleteActivity(id: context.parameters.require("id"), owner: context.caller.name) else {
                throw APIError.notFound("no such activity")
            }
            return Response(status: .noContent)
        }
        group.add(middleware: RequireSenderRole()).post(":id/updates") { request, context in
            var request = request
            let body = try await RequestBody.object(of: &request)
            return try await api.updateActivity(
                id: context.parameters.require("id"), LiveActivityRequest(body), caller: context.caller, logger: context.logger)
        }
    }
}

/// `/api/channels`: broadcast channels, for senders.
struct ChannelsController {
    let api: BackendAPI

    func addRoutes(to group: RouterGroup<BackendAPI.Context>) {
        group.post { request, context in
            var request = request
            return try await api.createChannel(RequestBody.object(of: &request), caller: context.caller)
        }
        group.delete(":id") { _, context in
            try await api.deleteChannel(id: context.parameters.require("id"), caller: context.caller)
        }
        group.post(":id/broadcasts") { request, context in
            var request = request
            let body = try await RequestBody.object(of: &request)
            return try await api.broadcast(id: context.parameters.require("id"), LiveActivityRequest(body), caller: context.caller)
        }
    }
}

/// Live Activities and channels are APNs features: a server sending through a hub answers 501.
struct RequireDirectAPNs: RouterMiddleware {
    typealias Context = BackendRequestContext
    let delivery: any PushDeliverer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard delivery.apns != nil else {
            throw APIError(
                status: 501, code: .apnsDeliveryRequired, "Live Activities and channels need APNs delivery; this server sends through a hub")
        }
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
