import PushResources
import PushTestSupport
import Testing

@Suite("Range, conditional requests and content types")
struct HTTPHelperTests {
    @Test(
        "Range headers resolve per RFC 9110 against a 1000-byte resource",
        arguments: [
            ("bytes=0-0", ByteRangeResolution.partial(0..<1)),
            ("bytes=0-499", .partial(0..<500)),
            ("bytes=500-", .partial(500..<1000)),
            ("bytes=-200", .partial(800..<1000)),
            ("bytes=-5000", .partial(0..<1000)),  // suffix larger than the resource: all of it
            ("bytes=990-5000", .partial(990..<1000)),  // last past the end is clamped
            ("bytes=999-999", .partial(999..<1000)),
            ("bytes=1000-", .unsatisfiable),  // start at the end
            ("bytes=5000-6000", .unsatisfiable),  // start beyond the end
            ("bytes=-0", .unsatisfiable),
            ("bytes=2000-3000, -0", .unsatisfiable),
            ("bytes=2000-3000, 10-19", .partial(10..<20)),  // the first satisfiable range
            ("bytes=10-19, 30-39", .partial(10..<20)),
            ("BYTES=10-19", .partial(10..<20)),  // the unit is case-insensitive
            ("bytes=  10-19 ,, 30-39 ", .partial(10..<20)),  // list whitespace and empty elements
            ("bytes=0-99999999999999999999999999999999999999", .partial(0..<1000)),  // 40 digits: saturates
            ("bytes=99999999999999999999999999999999999999-", .unsatisfiable),
            ("bytes=-99999999999999999999999999999999999999", .partial(0..<1000)),
            ("bytes=5-4", .full),  // last before first: malformed, ignored
            ("bytes=", .full),
            ("bytes=a-b", .full),
            ("bytes=1-2-3", .full),
            ("bytes 0-1", .full),
            ("bytes\u{1D}0-1", .full),  // 0x1D | 0x20 is "=": letters alone are case-folded
            ("BYTES\u{1D}0-1", .full),
            ("items=0-1", .full),  // unknown unit: ignored
            ("bytes=--1", .full),
            ("bytes=+1-2", .full),
            ("", .full),
        ] as [(String, ByteRangeResolution)])
    func resolve(header: String, expected: ByteRangeResolution) {
        #expect(ByteRangeSet.resolve(header, length: 1000) == expected)
    }

    @Test("Typed errors say what is wrong and where")
    func errors() throws {
        #expect(throws: ByteRangeError(.unsupportedUnit, at: 0)) { try ByteRangeSet(parsing: "items=0-1") }
        #expect(throws: ByteRangeError(.malformed, at: 6)) { try ByteRangeSet(parsing: "bytes=5-4") }
        #expect(throws: ByteRangeError(.malformed, at: 9)) { try ByteRangeSet(parsing: "bytes=1-2x") }
        #expect(throws: ByteRangeError(.malformed, at: 6)) { try ByteRangeSet(parsing: "bytes=") }
        #expect(try ByteRangeSet(parsing: "bytes=1-2,-3,4-").specs == [.from(first: 1, last: 2), .suffix(length: 3), .from(first: 4, last: nil)])
    }

    @Test("Hostile headers are refused quickly: 10,000 ranges, huge numbers, oversize values")
    func hostile() {
        let manyRanges = "bytes=" + (0..<10_000).map { "\($0)-\($0)" }.joined(separator: ",")
        #expect(throws: ByteRangeError(.tooLong, at: ByteRangeSet.maximumHeaderLength)) { try ByteRangeSet(parsing: manyRanges) }
        #expect(ByteRangeSet.resolve(manyRanges, length: 100) == .unsatisfiable)
        let hundredOne = "bytes=" + (0..<101).map { "\($0)-\($0)" }.joined(separator: ",")
        #expect(throws: ByteRangeError.self) { try ByteRangeSet(parsing: hundredOne) }
        #expect(ByteRangeSet.resolve(hundredOne, length: 100) == .unsatisfiable)
        let hundred = "bytes=" + (0..<100).map { "\($0)-\($0)" }.joined(separator: ",")
        #expect(ByteRangeSet.resolve(hundred, length: 100) == .partial(0..<1))
        let longNumber = "bytes=" + String(repeating: "9", count: 4000) + "-"
        #expect(ByteRangeSet.resolve(longNumber, length: 100) == .unsatisfiable)
    }

