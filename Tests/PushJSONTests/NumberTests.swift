import PushJSON
import PushTestSupport
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
            // Around the ends of the range: subnormals, the normal boundary, the largest double.
            "2.4703282292062327e-324", "2.4703282292062328e-324", "4.9406564584124654e-324", "2.2250738585072011e-308",
            "2.2250738585072012e-308", "1.7976931348623158e308", "1.7976931348623159e308", "-1e-400", "1e-342", "1e-343",
            "1e308", "1e309",
            // Halfway between two doubles, and just either side of it with digits past the 19th.
            "9007199254740993", "9007199254740995", "9007199254740993.0000000000000000000001",
            "9007199254740992.9999999999999999999999", "9007199254740993e0", "90071992547409930e-1",
            // More digits than any 64-bit significand, cancelled or scaled by the exponent.
            "1" + String(repeating: "0", count: 400) + "e-400", "0." + String(repeating: "0", count: 400) + "1e400",
            String(repeating: "9", count: 800), "0." + String(repeating: "3", count: 800),
            "2.22507385850720138309023271733240406421921598046233183055332741688720443481391819585428315901251102056406733973103581100515243416155346010885601238537771882113077799353200233047961014744258363607192156504694250373420837525080665061665815894872049117996859163964850063590877011830487479978088775374994945158045160505091539985658247081864511353793580499211598108576605199243335211435239014879569960959128889160299264151106346631339366347758651302937176204732563178148566435087212282863764204484681140761391147706280168985324411002416144742161856716615054015428508471675290190316132277889672970737312333408698898317506783884692609277397797285865965494109136909540613646756870239867831529068098461721092462539672851562500000000000000001",
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
            try expectStandardLibraryReading(of: spelling, with: &parser)
        }
    }

    @Test("seeded random spellings of every length and exponent agree with the standard library")
    func randomSpellings() throws {
        var random = SeededGenerator(seed: 7)
        var parser = JSONParser()
        for _ in 0..<100_000 {
            let digitCount = Int.random(in: 1...40, using: &random)
            var digits = String(Int.random(in: 1...9, using: &random))
            for _ in 1..<digitCount { digits += String(Int.random(in: 0...9, using: &random)) }
            // Runs of zeros and nines make values close to powers of ten and to halfway points.
            if Int.random(in: 0..<4, using: &random) == 0 {
                let run = String(repeating: Bool.random(using: &random) ? "0" : "9", count: Int.random(in: 1...25, using: &random))
                digits += run + String(Int.random(in: 0...9, using: &random))
            }
            let point = Int.random(in: 0...digits.count, using: &random)
            var spelling = point == 0 ? "0." + digits : String(digits.prefix(point)) + (point < digits.count ? "." + digits.dropFirst(point) : "")
            spelling += "e\(Int.random(in: -360...330, using: &random))"
            if Bool.random(using: &random) { spelling = "-" + spelling }
            try expectStandardLibraryReading(of: spelling, with: &parser)
        }
    }

    /// The exact decimal spelling of the point halfway between a double and the next one up,
    /// and the spellings just below and just above it: they must round to the even neighbour,
    /// down and up.
    @Test("halfway points between neighbouring doubles, exact and one digit either side")
    func halfwayPoints() throws {
        var random = SeededGenerator(seed: 11)
        var parser = JSONParser()
        var doubles: [Double] = [0, .leastNonzeroMagnitude, .leastNormalMagnitude, 1, 9007199254740992, .greatestFiniteMagnitude.nextDown]
        for _ in 0..<400 { doubles.append(Double(bitPattern: UInt64.random(in: 0..<0x7FEF_FFFF_FFFF_FFFF, using: &random))) }
        for lower in doubles {
            let (digits, exponent) = exactHalfway(above: lower)
            // One less in the last digit, borrowing (an integer halfway point may end in zeros).
            var belowDigits = Array(digits.utf8)
            var position = belowDigits.count - 1
            while belowDigits[position] == UInt8(ascii: "0") {
                belowDigits[position] = UInt8(ascii: "9")
                position -= 1
            }
            belowDigits[position] -= 1
            let below = String(decoding: belowDigits, as: UTF8.self)
            for (spelling, expected) in [
                ("\(digits)e\(exponent)", nil), ("\(digits)1e\(exponent - 1)", lower.nextUp), ("\(below)9e\(exponent - 1)", lower),
            ] as [(String, Double?)] {
                let value = try #require(try expectStandardLibraryReading(of: spelling, with: &parser))
                if let expected { #expect(value == expected, "\(spelling)") }
            }
        }
    }

    /// Parses `spelling` as a whole document and expects the bits of the standard library's
    /// correctly rounded reading of it; returns what the parser read.
    @discardableResult
    func expectStandardLibraryReading(
        of spelling: String, with parser: inout JSONParser, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Double? {
        let value = try parser.parse(Array(spelling.utf8)).root.double
        #expect(value?.bitPattern == Double(spelling)?.bitPattern, "\(spelling)", sourceLocation: sourceLocation)
        return value
    }

    /// Digits and decimal exponent of (lower + lower.nextUp) / 2, exactly: the odd integer
    /// 2m + 1 times 2^(e - 1), written as (2m + 1) · 5^(1 - e) · 10^(e - 1) when e < 1.
    func exactHalfway(above lower: Double) -> (digits: String, exponent: Int) {
        let isSubnormal = lower.exponentBitPattern == 0
        let m = (isSubnormal ? 0 : 1 << 52) | lower.significandBitPattern
        let e = (isSubnormal ? 1 : Int(lower.exponentBitPattern)) - 1075
        // Little-endian limbs of nine decimal digits each.
        var limbs: [UInt64] = [(2 * m + 1) % 1_000_000_000, (2 * m + 1) / 1_000_000_000]
        func multiply(by factor: UInt64) {
            var carry: UInt64 = 0
            for index in limbs.indices {
                let product = limbs[index] * factor + carry
                limbs[index] = product % 1_000_000_000
                carry = product / 1_000_000_000
            }
            while carry > 0 {
                limbs.append(carry % 1_000_000_000)
                carry /= 1_000_000_000
            }
        }
        var remaining = abs(e - 1)
        let (base, chunk): (UInt64, UInt64) = e - 1 < 0 ? (5, 1_220_703_125) : (2, 1 << 30)
        while remaining >= (base == 5 ? 13 : 30) {
            multiply(by: chunk)
            remaining -= base == 5 ? 13 : 30
        }
        for _ in 0..<remaining { multiply(by: base) }
        while limbs.count > 1 && limbs.last == 0 { limbs.removeLast() }
        var digits = String(limbs.last!)
        for limb in limbs.dropLast().reversed() {
            let text = String(limb)
            digits += String(repeating: "0", count: 9 - text.count) + text
        }
        return (digits, min(e - 1, 0))
    }
}
