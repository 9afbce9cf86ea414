import Foundation
import PushCore
import PushInternals

/// Notification Hubs' template expression language, as the service documents it, over a JSON
/// template (APNs and FCM v1 templates are JSON):
/// - `$(prop)`: the property's text, or nothing when the send did not give it (names are not
///   case-sensitive); `$(prop, n)` clips it to `n` characters;
/// - `.(prop, n)`: clipped to `n` characters with `...` among them when it is longer;
/// - `%(prop)`: percent-encoded (RFC 3986 unreserved characters kept);
/// - `#(prop)`: as `$(prop)`, but a whole JSON string value that is `#(prop)` becomes a JSON
///   number when the text is one (`"badge": "#(count)"` → `"badge": 3`);
/// - `'text'` or `"text"`: a literal; `{a + b + …}` concatenates expressions, and a string value
///   that is one is replaced whole (`"alert": "{$(user) + ' sent a photo'}"`).
/// Expressions inside other text (`"Hello $(name)!"`) are replaced where they stand.
package enum TemplateExpansion {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// A send's properties, by name in lower case (names are not case-sensitive): made once per
    /// send, read for every template it reaches.
    package struct Properties: Sendable {
        let byName: [String: String]

        package init(_ properties: [String: String]) {
            var byName: [String: String] = [:]
            for (name, value) in properties { byName[name.lowercased()] = value }
            self.byName = byName
        }
    }

    /// The template's JSON with every expression replaced.
    /// - Throws: ``Failure`` when the template is not JSON or an expression does not parse.
    package static func expand(_ template: String, properties: Properties) throws(Failure) -> [UInt8] {
        var parser = JSONParser()
        let document: JSONDocument
        do throws(JSONError) { document = try parser.parse(Array(template.utf8)) } catch {
            throw Failure(description: "the template is not JSON: \(error)")
        }
        let value: JSON
        do throws(JSONError) { value = try JSON(document.root) } catch {
            throw Failure(description: "the template is not JSON: \(error)")
        }
        let result = try expanded(value, properties.byName)
        var bytes: [UInt8] = []
        do throws(JSONError) {
            try result.write(into: &bytes)
        } catch {
            throw Failure(description: "the expanded template is not JSON: \(error)")
        }
        return bytes
    }

    /// Text outside JSON (a template's header value) with its expressions replaced.
    package static func expandText(_ text: String, properties: Properties) throws(Failure) -> String {
        switch try expandedString(text, properties.byName) {
        case .string(let expanded): return expanded
        case .number(let number): return number.spelling
        default: return text
        }
    }

    private static func expanded(_ value: JSON, _ properties: [String: String]) throws(Failure) -> JSON {
        switch value {
        case .string(let text):
            return try expandedString(text, properties)
        case .array(let elements):
            var result: [JSON] = []
            for element in elements { result.append(try expanded(element, properties)) }
            return .array(result)
        case .object(let members):
            var result: [JSONMember] = []
            for member in members { result.append(JSONMember(member.key, try expanded(member.value, properties))) }
            return .object(result)
        default:
            return value
        }
    }

    /// A string value: a whole `{…}` concatenation, a whole `#(prop)` (a number when it reads as
    /// one), or text with expressions among it.
    private static func expandedString(_ text: String, _ properties: [String: String]) throws(Failure) -> JSON {
        let characters = Array(text)
        if characters.first == "{" && characters.last == "}" {
            var reader = Reader(characters: characters, position: 1, properties: properties)
            let joined = try reader.concatenation(endingAt: characters.count - 1)
            return .string(joined)
        }
        if characters.first == "#", characters.dropFirst().first == "(" {
            var reader = Reader(characters: characters, position: 0, properties: properties)
            if let value = try reader.expression(), reader.position == characters.count {
                return Self.isJavaScriptNumber(value) ? .number(JSONNumber(spelling: value)!) : .string(value)
            }
        }
        var result = ""
        var reader = Reader(characters: characters, position: 0, properties: properties)
        while reader.position < characters.count {
            let start = reader.position
            if let value = try reader.expression() {
                result += value
            } else {
                result.append(characters[start])
                reader.position = start + 1
            }
        }
        return .string(result)
    }

    /// The service's test for `#(prop)`: `(0|([1-9][0-9]*))(\.[0-9]+)?((e|E)(+|-)?[0-9]+)?`.
    static func isJavaScriptNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if bytes.first.map({ (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) == true {
            _ = digits()
        } else {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }

    private struct Reader {
        let characters: [Character]
        var position: Int
        let properties: [String: String]

        /// `a + b + …` up to `end`, joined.
        mutating func concatenation(endingAt end: Int) throws(Failure) -> String {
            var result = ""
            while true {
                skipSpaces()
                guard position < end else { throw Failure(description: "an empty {} expression") }
                if characters[position] == "'" || characters[position] == "\"" {
                    result += try literal()
                } else if let value = try expression() {
                    result += value
                } else {
                    throw Failure(description: "\(String(characters[position...])) is not an expression")
                }
                skipSpaces()
                if position == end { return result }
                guard characters[position] == "+" else { throw Failure(description: "expressions in {} are joined with +") }
                position += 1
            }
        }

        mutating func literal() throws(Failure) -> String {
            let quote = characters[position]
            guard let close = characters[(position + 1)...].firstIndex(of: quote) else {
                throw Failure(description: "a literal is not closed")
            }
            defer { position = close + 1 }
            return String(characters[(position + 1)..<close])
        }

        /// `$(…)`, `#(…)`, `.(…)` or `%(…)` at the position, evaluated; nil (and the position
        /// unmoved) when there is none.
        mutating func expression() throws(Failure) -> String? {
            guard position + 1 < characters.count, "$#.%".contains(characters[position]), characters[position + 1] == "(" else { return nil }
            let kind = characters[position]
            guard let close = characters[(position + 2)...].firstIndex(of: ")") else {
                throw Failure(description: "\(kind)( is not closed")
            }
            let arguments = String(characters[(position + 2)..<close]).split(separator: ",", omittingEmptySubsequences: false)
            let name = arguments[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, arguments.count <= 2 else { throw Failure(description: "\(kind)(\(name)) takes a property and at most a length") }
            var limit: Int?
            if arguments.count == 2 {
                guard let length = Int(arguments[1].trimmingCharacters(in: .whitespaces)), length >= 0 else {
                    throw Failure(description: "the length in \(kind)(\(name), …) is not a number")
                }
                limit = length
            }
            position = close + 1
            let value = properties[name.lowercased()] ?? ""
            switch kind {
            case ".":
                guard let limit, value.count > limit else { return value }
                return limit >= 3 ? String(value.prefix(limit - 3)) + "..." : String(repeating: ".", count: limit)
            case "%":
                let clipped = limit.map { String(value.prefix($0)) } ?? value
                var bytes: [UInt8] = []
                PercentEncoding.append(clipped.utf8, to: &bytes)
                return String(decoding: bytes, as: UTF8.self)
            default:
                return limit.map { String(value.prefix($0)) } ?? value
            }
        }

        mutating func skipSpaces() {
            while position < characters.count, characters[position] == " " { position += 1 }
        }
    }
}
