// A stand-in for swift-openapi-urlsession, which the package builds on Apple platforms only: its
// transport, as the library declares it.
public import Foundation
public import HTTPTypes
public import OpenAPIRuntime

public struct URLSessionTransport: ClientTransport {
    public init() {}

    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        fatalError("stand-in")
    }
}
