import Foundation
import NIOCore
import PushInternals

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP proxy that APNs connections tunnel through (`CONNECT host:port`), with optional Basic
/// credentials. TLS runs end to end inside the tunnel: the proxy sees only the host and port.
public struct APNsProxy: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `http://[user:password@]host[:port]` (the port defaults to 80), as `HTTPS_PROXY` holds it;
    /// the credentials percent-decoded.
    public init(url: String) throws(APNsProxyError) {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "http",
            let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/", components.query == nil
        else { throw APNsProxyError("a proxy is http://[user:password@]host[:port]") }
        guard (1...65_535).contains(components.port ?? 80) else { throw APNsProxyError("the proxy's port is 1 to 65535") }
        self.init(host: host, port: components.port ?? 80, username: components.user, password: components.password)
    }

    /// The proxy `HTTPS_PROXY` (or `https_proxy`) names for `endpoint` (`https://host[:port]`),
    /// unless `NO_PROXY` (or `no_proxy`) exempts it, as curl reads it: `*`, or a comma-separated
    /// list of hosts and domain suffixes (`apple.com`, `.push.apple.com`), each with an optional
    /// `:port` that must then match too, and IP addresses or CIDR ranges (`127.0.0.0/8`,
    /// `[::1]`, `fd00::/8`) that match an endpoint given by its address. An empty variable counts
    /// as unset, so it does not hide the other spelling.
    /// - Returns: nil when no proxy applies.
    /// - Throws: ``APNsProxyError`` when the variable is set but is not a proxy address.
    public static func fromEnvironment(
        for endpoint: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(APNsProxyError) -> APNsProxy? {
        func variable(_ names: String...) -> String? { names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty } }
        guard let url = variable("HTTPS_PROXY", "https_proxy") else { return nil }
        let origin = APNsClient.origin(of: endpoint) ?? (endpoint, 443)
        let exempt = (variable("NO_PROXY", "no_proxy") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        for entry in exempt where !entry.isEmpty {
            if NoProxyEntry(entry).exempts(host: origin.host.lowercased(), port: origin.port) { return nil }
        }
        do {
            return try APNsProxy(url: url)
        } catch {
            throw APNsProxyError("HTTPS_PROXY: \(error.message)")
        }
    }

    /// `host:port`, and whether credentials are set; never the password.
    public var description: String {
        "\(host):\(port)\(username == nil ? "" : " (with credentials)")"
    }

    /// A connection's failure that names this proxy and what it did, never its credentials.
    func failure(_ problem: String) -> APNsTransportFailure {
        .proxy("proxy \(host):\(port) \(problem)")
    }

    var basicCredentials: String? {
        guard let username else { return nil }
        return Base64.encodedString("\(username):\(password ?? "")".utf8)
    }
}

/// A proxy setting that cannot be used.
public struct APNsProxyError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Asks the proxy for a tunnel to `target` as the connection comes up; once it answers 200, hands
/// the pipeline to `established` (TLS and HTTP/2 go in) and leaves. Any other answer fails the
/// connection with the proxy's status line, through `refused`.
final class HTTPConnectTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The proxy's answer head may be at most this long.
    static let maximumHeadLength = 16 << 10

    let proxy: APNsProxy
    let target: String
    let established: (ChannelPipeline.SynchronousOperations) throws -> Void
    let refused: (APNsTransportFailure) -> Void
    private var head = ByteBuffer()
    private var asked = false
    private var done = false

    init(
        proxy: APNsProxy, target: String, established: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void,
        refused: @escaping (APNsTransportFailure) -> Void
    ) {
        self.proxy = proxy
        self.target = target
        self.established = established
        self.refused = refused
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { ask(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        ask(context: context)
        context.fireChannelActive()
    }

    private func ask(context: ChannelHandlerContext) {
        guard !asked else { return }
        asked = true
        var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let credentials = proxy.basicCredentials { request += "Proxy-Authorization: Basic \(credentials)\r\n" }
        request += "\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        var bytes = unwrapInboundIn(data)
        head.writeBuffer(&bytes)
        let view = head.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if head.readableBytes > Self.maximumHeadLength { fail(context: context, "sent an answer head longer than 16 KiB") }
            return
        }
        // The status line ends at the first CR or LF: a proxy's bare CR or LF ends it too, so
        // nothing after it reaches a message.
        let lineEnd = view[..<end.lowerBound].firstIndex { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") } ?? end.lowerBound
        let statusLine = String(decoding: view[view.startIndex..<lineEnd], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            fail(context: context, "did not answer CONNECT in HTTP/1.1")
            return
        }
        guard (200..<300).contains(status) else {
            fail(context: context, "refused the tunnel: \(escapingControls(statusLine.dropFirst(parts[0].count + 1).prefix(100)))")
            return
        }
        done = true
        head.moveReaderIndex(to: head.readerIndex + (end.upperBound - view.startIndex))
        let rest = head
        do {
            try established(context.pipeline.syncOperations)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            // Bytes after the head belong to TLS (a proxy sends none before the client speaks).
            if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        } catch {
            context.fireErrorCaught(error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done { refused(proxy.failure("closed the connection before the tunnel opened")) }
        context.fireChannelInactive()
    }

    private func fail(context: ChannelHandlerContext, _ problem: String) {
        done = true
        refused(proxy.failure(problem))
        context.close(promise: nil)
    }
}

/// One entry of `NO_PROXY`.
struct NoProxyEntry {
    let entry: String

    init(_ entry: String) { self.entry = entry }

    func exempts(host: String, port: Int) -> Bool {
        if entry == "*" { return true }
        // An address range: matches an endpoint given by its address.
        if let slash = entry.firstIndex(of: "/") {
            guard let prefix = Int(entry[entry.index(after: slash)...]), let network = ipAddressBytes(String(entry[..<slash])),
                let address = ipAddressBytes(host), network.count == address.count, (0...network.count * 8).contains(prefix)
            else { return false }
            return Self.samePrefix(network, address, bits: prefix)
        }
        // A host or address, with an optional port: `example.com:443`, `[::1]:8443`, `::1`.
        var name = Substring(entry)
        var entryPort: Int?
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            let rest = name[name.index(after: close)...]
            if rest.hasPrefix(":") { entryPort = Int(rest.dropFirst()) }
            name = name[name.index(after: name.startIndex)..<close]
        } else if name.count(where: { $0 == ":" }) == 1, let colon = name.firstIndex(of: ":") {
            entryPort = Int(name[name.index(after: colon)...])
            name = name[..<colon]
        }
        if let entryPort, entryPort != port { return false }
        if let address = ipAddressBytes(String(name)) { return ipAddressBytes(host) == address }
        let domain = name.hasPrefix(".") ? name.dropFirst() : name
        return !domain.isEmpty && (host == domain || host.hasSuffix("." + domain))
    }

    static func samePrefix(_ first: [UInt8], _ second: [UInt8], bits: Int) -> Bool {
        for index in 0..<first.count {
            let covered = min(max(bits - index * 8, 0), 8)
            guard covered > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - covered))
            if first[index] & mask != second[index] & mask { return false }
        }
        return true
    }
}
