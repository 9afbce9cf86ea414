import PushAPNs
import PushInternals
import PushJSON
import PushSAS

/// A Notification Hubs tag expression: tags joined with `&&`, `||`, `!` and parentheses, built in
/// code (`.tag("username:alice") || .tag("username:bob")`) or parsed from text, and validated
/// against the hub's rules before anything is sent.
public indirect enum TagExpression: Sendable, Hashable, CustomStringConvertible {
    case tag(String)
    case not(TagExpression)
    case and(TagExpression, TagExpression)
    case or(TagExpression, TagExpression)

    /// The longest tag the hub accepts.
    public static let maximumTagLength = 120
    /// Tags allowed in an expression that uses only `||`.
    public static let maximumTagsInOrExpression = 20
    /// Tags allowed in any other expression.
    public static let maximumTagsInExpression = 6
    /// Bounds on parsed text, so no input can make the parser recurse deeply or work long.
    static let maximumTextLength = 4096
    static let maximumNesting = 32

    public static func && (lhs: TagExpression, rhs: TagExpression) -> TagExpression { .and(lhs, rhs) }
    public static func || (lhs: TagExpression, rhs: TagExpression) -> TagExpression { .or(lhs, rhs) }
    public static prefix func ! (operand: TagExpression) -> TagExpression { .not(operand) }

    /// Tags joined with `||`: who has any of them.
    public static func any(of tags: [String]) -> TagExpression? {
        guard var expression = tags.first.map(TagExpression.tag) else { return nil }
        for tag in tags.dropFirst() { expression = expression || .tag(tag) }
        return expression
    }

    /// The text sent in `ServiceBusNotification-Tags`, with parentheses only where needed.
    public var description: String { render(parentPrecedence: 0) }

    private var precedence: Int {
        switch self {
        case .or: return 1
        case .and: return 2
        case .not, .tag: return 3
        }
    }

    private func render(parentPrecedence: Int) -> String {
        let text: String
        switch self {
        case .tag(let tag): return tag
        case .not(let operand): return "!" + operand.render(parentPrecedence: 3)
        case .and(let lhs, let rhs): text = lhs.render(parentPrecedence: 2) + " && " + rhs.render(parentPrecedence: 3)
        case .or(let lhs, let rhs): text = lhs.render(parentPrecedence: 1) + " || " + rhs.render(parentPrecedence: 2)
        }
        return precedence < parentPrecedence ? "(" + text + ")" : text
    }

    /// Every tag, in order (repeats included: the hub counts them).
    public var tags: [String] {
        switch self {
        case .tag(let tag): return [tag]
        case .not(let operand): return operand.tags
        case .and(let lhs, let rhs), .or(let lhs, let rhs): return lhs.tags + rhs.tags
        }
    }

    private var usesOnlyOr: Bool {
        switch self {
        case .tag: return true
        case .not, .and: return false
        case .or(let lhs, let rhs): return lhs.usesOnlyOr && rhs.usesOnlyOr
        }
    }

    /// Checks every tag and the tag count. A send may also target the hub's own tags of one
    /// installation or user, `$InstallationId:{id}` and `$UserId:{id}`.
    /// - Throws: ``NotificationHubError`` `invalidTag` or `tooManyTags`.
    public func validate() throws(NotificationHubError) {
        let tags = self.tags
        for tag in tags where !Self.isSystemTag(tag) { try TagExpression.validateTag(tag) }
        let limit = usesOnlyOr ? TagExpression.maximumTagsInOrExpression : TagExpression.maximumTagsInExpression
        guard tags.count <= limit else {
            throw NotificationHubError(
                .tooManyTags,
                "\(tags.count) tags; the hub allows \(limit) in \(usesOnlyOr ? "an expression of only ||" : "an expression with && or !")")
        }
    }

    /// `$InstallationId:{id}` or `$UserId:{id}`, the id 1 to 256 characters without `}` or a control character.
    static func isSystemTag(_ tag: String) -> Bool {
        for prefix in ["$InstallationId:{", "$UserId:{"] where tag.hasPrefix(prefix) && tag.hasSuffix("}") {
            let id = tag.utf8.dropFirst(prefix.utf8.count).dropLast()
            return (1...256).contains(id.count) && !id.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "}") }
        }
        return false
    }

    /// Checks one tag: 1 to 120 characters of `A-Z a-z 0-9 _ @ # . : -`, not starting with `$`
    /// (the hub's own tags, such as `$InstallationId:{…}`, are not for clients to set).
    public static func validateTag(_ tag: String) throws(NotificationHubError) {
        let valid =
            !tag.isEmpty && tag.utf8.count <= maximumTagLength
            && tag.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "#"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
        guard valid else {
            let shown = String(tag.prefix(40)).debugDescription
            throw NotificationHubError(
                .invalidTag, "tag \(shown) must be 1 to \(maximumTagLength) characters of A-Z a-z 0-9 _ @ # . : - (and not start with $)")
        }
    }

    /// Whether a device with these tags is selected (the emulator resolves targets with this).
    public func matches(_ deviceTags: Set<String>) -> Bool {
        switch self {
        case .tag(let tag): return deviceTags.contains(tag)
        case .not(let operand): return !operand.matches(deviceTags)
        case .and(let lhs, let rhs): return lhs.matches(deviceTags) && rhs.matches(deviceTags)
        case .or(let lhs, let rhs): return lhs.matches(deviceTags) || rhs.matches(deviceTags)
        }
    }

    /// Parses `a && (b || !c)`: `!` binds tightest, then `&&`, then `||`; whitespace is free.
    /// The result is validated.
    /// - Throws: ``NotificationHubError`` `invalidTagExpression` with the offset, or a validation error.
    public init(parsing text: String) throws(NotificationHubError) {
        guard text.utf8.count <= TagExpression.maximumTextLength else {
            throw NotificationHubError(.invalidTagExpression, "longer than \(TagExpression.maximumTextLength) bytes")
        }
        var parser = TagExpressionParser(bytes: Array(text.utf8))
        let expression = try parser.parseOr(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else { throw parser.failure("unexpected text") }
        try expression.validate()
        self = expression
    }
}

