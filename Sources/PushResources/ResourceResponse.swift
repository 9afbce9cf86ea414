/// How to answer a `GET` or `HEAD` for a resource: status, the bytes to send, and the headers,
/// after evaluating `If-None-Match`, `If-Range` and `Range` in the order RFC 9110 §13.2.2 gives.
public struct ResourceResponse: Hashable, Sendable {
    public struct Header: Hashable, Sendable {
        public let name: String
        public let value: String
    }

    /// 200, 206, 304 or 416.
    public let status: Int
    /// The resource's bytes to send as the body; empty for 304 and 416 (and for `HEAD`, send none).
    public let bodyRange: Range<Int>
    /// `ETag`, `Accept-Ranges`, and as the status needs `Content-Type`, `Content-Length`, `Content-Range`.
    public let headers: [Header]

    /// - Parameters:
    ///   - length: the resource's size in bytes.
    ///   - entityTag: its strong entity tag.
    ///   - contentType: sent with 200 and 206.
    ///   - range: the request's `Range` header, if any (see ``ByteRangeSet`` for the policy).
    ///   - ifNoneMatch: the request's `If-None-Match` header, if any.
    ///   - ifRange: the request's `If-Range` header, if any.
    public init(
        length: Int, entityTag: EntityTag, contentType: ContentType,
        range: String? = nil, ifNoneMatch: String? = nil, ifRange: String? = nil
    ) {
        var headers = [Header(name: "ETag", value: entityTag.headerValue), Header(name: "Accept-Ranges", value: "bytes")]
        if let ifNoneMatch, entityTag.matches(ifNoneMatch: ifNoneMatch) {
            self.status = 304
            self.bodyRange = 0..<0
            self.headers = headers
            return
        }
        // A Range whose If-Range validator does not match is ignored: the client's copy is stale.
        let rangeApplies = ifRange.map { entityTag.matches(ifRange: $0) } ?? true
        switch ByteRangeSet.resolve(rangeApplies ? range : nil, length: length) {
        case .full:
            status = 200
            bodyRange = 0..<length
            headers.append(Header(name: "Content-Type", value: contentType.mediaType))
            headers.append(Header(name: "Content-Length", value: String(length)))
        case .partial(let bytes):
            status = 206
            bodyRange = bytes
            headers.append(Header(name: "Content-Type", value: contentType.mediaType))
            headers.append(Header(name: "Content-Length", value: String(bytes.count)))
            headers.append(Header(name: "Content-Range", value: "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(length)"))
        case .unsatisfiable:
            status = 416
            bodyRange = 0..<0
            headers.append(Header(name: "Content-Range", value: "bytes */\(length)"))
        }
        self.headers = headers
    }

    /// The value of the first header with this name (compared case-insensitively).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
