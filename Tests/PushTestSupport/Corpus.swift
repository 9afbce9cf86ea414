package import Foundation

/// One file of `Corpus/`, found from this file's path so tests run from any directory.
package struct CorpusCase: Sendable, CustomStringConvertible {
    package let path: URL
    package var name: String { path.deletingPathExtension().lastPathComponent }
    package var description: String { name }

    package var bytes: [UInt8] { [UInt8](try! Data(contentsOf: path)) }

    /// The file beside this one with `pathExtension`.
    package func sibling(_ pathExtension: String) -> [UInt8] {
        [UInt8](try! Data(contentsOf: path.deletingPathExtension().appendingPathExtension(pathExtension)))
    }
}

package enum Corpus {
    package static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    package static let root = repository.appendingPathComponent("Corpus")

    /// The `.json` files of `directory`, in name order.
    package static func cases(in directory: URL) -> [CorpusCase] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { CorpusCase(path: directory.appendingPathComponent($0)) }
    }

    package static func cases(_ folder: String) -> [CorpusCase] { cases(in: root.appendingPathComponent(folder)) }

    package static let valid = cases("valid")
    package static let invalid = cases("invalid")
    /// The bench's payloads of about 1 KB (`bench --corpus Benchmarks/rich-payloads`).
    package static let richPayloads = cases(in: repository.appendingPathComponent("Benchmarks/rich-payloads"))
    /// The bench's payloads with text in many scripts, escapes and pretty-printing.
    package static let internationalPayloads = cases(in: repository.appendingPathComponent("Benchmarks/international-payloads"))
    /// The international payloads as `ensure_ascii` serializers write them: every non-ASCII
    /// character a `\u` escape (`scripts/generate-escaped-payloads.py`).
    package static let escapedPayloads = cases(in: repository.appendingPathComponent("Benchmarks/escaped-payloads"))
    /// The rich and international payloads as pretty printers and people write them: indented with
    /// spaces or tabs, `": "` or `" : "`, LF or CRLF (`scripts/generate-indented-payloads.py`).
    package static let indentedPayloads = cases(in: repository.appendingPathComponent("Benchmarks/indented-payloads"))
}

/// A small, fast, seeded generator (SplitMix64) so property tests are reproducible.
package struct SeededGenerator: RandomNumberGenerator {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// True when the process runs under AddressSanitizer or ThreadSanitizer: they replace `malloc`
/// (so allocations cannot be counted) and multiply resident memory.
package let runningUnderSanitizer: Bool = {
    let program = dlopen(nil, RTLD_NOW)
    return dlsym(program, "__asan_init") != nil || dlsym(program, "__tsan_init") != nil
}()
