import ArgumentParser
import Configuration
import PushJSON
import Synchronization
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where `push-backend`'s settings come from, first wins: the command line, `PUSH_BACKEND_*`
/// environment variables, the JSON file that `--config-file` (or `PUSH_BACKEND_CONFIG_FILE`)
/// names, then the defaults. A key is its option's name in camelCase, with the database, hub,
/// APNs and metrics options one level down: `--hub-connection-string` is `hub.connectionString`
/// in the file and `PUSH_BACKEND_HUB_CONNECTION_STRING` in the environment.
struct Settings {
    /// What a read found, for `--print-config`: every key `serve` reads, in order.
    struct Line: Sendable {
        var key: String
        /// The value as text, or `<redacted>` for a secret.
        var value: String
        var source: String
    }

    /// Keys whose values are secrets: redacted in every listing and never part of an error.
    /// `password` (`user add`'s) comes from the environment alone: no option or file key has it.
    static let secretKeys: Set<String> = ["database.url", "hub.connectionString", "password"]
    static let environmentPrefix = "PUSH_BACKEND_"

    private let reader: ConfigReader
    private let accesses: AccessRecord
    private let sourceNames: [String]

    /// Reads the settings from `commandLine` (the options given, by key), the environment and the
    /// config file. A config file that cannot be read, is not JSON or names a key `push-backend`
    /// does not know is a usage error.
    init(commandLine: [String: ConfigContent], configFile: String?, knownKeys: Set<String>) async throws {
        var given: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, content) in commandLine { given[AbsoluteConfigKey(ConfigKey(key))] = ConfigValue(content, isSecret: Self.secretKeys.contains(key)) }
        let environment = EnvironmentVariablesProvider(
            secretsSpecifier: .specific(Set(Self.secretKeys.map(Self.environmentName))))
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "command line", values: given), environment.prefixKeys(with: "pushBackend"),
        ]
        var names = ["command line", "environment"]
        if let path = configFile ?? ProcessInfo.processInfo.environment[Self.environmentPrefix + "CONFIG_FILE"] {
            try Self.checkKeys(ofConfigFile: path, against: knownKeys)
            do {
                providers.append(
                    try await FileProvider<JSONSnapshot>(
                        parsingOptions: .init(secretsSpecifier: .dynamic { key, _ in Self.secretKeys.contains(key) }), filePath: FilePath(path)))
            } catch {
                throw ValidationError("config file \(path): cannot be read as JSON")
            }
            names.append("config file")
        }
        accesses = AccessRecord()
        reader = ConfigReader(providers: providers, accessReporter: accesses)
        sourceNames = names
    }

    /// `PUSH_BACKEND_HUB_CONNECTION_STRING` for `hub.connectionString`.
    static func environmentName(_ key: String) -> String {
        var name = environmentPrefix
        for character in key {
            if character == "." {
                name.append("_")
            } else if character.isUppercase {
                name += "_" + character.uppercased()
            } else {
                name += character.uppercased()
            }
        }
        return name
    }

    // The defaults go through the reader, so that `--print-config` shows them.
    func string(_ key: String) -> String? { reader.string(forKey: ConfigKey(key), isSecret: Self.secretKeys.contains(key)) }
    func string(_ key: String, default value: String) -> String {
        reader.string(forKey: ConfigKey(key), isSecret: Self.secretKeys.contains(key), default: value)
    }
    func int(_ key: String) -> Int? { reader.int(forKey: ConfigKey(key)) }
    func int(_ key: String, default value: Int) -> Int { reader.int(forKey: ConfigKey(key), default: value) }
    func bool(_ key: String, default value: Bool = false) -> Bool { reader.bool(forKey: ConfigKey(key), default: value) }
    func strings(_ key: String) -> [String] { reader.stringArray(forKey: ConfigKey(key), default: []) }

    /// Throws a usage error naming the first key whose value was there but of the wrong type (the
    /// reads above fall back to the default for it). The value is not repeated: it may be a secret.
    func checkTypes() throws {
        for event in accesses.events {
            guard event.conversionError != nil || event.providerResults.contains(where: { if case .failure = $0.result { true } else { false } })
            else { continue }
            let key = event.metadata.key.components.joined(separator: ".")
            throw ValidationError("\(key) (from the \(source(of: event))) is not \(Self.typeName(event.metadata.valueType))")
        }
    }

    /// One line per key read so far, secrets redacted, with where each value came from.
    func lines() -> [Line] {
        var seen: Set<String> = []
        return accesses.events.compactMap { event in
            let key = event.metadata.key.components.joined(separator: ".")
            guard seen.insert(key).inserted, case .success(let found) = event.result else { return nil }
            let value: String
            if let found {
                value = found.isSecret ? "<redacted>" : Self.text(of: found.content)
            } else {
                value = "(none)"
            }
            return Line(key: key, value: value, source: source(of: event))
        }
    }

    private func source(of event: AccessEvent) -> String {
        for (index, result) in event.providerResults.enumerated() where index < sourceNames.count {
            switch result.result {
            case .success(let lookup) where lookup.value != nil: return sourceNames[index]
            case .failure: return sourceNames[index]
            case .success: continue
            }
        }
        return "default"
    }

    private static func text(of content: ConfigContent) -> String {
        switch content {
        case .string(let text): return text
        case .int(let number): return "\(number)"
        case .double(let number): return "\(number)"
        case .bool(let flag): return "\(flag)"
        case .stringArray(let texts): return texts.joined(separator: ",")
        case .intArray(let numbers): return numbers.map { "\($0)" }.joined(separator: ",")
        case .doubleArray(let numbers): return numbers.map { "\($0)" }.joined(separator: ",")
        case .boolArray(let flags): return flags.map { "\($0)" }.joined(separator: ",")
        case .bytes(let bytes): return "(\(bytes.count) bytes)"
        case .byteChunkArray(let chunks): return "(\(chunks.count) byte strings)"
        }
    }

    private static func typeName(_ type: ConfigType) -> String {
        switch type {
        case .int: "an integer"
        case .bool: "true or false"
        case .stringArray: "a list of strings"
        default: "a string"
        }
    }

    /// A typo in a config file, or a key given twice, would otherwise be ignored without a word.
    private static func checkKeys(ofConfigFile path: String, against knownKeys: Set<String>) throws {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw ValidationError("config file \(path): cannot be read")
        }
        var parser = JSONParser()
        let document: JSONDocument
        do {
            document = try parser.parse(Array(data))
            // A key given twice would otherwise be read as its last value without a word.
            _ = try JSON(document.root)
        } catch {
            throw ValidationError("config file \(path): \(error)")
        }
        guard document.root.kind == .object else { throw ValidationError("config file \(path): the top level is not an object") }
        func check(_ object: JSONValue, prefix: String) throws {
            for member in object.members {
                let key = prefix + (member.key.string ?? "")
                if member.value.kind == .object && !knownKeys.contains(key) {
                    try check(member.value, prefix: key + ".")
                } else if !knownKeys.contains(key) {
                    throw ValidationError("config file \(path): unknown key \(key)")
                }
            }
        }
        try check(document.root, prefix: "")
    }
}

/// Keeps every read's event: which provider answered, and whether the value converted.
private final class AccessRecord: AccessReporter, Sendable {
    private let recorded = Mutex<[AccessEvent]>([])

    var events: [AccessEvent] { recorded.withLock { $0 } }

    func report(_ event: AccessEvent) { recorded.withLock { $0.append(event) } }
}
