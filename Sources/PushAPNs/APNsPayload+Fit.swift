import PushJSON

/// How ``APNsPayload/fit(limit:options:)`` shortens alert text.
public struct APNsFitOptions: Sendable, Hashable {
    /// Appended to shortened text; its escaped bytes are counted.
    public var ellipsis: String
    /// Cut at the end of the last whole word that fits, when there is one.
    public var cutAtWordBoundary: Bool

    public init(ellipsis: String = "…", cutAtWordBoundary: Bool = false) {
        self.ellipsis = ellipsis
        self.cutAtWordBoundary = cutAtWordBoundary
    }
}

/// What ``APNsPayload/fit(limit:options:)`` changed.
public struct APNsFitReport: Sendable, Hashable {
    public enum Field: String, Sendable, Hashable {
        case body, subtitle, title
    }

    public struct Cut: Sendable, Hashable {
        public let field: Field
        /// The text before and after (the ellipsis included when one was added).
        public let original: String
        public let shortened: String
        /// Encoded bytes saved.
        public let bytesSaved: Int
    }

    /// In the order they were made; empty when the payload already fitted.
    public let cuts: [Cut]
    /// The encoded size after fitting, at most the limit.
    public let encodedSize: Int
}

extension APNsPayload {
    /// Shortens the alert body, then the subtitle, then the title, until the payload fits
    /// `limit`. Text is cut only between grapheme clusters, so a family emoji, a flag or a letter
    /// with combining marks is never split; the result of each cut is a prefix of the original
    /// followed by the ellipsis.
    /// - Returns: What was cut and the final size.
    /// - Throws: `cannotFit` when even empty alert text leaves the payload over the limit (for
    ///   example, custom data alone is too large), leaving the payload unchanged; or an encoding
    ///   error for a model that cannot be encoded at all.
    @discardableResult
    public mutating func fit(
        limit: Int = APNsLimits.payloadSize, options: APNsFitOptions = APNsFitOptions()
    ) throws(APNsPayloadError) -> APNsFitReport {
        var size = try encodedSize()
        guard size > limit else { return APNsFitReport(cuts: [], encodedSize: size) }
        var shortened = self
        var cuts: [APNsFitReport.Cut] = []
        for field in [APNsFitReport.Field.body, .subtitle, .title] where size > limit {
            guard let text = shortened.text(of: field) else { continue }
            let textSize = JSONWriter.escapedCount(text)
            let budget = textSize - (size - limit)
            let replacement = budget > 0 ? Self.prefix(of: text, fittingEscaped: budget, options: options) : ""
            guard replacement != text else { continue }
            shortened.setText(replacement, of: field)
            let newSize = size - textSize + JSONWriter.escapedCount(replacement)
            cuts.append(APNsFitReport.Cut(field: field, original: text, shortened: replacement, bytesSaved: size - newSize))
            size = newSize
        }
        guard size <= limit else {
            throw APNsPayloadError(
                .cannotFit, path: "", size: size, limit: limit,
                "payload is \(size) bytes with its alert text emptied, over the limit of \(limit) bytes: the rest of the payload alone is too large")
        }
        self = shortened
        return APNsFitReport(cuts: cuts, encodedSize: size)
    }

    /// The longest prefix of whole grapheme clusters that, with the ellipsis, takes at most
    /// `budget` escaped bytes; `""` when not even the ellipsis fits after one cluster.
    static func prefix(of text: String, fittingEscaped budget: Int, options: APNsFitOptions) -> String {
        let ellipsisSize = JSONWriter.escapedCount(options.ellipsis)
        let available = budget - ellipsisSize
        guard available > 0 else { return "" }
        var used = 0
        var end = text.startIndex
        var lastWordEnd: String.Index?
        var previousWasSpace = false
        for index in text.indices {
            let cluster = text[index]
            let clusterSize = JSONWriter.escapedCount(String(cluster))
            guard used + clusterSize <= available else { break }
            if cluster.isWhitespace && !previousWasSpace && index > text.startIndex { lastWordEnd = index }
            previousWasSpace = cluster.isWhitespace
            used += clusterSize
            end = text.index(after: index)
        }
        if options.cutAtWordBoundary, let lastWordEnd, end < text.endIndex, !text[end].isWhitespace {
            end = lastWordEnd
        }
        var kept = String(text[..<end])
        while let last = kept.last, last.isWhitespace { kept.removeLast() }
        return kept.isEmpty ? "" : kept + options.ellipsis
    }

    func text(of field: APNsFitReport.Field) -> String? {
        switch (aps.alert, field) {
        case (.text(let text)?, .body): return text
        case (.fields(let fields)?, .body):
            if case .text(let text)? = fields.body { return text }
        case (.fields(let fields)?, .subtitle): return fields.subtitle
        case (.fields(let fields)?, .title):
            if case .text(let text)? = fields.title { return text }
        default: break
        }
        return nil
    }

    mutating func setText(_ text: String, of field: APNsFitReport.Field) {
        switch (aps.alert, field) {
        case (.text?, .body): aps.alert = .text(text)
        case (.fields(var fields)?, _):
            switch field {
            case .body: fields.body = .text(text)
            case .subtitle: fields.subtitle = text
            case .title: fields.title = .text(text)
            }
            aps.alert = .fields(fields)
        default: break
        }
    }
}
