import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Fuzz targets for libFuzzer. Built by `scripts/fuzz` with `-sanitize=fuzzer,address` and
// `-D FUZZING`, libFuzzer supplies `main` and calls `LLVMFuzzerTestOneInput`; the target is chosen
// by the PUSHCORE_FUZZ_TARGET environment variable. Built normally, this is a replay tool:
// `pushcore-fuzz TARGET FILE…` runs the target once per file (how findings are reproduced).
//
// Each target checks properties, not only "no crash"; a broken property traps, which libFuzzer
// reports as a crash with the input that caused it.

enum FuzzTarget: String, CaseIterable {
    case json, apns, sas, connection, range

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json: fuzzJSON(bytes)
        case .apns: fuzzAPNs(bytes)
        case .sas: fuzzSAS(bytes)
        case .connection: fuzzConnectionString(bytes)
        case .range: fuzzRange(bytes)
        }
    }
}

func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("property violated: \(message())") }
}

/// Scanner and parser: validation agrees with parsing, and accepted input re-encodes to a
/// canonical form that parses to the same value and is its own canonical form.
func fuzzJSON(_ bytes: [UInt8]) {
    var parser = JSONParser()
    let validation: JSONError?
    do { try parser.validate(bytes); validation = nil } catch { validation = error }
    let document: JSONDocument
    do {
        document = try parser.parse(bytes)
    } catch {
        require(validation == error, "validate and parse disagree: \(String(describing: validation)) vs \(error)")
        return
    }
    require(validation == nil, "validate refused what parse accepted: \(validation!)")
    let canonical = document.canonicalBytes()
    var secondParser = JSONParser()
    guard let reparsed = try? secondParser.parse(canonical) else {
        fatalError("canonical form does not parse: \(String(decoding: canonical, as: UTF8.self))")
    }
    require(reparsed.canonicalBytes() == canonical, "canonical form is not idempotent")
    // Owned values: the same value before and after, and their writer agrees with the canonical one.
    if let original = try? JSON(document.root) {
        guard let again = try? JSON(reparsed.root) else { fatalError("canonical form does not convert") }
        require(original == again, "canonical form changed the value")
        var written: [UInt8] = []
        if (try? original.write(into: &written)) != nil {
            require(written == canonical, "owned writer and canonical writer differ")
        }
    }
}

/// APNs decode and lint: never crash; a decoded model that encodes within the limit decodes back
/// to itself; fit never exceeds its limit.
func fuzzAPNs(_ bytes: [UInt8]) {
    var parser = JSONParser()
    _ = try? APNsLinter.lint(bytes, parser: &parser)
    guard let payload = try? APNsPayload(decoding: bytes, parser: &parser) else { return }
    guard let encoded = try? payload.encoded(limit: .max) else { return }
    require((try? payload.encodedSize()) == encoded.count, "size oracle disagrees with the encoder")
    guard let decoded = try? APNsPayload(decoding: encoded, parser: &parser) else {
        fatalError("encoded model does not decode: \(String(decoding: encoded, as: UTF8.self))")
    }
    require(decoded == payload, "round trip changed the model")
    var shortened = payload
    let limit = max(64, encoded.count / 2)
    if let report = try? shortened.fit(limit: limit) {
        require(report.encodedSize <= limit, "fit exceeded its limit")
        require((try? shortened.encoded(limit: limit)) != nil, "a fitted payload does not encode within the limit")
    }
}

private let fuzzKeyName = "DefaultFullSharedAccessSignature"
private let fuzzKey = "JHadkDHkdhi74jaHdakhy/rZ6KEdfhasYdahO8JOx/1sZXTUlc="
private let fuzzVerifier = SASVerifier(keys: [(fuzzKeyName, fuzzKey)], clockSkew: 60)
private let fuzzSigner = SASSigner(keyName: fuzzKeyName, key: fuzzKey)

/// SAS tokens: inspect and verify never crash; a token that verifies is one the signer would mint
/// for its own `sr` and expiry, i.e. fuzzing never forges a signature.
func fuzzSAS(_ bytes: [UInt8]) {
    let token = String(decoding: bytes, as: UTF8.self)
    let inspected = try? SASVerifier.inspect(token)
    let uri = inspected?.resource ?? "https://ns.servicebus.windows.net/hub"
    guard let info = try? fuzzVerifier.verify(token, uri: uri, now: 1_700_000_000) else { return }
    require(inspected == info, "verify and inspect disagree")
    require(info.keyName == fuzzKeyName, "verified with an unknown key name")
}

