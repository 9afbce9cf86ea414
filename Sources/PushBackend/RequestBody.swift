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
    /// twice in an object, U+0000 in a string (or a key). Returns the body the generated decoding
    /// is to read: the same bytes, or, when a member of the object is `null`, the object without
    /// it (`null` is absent, as the contract says, also for the keys the generator leaves out of
    /// its types because the document types them `null` alone).
    static func checked(_ bytes: [UInt8]) throws(APIError) -> [UInt8] {
        var parser = JSONParser(options: JSONParser.Options(maximumDepth: 16, maximumInputSize: BackendAPI.maximumRequestBody))
        let document: JSONDocument
        do throws(JSONError) {
            document = try parser.parse(bytes)
        } catch {
            throw .badRequest(.invalidJSON, error.description)
        }
        guard document.root.kind == .object else { throw .badRequest(.invalidJSON, "the body is not a JSON object") }
        try checkStrings(document.root, at: "")
        guard document.root.members.contains(where: { $0.value.isNull }), case .object(let members)? = try? JSON(document.root) else {
            return bytes
        }
        var kept: [UInt8] = []
        try? JSON.object(members.filter { if case .null = $0.value { false } else { true } }).write(into: &kept)
        return kept
    }

    private static func checkStrings(_ value: JSONValue, at path: String) throws(APIError) {
        switch value.kind {
        case .object:
            var seen: Set<String> = []
            for member in value.members {
                let key = member.key.string ?? ""
                let field = path.isEmpty ? key : "\(path).\(key)"
                guard !key.utf8.contains(0) else { throw .badRequest(.invalidField, "a key in \(path.isEmpty ? "the body" : path) contains U+0000") }
                guard seen.insert(key).inserted else { throw .badRequest(.duplicateField, "the field \(field) appears twice") }
                try checkStrings(member.value, at: field)
            }
        case .array:
            for (index, element) in value.elements.enumerated() { try checkStrings(element, at: "\(path)[\(index)]") }
        case .string:
            guard !(value.string ?? "").utf8.contains(0) else { throw .badRequest(.invalidField, "\(path) must not contain U+0000") }
        default:
            break
        }
    }
}
