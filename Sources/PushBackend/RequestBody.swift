import PushCore

/// Request bodies as ``ContractInput`` holds them, before the generated decoding reads them.
enum RequestBody {
    /// Whether a `Content-Type` names exactly `application/json` (any case, parameters allowed).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let mediaType = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        return String(decoding: mediaType, as: UTF8.self).lowercased() == "application/json"
    }

    /// Refuses what the generated decoding would take and we do not: not one JSON object, a key
    /// twice in any object, U+0000 in a string or a key (PostgreSQL cannot store one in text, and
    /// both engines must answer the same) but within ``freeForm`` members, which are not stored.
    static func check(_ bytes: [UInt8]) throws(APIError) {
        var parser = JSONParser(options: JSONParser.Options(maximumDepth: 16, maximumInputSize: BackendAPI.maximumRequestBody))
        let document: JSONDocument
        do throws(JSONError) {
            document = try parser.parse(bytes)
        } catch {
            throw .badRequest(.invalidJSON, error.description)
        }
        guard document.root.kind == .object else { throw .badRequest(.invalidJSON, "the body is not a JSON object") }
        try checkStrings(document.root, at: "", allowingNUL: false)
    }

    /// The members whose value is any JSON object the sender chooses, passed to the device as it
    /// is: a Live Activity's `contentState` and `attributes`.
    static let freeForm: Set<String> = ["contentState", "attributes"]

    private static func checkStrings(_ value: JSONValue, at path: String, allowingNUL: Bool) throws(APIError) {
        switch value.kind {
        case .object:
            var seen: Set<String> = []
            for member in value.members {
                let key = member.key.string ?? ""
                let field = path.isEmpty ? key : "\(path).\(key)"
                guard allowingNUL || !key.utf8.contains(0) else {
                    throw .badRequest(.invalidField, "a key in \(path.isEmpty ? "the body" : path) contains U+0000")
                }
                guard seen.insert(key).inserted else { throw .badRequest(.duplicateField, "the field \(field) appears twice") }
                try checkStrings(member.value, at: field, allowingNUL: allowingNUL || (path.isEmpty && freeForm.contains(key)))
            }
        case .array:
            for (index, element) in value.elements.enumerated() { try checkStrings(element, at: "\(path)[\(index)]", allowingNUL: allowingNUL) }
        case .string:
            guard allowingNUL || !(value.string ?? "").utf8.contains(0) else { throw .badRequest(.invalidField, "\(path) must not contain U+0000") }
        default:
            break
        }
    }
}