/// Connection strings: never crash; a refusal's message is one of the fixed texts, with numbers
/// only (so no part of the input, which may be the key, can reach it); an accepted one has every
/// part, and nothing it shows depends on the key (its descriptions equal those of the same
/// connection string with another key).
func fuzzConnectionString(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let connection: ConnectionString
    do throws(SASError) {
        connection = try ConnectionString(text)
    } catch {
        let shape = digitRunsReplaced(error.message)
        require(connectionErrorShapes.contains(shape), "a connection string error shows input text: \(error.message.debugDescription)")
        return
    }
    require(!connection.key.isEmpty && !connection.keyName.isEmpty && !connection.host.isEmpty, "an empty part was accepted")
    require(connection.endpoint.hasPrefix("https://") && connection.endpoint.hasSuffix("/"), "endpoint not normalised")
    let otherKey = connection.key == "other-key" ? "another-key" : "other-key"
    let rebuilt =
        "Endpoint=\(connection.endpoint);SharedAccessKeyName=\(connection.keyName);SharedAccessKey=\(otherKey)"
        + (connection.entityPath.map { ";EntityPath=\($0)" } ?? "")
    guard let other = try? ConnectionString(rebuilt) else { fatalError("the parts of an accepted connection string do not parse again") }
    require(
        other.host == connection.host && other.keyName == connection.keyName && other.entityPath == connection.entityPath,
        "the parts changed on re-parsing")
    func shown(_ value: ConnectionString) -> [String] {
        [value.description, value.debugDescription, String(reflecting: value), "\(Mirror(reflecting: value).children.map(\.value))"]
    }
    require(shown(connection) == shown(other), "a description depends on the key")
}

/// Every message a connection string may be refused with, numbers written as N.
let connectionErrorShapes: Set<String> = {
    let names = ["Endpoint", "SharedAccessKeyName", "SharedAccessKey", "EntityPath"]
    var shapes: Set<String> = [
        "part N at byte N has no '='", "Endpoint at byte N must start with sb:// or https://",
        "Endpoint at byte N must be a namespace host alone, such as sb://my-ns.servicebus.windows.net/",
    ]
    for name in names {
        shapes.formUnion([
            "\(name) at byte N has no '='", "\(name) appears more than once (again at byte N)", "\(name) is empty (at byte N)",
            "\(name) is missing", "\(name) holds '=' or a space at byte N; is a ';' missing before it?",
        ])
    }
    return shapes
}()

/// `text` with each run of ASCII digits written as one N.
func digitRunsReplaced(_ text: String) -> String {
    var result = ""
    var inDigits = false
    for character in text {
        let isDigit = character.isASCII && character.isNumber
        if isDigit && !inDigits { result.append("N") }
        if !isDigit { result.append(character) }
        inDigits = isDigit
    }
    return result
}

/// Range headers: never crash; an accepted range lies inside the resource and is not empty.
func fuzzRange(_ bytes: [UInt8]) {
    let header = String(decoding: bytes, as: UTF8.self)
    for length in [0, 1, 2, 100, 65_536, Int.max] {
        switch ByteRangeSet.resolve(header, length: length) {
        case .partial(let range):
            require(range.lowerBound >= 0 && range.upperBound <= length && !range.isEmpty, "range \(range) outside 0..<\(length)")
        case .full, .unsatisfiable:
            break
        }
    }
    let tag = EntityTag(strong: XXH128Digest(high: 1, low: 2))
    _ = tag.matches(ifNoneMatch: header)
    _ = tag.matches(ifRange: header)
    let response = ResourceResponse(length: 1000, entityTag: tag, contentType: .png, range: header, ifRange: header)
    require(response.bodyRange.upperBound <= 1000, "response body outside the resource")
}

#if FUZZING
private let selectedTarget: FuzzTarget = {
    guard let name = getenv("PUSHCORE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        fatalError("set PUSHCORE_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

private func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's entry point for programs that have their own `main` (LLVM 11 and later).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif

@main
struct FuzzMain {
    static func main() {
        #if FUZZING
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        _ = selectedTarget  // fail at once, not on the first input, when no target is set
        exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
        #else
        replay()
        #endif
    }

    /// `pushcore-fuzz TARGET FILE…`: runs the target once per file, as the fuzzer would.
    static func replay() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: pushcore-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE…")
            exit(2)
        }
        for path in arguments.dropFirst() {
            do throws(ResourceError) {
                let file = try FileResource(path: path)
                target.run(try file.bytes(in: 0..<file.count))
            } catch {
                print(error)
                exit(1)
            }
            print("\(path): ok")
        }
    }
}
