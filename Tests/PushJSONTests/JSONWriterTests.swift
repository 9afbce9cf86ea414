import PushJSON
import PushTestSupport
import Testing

@Suite("JSON writer")
struct JSONWriterTests {
    func encode(_ value: JSON) throws -> String {
        var bytes: [UInt8] = []
        try value.write(into: &bytes)
        #expect(try value.encodedSize() == bytes.count)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("minimal escaping: only quote, backslash and control characters")
    func escaping() throws {
        #expect(try encode("\"\\/&<>é😀\u{7F}") == #""\"\\/&<>é😀\#u{7F}""#)
        #expect(try encode("\u{0}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}") == #""\u0000\b\t\n\f\r\u001f""#)
    }

    @Test("integers and doubles")
    func numbers() throws {
        #expect(try encode(.number(JSONNumber(Int.min))) == "-9223372036854775808")
        #expect(try encode(.number(JSONNumber(Int.max))) == "9223372036854775807")
        #expect(try encode(.number(JSONNumber(0))) == "0")
        #expect(try encode(.number(JSONNumber(0.1))) == "0.1")
        #expect(try encode(.number(JSONNumber(1e-7))) == "1e-07")
        #expect(throws: JSONError.self) { try JSONNumber(Double.nan) }
        #expect(throws: JSONError.self) { try JSONNumber(-Double.infinity) }
        #expect(JSONNumber(spelling: "01") == nil)
        #expect(JSONNumber(spelling: "-1.5E+3")?.spelling == "-1.5E+3")
    }

    @Test("objects keep order; duplicates and excessive depth are refused")
    func structure() throws {
        #expect(try encode(["b": 1, "a": [true, nil, "x"]]) == #"{"b":1,"a":[true,null,"x"]}"#)
        #expect(throws: JSONError.self) { try encode(.object([JSONMember("k", 1), JSONMember("k", 2)])) }
        var deep: JSON = 1
        for _ in 0..<2000 { deep = [deep] }
        #expect(throws: JSONError.self) { try encode(deep) }
    }

    @Test("keys are the same key when their bytes are: canonically equivalent spellings are two keys, as the parser says")
    func keysCompareByBytes() throws {
        // "é" precomposed (U+00E9) and decomposed (e, U+0301): equal as Swift Strings, not as JSON keys.
        let text = "{\"\u{E9}\":1,\"e\u{301}\":2}"
        var parser = JSONParser()
        let document = try parser.parse(Array(text.utf8))
        try document.root.checkUniqueKeys()
        let owned = try JSON(document.root)
        #expect(try encode(owned) == text)
        // Past 16 members the check hashes; the same rule holds there.
        let many = JSON.object((0..<20).map { JSONMember("k\($0)", 1) } + [JSONMember("\u{E9}", 1), JSONMember("e\u{301}", 2)])
        #expect(try encode(many).hasSuffix("\"\u{E9}\":1,\"e\u{301}\":2}"))
        #expect(throws: JSONError.self) { try encode(.object((0..<20).map { JSONMember("k\($0)", 1) } + [JSONMember("k3", 2)])) }
    }

    @Test("raw JSON is validated, stored canonically and equal to what it spells")
    func raw() throws {
        let raw = try RawJSON(#"{ "a" : [1, 2.50] }"#)
        #expect(raw.description == #"{"a":[1,2.50]}"#)
        #expect(JSON.raw(raw) == ["a": [1, .number(JSONNumber(spelling: "2.50")!)]])
        #expect(throws: JSONError.self) { try RawJSON("{") }
        #expect(try encode(["r": .raw(raw)]) == #"{"r":{"a":[1,2.50]}}"#)
    }

    @Test("raw JSON compares as the values it spells: canonically equivalent strings are equal, as Strings are")
    func rawEquality() throws {
        // "é" precomposed and decomposed: different canonical bytes, equal as Swift Strings.
        let composed = try RawJSON("[\"\u{E9}\"]"), decomposed = try RawJSON("[\"e\u{301}\"]")
        #expect(composed.bytes != decomposed.bytes)
        #expect(JSON.raw(composed) == .raw(decomposed))
        #expect(JSON.raw(composed) == ["\u{E9}"] && JSON.raw(decomposed) == ["\u{E9}"])
        #expect(JSON.raw(composed).hashValue == JSON.raw(decomposed).hashValue)
        #expect(JSON.raw(composed) != .raw(try RawJSON(#"["e"]"#)))
    }
}