    @Test("An empty resource: int ranges are unsatisfiable, a suffix sends it whole")
    func emptyResource() {
        #expect(ByteRangeSet.resolve("bytes=0-0", length: 0) == .unsatisfiable)
        #expect(ByteRangeSet.resolve("bytes=-10", length: 0) == .full)
        #expect(ByteRangeSet.resolve(nil, length: 0) == .full)
    }

    @Test("Entity tags parse, print and compare strongly or weakly")
    func entityTags() throws {
        let digest = XXH3.hash128(Array("abc".utf8))
        let tag = EntityTag(strong: digest)
        #expect(tag.headerValue == "\"06b05ab6733a618578af5f94892f3950\"")
        #expect(EntityTag(tag.headerValue) == tag)
        #expect(EntityTag("W/\"x\"")?.isWeak == true)
        for malformed in ["", "x", "\"x", "W/x", "\"a\"b", "\"a\" ", "\"sp ace\"", "\"quo\"te\""] {
            #expect(EntityTag(malformed) == nil, "\(malformed)")
        }
        #expect(tag.matches(ifNoneMatch: tag.headerValue))
        #expect(tag.matches(ifNoneMatch: "*"))
        #expect(tag.matches(ifNoneMatch: " \"old\" , W/\(tag.headerValue)"))  // weak comparison
        #expect(tag.matches(ifNoneMatch: "\"a\",,\(tag.headerValue)"))
        #expect(!tag.matches(ifNoneMatch: "\"old\""))
        #expect(!tag.matches(ifNoneMatch: "\(tag.headerValue) garbage"))
        #expect(!tag.matches(ifNoneMatch: "* , \"x\""))
        #expect(!tag.matches(ifNoneMatch: ""))
        #expect(tag.matches(ifRange: tag.headerValue))
        #expect(!tag.matches(ifRange: "W/\(tag.headerValue)"))  // strong comparison
        #expect(!tag.matches(ifRange: "Sat, 22 Nov 2026 10:00:00 GMT"))  // no Last-Modified to compare
        #expect(!tag.matches(ifRange: "\"old\""))
    }

    @Test("A response plan follows If-None-Match, then If-Range, then Range")
    func responsePlan() {
        let tag = EntityTag(strong: XXH3.hash128(Array("image".utf8)))
        let full = ResourceResponse(length: 1000, entityTag: tag, contentType: .png)
        #expect(full.status == 200 && full.bodyRange == 0..<1000)
        #expect(full.header("content-type") == "image/png" && full.header("Content-Length") == "1000")
        #expect(full.header("ETag") == tag.headerValue && full.header("Accept-Ranges") == "bytes")

        let notModified = ResourceResponse(length: 1000, entityTag: tag, contentType: .png, range: "bytes=0-1", ifNoneMatch: tag.headerValue)
        #expect(notModified.status == 304 && notModified.bodyRange.isEmpty && notModified.header("ETag") == tag.headerValue)

        let partial = ResourceResponse(length: 1000, entityTag: tag, contentType: .png, range: "bytes=100-199", ifRange: tag.headerValue)
        #expect(partial.status == 206 && partial.bodyRange == 100..<200)
        #expect(partial.header("Content-Range") == "bytes 100-199/1000" && partial.header("Content-Length") == "100")

        let stale = ResourceResponse(length: 1000, entityTag: tag, contentType: .png, range: "bytes=100-199", ifRange: "\"old\"")
        #expect(stale.status == 200 && stale.bodyRange == 0..<1000)

        let unsatisfiable = ResourceResponse(length: 1000, entityTag: tag, contentType: .png, range: "bytes=1000-")
        #expect(unsatisfiable.status == 416 && unsatisfiable.header("Content-Range") == "bytes */1000")
        #expect(unsatisfiable.bodyRange.isEmpty && unsatisfiable.header("Content-Type") == nil)
    }

    @Test(
        "Content types come from magic bytes",
        arguments: [
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13], ContentType?.some(.png)),
            ([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46], .jpeg),
            (Array("GIF89a".utf8) + [1, 0], .gif),
            (Array("GIF87a".utf8), .gif),
            (Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0], .heic),
            ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0], .heif),
            ([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0], .avif),
            ([0, 0, 0, 0x18] + Array("ftypisom".utf8), nil),  // an MP4 video is not an image
            (Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WAVE".utf8), nil),
            ([0x89, 0x50, 0x4E, 0x47], nil),  // truncated signature
            (Array("{\"aps\":{}}".utf8), nil),
            ([], nil),
        ] as [([UInt8], ContentType?)])
    func sniff(bytes: [UInt8], expected: ContentType?) {
        #expect(ContentType.sniff(bytes) == expected)
    }
}
