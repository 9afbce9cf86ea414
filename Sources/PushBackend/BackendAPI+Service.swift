import HTTPTypes
import OpenAPIRuntime

/// The `contract` and `probes` tags: what the process serves about itself, without
/// authentication: the API's contract, and the probes of an orchestrator (`/health`: the process
/// answers; `/ready`: its store answers too).
extension BackendAPI {
    /// `GET /openapi.yaml`: the document as this server's delivery serves it.
    func getContract(_ input: Operations.GetContract.Input) async throws -> Operations.GetContract.Output {
        .ok(.init(body: .yaml(HTTPBody(contract))))
    }

    /// `GET /health`: asks nothing of the store, so a slow one does not get the process restarted.
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    /// `GET /ready`: one round trip to the store; 503 `storageUnavailable` while it fails.
    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        do throws(StoreError) {
            try await store.checkAvailable()
        } catch {
            var refusal = APIError(status: 503, code: .storageUnavailable, "the database does not answer", headers: [("Retry-After", "1")])
            refusal.detail = error.description
            throw refusal
        }
        return .ok(.init(body: .json(.init(status: .ready))))
    }
}
