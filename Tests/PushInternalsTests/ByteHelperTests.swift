import Foundation
import PushInternals
import Testing

@Suite("Byte helpers")
struct ByteHelperTests {
    /// Every length around the block boundaries, against Foundation's encoder.
    @Test("Base64 and base64url encode as Foundation does, and decode back")
    func base64RoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Data(bytes).base64EncodedString()
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodedString(bytes) == standard)
            #expect(Base64.encodedString(bytes, .url) == url)
            #expect(Base64.encodedCount(count, .standard) == standard.utf8.count)
            #expect(Base64.encodedCount(count, .url) == url.utf8.count)
            #expect(Base64.decode(standard.utf8) == bytes)
            #expect(Base64.decode(url.utf8, .url) == bytes)
        }
    }

    @Test("Base64 decoding takes the canonical spelling only")
    func base64RefusesNonCanonical() {
        #expect(Base64.decode("YWJj".utf8) == Array("abc".utf8))
        #expect(Base64.decode("YWI=".utf8) == Array("ab".utf8))
        #expect(Base64.decode("YQ==".utf8) == Array("a".utf8))
        #expect(Base64.decode("".utf8) == [])
        for refused in ["YQ", "YQ=", "YR==", "YWJ=", "Y===", "====", "YQ==YQ==", "YW=j", "YW J", "YW-j", "Y"] {
            #expect(Base64.decode(refused.utf8) == nil, "\(refused)")
        }
        for refused in ["YQ==", "YR", "YWJ", "Y", "YW+j", "YW/j"] {
            #expect(Base64.decode(refused.utf8, .url) == nil, "\(refused)")
        }
        #expect(Base64.decode("-_8".utf8, .url) == [0xFB, 0xFF])
    }

    @Test("Percent-encoding keeps unreserved bytes and writes the rest as uppercase hex")
    func percentEncoding() {
        var output: [UInt8] = []
        PercentEncoding.append("a-Z.0_~ /é".utf8, to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "a-Z.0_~%20%2F%C3%A9")
        output = []
        PercentEncoding.append("HTTPS://Hub".utf8, lowercasingASCII: true, to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "https%3A%2F%2Fhub")
        #expect(PercentEncoding.decode("a%2fb%2F%C3%A9".utf8) == Array("a/b/é".utf8))
        for refused in ["%", "%2", "%G0", "a%0"] { #expect(PercentEncoding.decode(refused.utf8) == nil, "\(refused)") }
    }

    @Test("Hex digits both ways, decimal digits, constant-time comparison")
    func digitsAndComparison() {
        #expect(Hex.lowercase([0x00, 0x9F, 0xA0, 0xFF]) == "009fa0ff")
        #expect(Hex.lowercase(UInt64(0x0123_4567_89AB_CDEF)) == "0123456789abcdef")
        #expect((0...255).allSatisfy { Hex.value(Hex.lowerDigit(UInt8($0))) == UInt8($0) & 0xF })
        #expect((0...255).allSatisfy { Hex.value(Hex.upperDigit(UInt8($0))) == UInt8($0) & 0xF })
        #expect(Hex.value(UInt8(ascii: "g")) == nil)
        for value: UInt64 in [0, 7, 10, 99, 100, 1_795_341_600, .max] {
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            let text = withUnsafeMutableBytes(of: &digits) { buffer in
                let start = writeDecimalDigits(value, endingAt: buffer)
                return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[start...]), as: UTF8.self)
            }
            #expect(text == String(value))
        }
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([UInt8](), []))
    }

    @Test("The Unix clock reads the wall clock in seconds")
    func unixClock() {
        let foundation = Int64(Date().timeIntervalSince1970)
        #expect(abs(unixSeconds() - foundation) <= 1)
    }
}
