import PushAPNs
import PushJSON
import PushTestSupport
import Testing

@Suite("Fit")
struct FitTests {
    func payload(title: String = "Title", subtitle: String? = "Subtitle", body: String, extra: Int = 0) -> APNsPayload {
        var payload = APNsPayload(aps: APNsAPS(alert: .fields(APNsAlertFields(title: .text(title), subtitle: subtitle, body: .text(body)))))
        if extra > 0 { payload["data"] = .string(String(repeating: "d", count: extra)) }
        return payload
    }

    func body(of payload: APNsPayload) -> String {
        guard case .fields(let fields)? = payload.aps.alert, case .text(let body)? = fields.body else { return "" }
        return body
    }

    @Test("a payload within the limit is left alone")
    func fits() throws {
        var payload = payload(body: "short")
        let report = try payload.fit()
        #expect(report.cuts.isEmpty)
        #expect(payload == self.payload(body: "short"))
    }

    @Test("the body is cut first, to exactly what fits, with an ellipsis")
    func cutsBody() throws {
        var payload = payload(body: String(repeating: "a", count: 5000))
        let report = try payload.fit()
        #expect(report.encodedSize == 4096)
        #expect(try payload.encodedSize() == 4096)
        #expect(report.cuts.map(\.field) == [.body])
        #expect(body(of: payload).hasSuffix("…"))
        #expect(body(of: payload).hasPrefix("aaaa"))
    }

    @Test("escaped bytes are counted")
    func escapes() throws {
        var payload = payload(body: String(repeating: "\"", count: 3000))  // 6000 bytes escaped
        try payload.fit()
        #expect(try payload.encodedSize() <= 4096)
        #expect(try payload.encodedSize() >= 4094)  // each kept quote costs two bytes
    }

    @Test("never splits a grapheme cluster, for every limit", arguments: ["👨‍👩‍👧‍👦", "🇫🇷", "e\u{301}\u{302}", "你", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"])
    func graphemes(_ cluster: String) throws {
        let original = String(repeating: cluster, count: 40)
        let full = try payload(subtitle: nil, body: original).encodedSize()
        for limit in stride(from: full - 1, through: full - original.utf8.count + 10, by: -1) {
            var payload = payload(subtitle: nil, body: original)
            let report = try payload.fit(limit: limit)
            #expect(try payload.encodedSize() <= limit)
            var kept = body(of: payload)
            // Emptied when not even one cluster and the ellipsis fit.
            guard !kept.isEmpty else { continue }
            #expect(kept.hasSuffix("…"))
            kept.removeLast()
            #expect(original.hasPrefix(kept), "limit \(limit)")
            #expect(kept.count % 1 == 0 && kept.unicodeScalars.count % cluster.unicodeScalars.count == 0, "split at limit \(limit)")
            #expect(report.cuts.first?.original == original)
        }
    }

    @Test("then the subtitle, then the title")
    func order() throws {
        var payload = payload(
            title: String(repeating: "T", count: 2030), subtitle: String(repeating: "S", count: 2030), body: String(repeating: "B", count: 50))
        let report = try payload.fit()
        #expect(report.cuts.map(\.field) == [.body, .subtitle])
        #expect(body(of: payload) == "")
        #expect(try payload.encodedSize() <= 4096)
    }

    @Test("at a word end when asked")
    func wordBoundary() throws {
        let text = String(repeating: "lorem ipsum dolor ", count: 300)
        var payload = payload(subtitle: nil, body: text)
        try payload.fit(options: APNsFitOptions(ellipsis: "...", cutAtWordBoundary: true))
        let kept = body(of: payload)
        #expect(kept.hasSuffix("..."))
        let words = kept.dropLast(3).split(separator: " ")
        #expect(["lorem", "ipsum", "dolor"].contains(String(words.last!)))
        #expect(try payload.encodedSize() <= 4096)
    }

    @Test("custom data alone too large: an error, and the payload unchanged")
    func cannotFit() throws {
        var payload = payload(body: "body", extra: 5000)
        let before = payload
        #expect(throws: APNsPayloadError.self) { try payload.fit() }
        #expect(payload == before)
        do throws(APNsPayloadError) {
            try payload.fit()
        } catch {
            #expect(error.code == .cannotFit && error.limit == 4096 && (error.size ?? 0) > 4096)
        }
    }

    @Test("a plain string alert counts as the body")
    func stringAlert() throws {
        var payload = APNsPayload(aps: APNsAPS(alert: .text(String(repeating: "é", count: 3000))))
        let report = try payload.fit()
        #expect(report.cuts.map(\.field) == [.body])
        #expect(try payload.encodedSize() <= 4096)
    }
}
