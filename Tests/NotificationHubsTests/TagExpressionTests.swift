import NotificationHubs
import PushTestSupport
import Testing

@Suite("Tag expressions")
struct TagExpressionTests {
    @Test("Built in code, rendered with parentheses only where needed")
    func build() throws {
        let alice = TagExpression.tag("username:alice"), bob = TagExpression.tag("username:bob")
        #expect((alice || bob).description == "username:alice || username:bob")
        #expect((alice && !bob).description == "username:alice && !username:bob")
        #expect(((alice || bob) && .tag("lang:fr")).description == "(username:alice || username:bob) && lang:fr")
        #expect((alice || (bob && .tag("x"))).description == "username:alice || username:bob && x")
        #expect((!(alice && bob)).description == "!(username:alice && username:bob)")
        #expect(TagExpression.any(of: ["a", "b", "c"])?.description == "a || b || c")
        #expect(TagExpression.any(of: []) == nil)
        try (alice || bob).validate()
    }

    @Test(
        "Parsed from text with precedence ! > && > ||, and round-tripped",
        arguments: [
            ("a", "a"), ("a||b", "a || b"), ("a && b || c", "a && b || c"), ("a && (b || c)", "a && (b || c)"),
            ("!a && !(b || c)", "!a && !(b || c)"), ("  ( ( a ) )  ", "a"), ("!!a", "!!a"),
            ("username:alice@example.com || #news.fr_FR-2", "username:alice@example.com || #news.fr_FR-2"),
        ])
    func parse(text: String, rendered: String) throws {
        let expression = try TagExpression(parsing: text)
        #expect(expression.description == rendered)
        #expect(try TagExpression(parsing: expression.description) == expression)
    }

    @Test(
        "Malformed text and invalid tags are refused before sending",
        arguments: [
            ("", "invalidTagExpression"), ("a &&", "invalidTagExpression"), ("(a || b", "invalidTagExpression"), ("a b", "invalidTagExpression"),
            ("a & b", "invalidTagExpression"), ("a ||| b", "invalidTagExpression"), (")", "invalidTagExpression"),
            (String(repeating: "(", count: 40) + "a" + String(repeating: ")", count: 40), "invalidTagExpression"),
            (String(repeating: "!", count: 5000), "invalidTagExpression"),
            ("$Tag:{1}", "invalidTag"), ("$InstallationId:{}", "invalidTag"), ("tag with space && b", "invalidTagExpression"), ("t/ag", "invalidTag"),
            ("é", "invalidTag"), (String(repeating: "t", count: 121), "invalidTag"),
        ])
    func refused(text: String, code: String) {
        do {
            _ = try TagExpression(parsing: text)
            Issue.record("accepted \(text.prefix(50))")
        } catch {
            #expect(error.code.rawValue == code, "\(text.prefix(50)): \(error)")
        }
    }

    @Test("At most 20 tags with only ||, at most 6 otherwise")
    func tagCounts() throws {
        let twenty = (0..<20).map { "t\($0)" }
        try TagExpression.any(of: twenty)!.validate()
        #expect(throws: NotificationHubError.self) { try TagExpression.any(of: twenty + ["t20"])!.validate() }
        let six = (0..<6).map { TagExpression.tag("t\($0)") }.reduce(TagExpression.tag("base")) { $0 && $1 }
        #expect(throws: NotificationHubError.self) { try six.validate() }  // seven tags with &&
        let fiveAnd = (1..<6).map { TagExpression.tag("t\($0)") }.reduce(TagExpression.tag("t0")) { $0 && $1 }
        try fiveAnd.validate()  // six tags
        do {
            try (fiveAnd || .tag("x")).validate()
            Issue.record("seven tags with && were accepted")
        } catch {
            #expect(error.code == .tooManyTags)
        }
        #expect(throws: NotificationHubError.self) { try TagExpression(parsing: (0..<21).map { "t\($0)" }.joined(separator: " || ")) }
    }

    @Test("Devices are selected by their tags")
    func matching() throws {
        let expression = try TagExpression(parsing: "(username:alice || username:bob) && !muted")
        #expect(expression.matches(["username:alice"]))
        #expect(expression.matches(["username:bob", "lang:fr"]))
        #expect(!expression.matches(["username:alice", "muted"]))
        #expect(!expression.matches(["username:carol"]))
        #expect(!expression.matches([]))
    }
}
