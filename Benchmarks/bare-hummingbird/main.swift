import Foundation
import Hummingbird
import Logging
import PushResources
import RichPushImages

// `make load`'s baseline: Hummingbird answering the bodies push-backend answers, with none of its
// work (authentication, the store, the request log), on the same machine in the same run.
// Prints "listening on http://127.0.0.1:PORT" once it listens; SIGTERM stops it.
let image = ByteBuffer(bytes: try RichPushImages.registry.resource(named: "sunset.png").bytes)
let secure = ByteBuffer(string: #"{"Payload":"load"}"#)

let router = Router()
router.get("image") { _, _ in
    Response(status: .ok, headers: [.contentType: "image/png"], body: ResponseBody(byteBuffer: image))
}
router.get("secure") { _, _ in
    Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: secure))
}
var logger = Logger(label: "bare-hummingbird")
logger.logLevel = .warning
let application = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: "bare-hummingbird"),
    onServerRunning: { channel in
        print("listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)")
        fflush(nil)
    },
    logger: logger)
try await application.runService()
