import APNsEmulator
import Foundation
import InMemoryTracing
import NIOHTTP1
import Testing
import Tracing

/// The one tracer of this test process: tracing is bootstrapped once per process, so each test
/// follows its own trace id.
private let tracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// In a process of its own (`make test` runs it so, with `PUSHCORE_TRACING_TESTS=1`): beside the
/// other suites, the tracer would trace their requests too, and every backend they start after it
/// would install the tracing middleware.
@Suite(
    "push-backend tracing",
    .enabled(if: ProcessInfo.processInfo.environment["PUSHCORE_TRACING_TESTS"] == "1", "bootstraps a process-wide tracer; runs alone"))
struct TracingTests {
    @Test("A request's span joins the caller's trace (sent in its headers); the store calls and the hub call are its children")
    func spans() async throws {
        let tracer = tracer
        try await withBackend(overSockets: true) { backend in
            // AsyncHTTPClient traces its requests too and sends the trace in their headers.
            let caller = try #require(startSpan("caller") as? InMemorySpan)
            let created = try await InstrumentationContext.$current.withValue(caller.context) {
                try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "traced"}"#)
            }
            caller.end()
            let traceID = caller.traceID
            #expect(created.status == 201)

            // The request's span ends once its response is written, which may be after the client read it.
            var spans = tracer.finishedSpans.filter { $0.traceID == traceID }
            let deadline = ContinuousClock.now + .seconds(5)
            while !spans.contains(where: { $0.kind == .server }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
                spans = tracer.finishedSpans.filter { $0.traceID == traceID }
            }
            let request = try #require(spans.first { $0.kind == .server })
            #expect(request.kind == .server && request.operationName == "/api/notifications")
            let children = spans.filter { $0.parentSpanID == request.spanID }
            let names = Set(children.map(\.operationName))
            #expect(names.isSuperset(of: ["store.user", "store.add_notification", "push.notification"]), "\(names)")
            for child in children { #expect(child.kind == .client) }
            // The hub client's own span (AsyncHTTPClient's) sits under the push's.
            let push = try #require(children.first { $0.operationName == "push.notification" })
            #expect(spans.contains { $0.parentSpanID == push.spanID && $0.operationName == "POST" })
            let store = try #require(children.first { $0.operationName == "store.add_notification" })
            #expect(store.attributes["db.system"]?.toSpanAttribute() == "sqlite")
            // Nothing the caller sent secretly shows in a span.
            #expect(!"\(spans)".contains("traced") && !"\(spans)".contains("Basic"))
        }
    }

    @Test("A queued notification's delivery job, worked after the request, is a span of the request's trace; its sends are its children")
    func deliveryJob() async throws {
        let tracer = tracer
        try await withAPNsBackend { backend in
            let device = String(repeating: "ab", count: 32)
            _ = try backend.created(try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(device)"}"#))
            let caller = try #require(startSpan("caller") as? InMemorySpan)
            let created = try await InstrumentationContext.$current.withValue(caller.context) {
                try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "traced"}"#)
            }
            caller.end()
            #expect(created.status == 201 && backend.emulator.deliveries.count == 1)
            // The job's span is started from what the store kept, not from the worker's task.
            let spans = tracer.finishedSpans.filter { $0.traceID == caller.traceID }
            let job = try #require(spans.first { $0.operationName == "delivery.job" }, "\(spans.map(\.operationName))")
            #expect(job.kind == .consumer && job.attributes["push.attempt"]?.toSpanAttribute() == 1)
            let send = try #require(spans.first { $0.parentSpanID == job.spanID && $0.operationName == "delivery.apns" })
            #expect(send.attributes["push.devices"]?.toSpanAttribute() == 1)
            #expect(!"\(spans)".contains("traced"))
        }
    }
}
