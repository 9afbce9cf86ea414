import PushCore
import Testing

@Suite("Numbers")
struct NumberTests {
    /// The fast path must agree with the standard library's correctly rounded parse.
    @Test(
        "doubles read as the standard library reads them",
        arguments: [
            "0", "-0", "0.0", "-0.0", "1", "-1", "1.5", "0.1", "0.3", "123.456", "-0.25", "1e2", "1E+2", "1e-2",
            "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308", "9007199254740993", "123456789012345678901",
            "3.14159265358979323846264338327950288", "0.000001", "1e22", "1e23", "1e-22", "1e-23", "123456789012345.6",
            "1234567890123456.7", "0e1000", "-0e-1000", "1e400", "4.35", "0.75", "75", "1e007", "100000000000000000000000",
        ])
    func doubles(_ spelling: String) throws {
        var parser = JSONParser()
        let document = try parser.parse(Array("[\(spelling)]".utf8))
        let value = try #require(document.root[0]?.double)
        let expected = try #require(Double(spelling))
        #expect(value.bitPattern == expected.bitPattern, "\(spelling): \(value) != \(expected)")
    }

    @Test("seeded random decimals agree with the standard library")
    func randomDecimals() throws {
        var random = SeededGenerator(seed: 42)
        var parser = JSONParser()
        for _ in 0..<20_000 {
            let digits = String(UInt64.random(in: 0...999_999_999_999_999, using: &random))
            let point = Int.random(in: 0...digits.count, using: &random)
            var spelling = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if spelling.hasPrefix(".") { spelling = "0" + spelling }
            if spelling.hasSuffix(".") { spelling += "0" }
            if Bool.random(using: &random) { spelling += "e\(Int.random(in: -30...30, using: &random))" }
            let value = try parser.parse(Array(spelling.utf8)).root.double
            #expect(value?.bitPattern == Double(spelling)?.bitPattern, "\(spelling)")
        }
    }
}
