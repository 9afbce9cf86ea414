import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NotificationHubs
import PushCore
import PushFCM
import PushInternals
import PushServerSupport
import Synchronization

// Installations: PUT, PATCH, GET and DELETE `/{hub}/installations/{id}`.
extension HubEmulator {
    func installation(method: HTTPRequest.Method, hub: String, id: String, body: [UInt8], trackingID: String) throws -> Response {
        switch method {
        case .put:
            let installation: Installation
            do throws(NotificationHubError) {
                installation = try Installation(json: body)
                try installation.validate()
            } catch {
                throw HubError(400, "Invalid installation: \(error.message)", trackingID: trackingID)
            }
            guard installation.installationID == id else {
                throw HubError(400, "The installationId in the body must match the URI.", trackingID: trackingID)
            }
            state.withLock { $0.installations[hub, default: [:]][id] = Self.stored(installation) }
            return .hub(.ok, trackingID: trackingID)
        case .get:
            guard let installation = state.withLock({ $0.installations[hub]?[id] }) else {
                throw HubError(404, "Installation not found.", trackingID: trackingID)
            }
            var json: [UInt8] = []
            try? Self.answered(installation).write(into: &json)
            var response = Response.json(json)
            response.headers[.trackingID] = trackingID
            return response
        case .delete:
            state.withLock { _ = $0.installations[hub]?.removeValue(forKey: id) }
            return .hub(.noContent, trackingID: trackingID)
        case .patch:
            guard var installation = state.withLock({ $0.installations[hub]?[id] }) else {
                throw HubError(404, "Installation not found.", trackingID: trackingID)
            }
            guard let document = parsedJSON(body), document.root.kind == .array else {
                throw HubError(400, "A JSON Patch document is an array of operations.", trackingID: trackingID)
            }
            for operation in document.root.elements {
                guard let op = operation["op"]?.string, let path = operation["path"]?.string else {
                    throw HubError(400, "Each operation needs op and path.", trackingID: trackingID)
                }
                let value = operation["value"]
                switch (op, path) {
                case ("add", "/tags"): if let tag = value?.string, !installation.tags.contains(tag) { installation.tags.append(tag) }
                case ("remove", _) where path.hasPrefix("/tags/"): installation.tags.removeAll { $0 == String(path.dropFirst(6)) }
                case ("replace", "/tags"): installation.tags = value?.elements.compactMap { $0.string } ?? []
                case ("replace", "/pushChannel"): installation.pushChannel = value?.string ?? installation.pushChannel
                case ("replace", "/userId"): installation.userID = value?.string
                case ("add", _) where path.hasPrefix("/templates/"):
                    guard let text = value?.string, let document = parsedJSON(Array(text.utf8)),
                        let template = Installation.Template(json: document.root)
                    else {
                        throw HubError(400, "A template is a JSON text with a body.", trackingID: trackingID)
                    }
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = template
                case ("remove", _) where path.hasPrefix("/templates/"):
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = nil
                default:
                    throw HubError(400, "Unsupported operation \(op) \(path).", trackingID: trackingID)
                }
            }
            do throws(NotificationHubError) {
                try installation.validate()
            } catch {
                throw HubError(400, "Invalid installation after the patch: \(error.message)", trackingID: trackingID)
            }
            state.withLock { $0.installations[hub, default: [:]][id] = Self.stored(installation) }
            return .hub(.ok, trackingID: trackingID)
        default:
            throw HubError(405, "\(method.rawValue) is not allowed on an installation.", trackingID: trackingID)
        }
    }
}