/// Recursive descent over the expression's bytes; recursion is bounded by `maximumNesting`.
private struct TagExpressionParser {
    let bytes: [UInt8]
    var position = 0

    func failure(_ what: String) -> NotificationHubError {
        NotificationHubError(.invalidTagExpression, "\(what) at byte \(position)")
    }

    mutating func skipWhitespace() { skipOptionalWhitespace(bytes, &position) }

    mutating func consume(_ text: StaticString) -> Bool {
        skipWhitespace()
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count,
            bytes[position..<position + count].elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: count))
        else { return false }
        position += count
        return true
    }

    mutating func parseOr(depth: Int) throws(NotificationHubError) -> TagExpression {
        var expression = try parseAnd(depth: depth)
        while consume("||") { expression = .or(expression, try parseAnd(depth: depth)) }
        return expression
    }

    mutating func parseAnd(depth: Int) throws(NotificationHubError) -> TagExpression {
        var expression = try parseUnary(depth: depth)
        while consume("&&") { expression = .and(expression, try parseUnary(depth: depth)) }
        return expression
    }

    mutating func parseUnary(depth: Int) throws(NotificationHubError) -> TagExpression {
        guard depth < TagExpression.maximumNesting else { throw failure("nested too deeply") }
        if consume("!") { return .not(try parseUnary(depth: depth + 1)) }
        if consume("(") {
            let inner = try parseOr(depth: depth + 1)
            guard consume(")") else { throw failure("expected )") }
            return inner
        }
        skipWhitespace()
        let start = position
        while position < bytes.count, !isDelimiter(bytes[position]) { position += 1 }
        guard position > start else { throw failure("expected a tag") }
        return .tag(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    private func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "!"),
            UInt8(ascii: "&"), UInt8(ascii: "|"):
            return true
        default:
            return false
        }
    }
}
