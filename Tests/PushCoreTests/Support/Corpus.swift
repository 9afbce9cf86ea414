import Foundation

/// One file of `Corpus/`, found from this file's path so tests run from any directory.
struct CorpusCase: Sendable, CustomStringConvertible {
    let path: URL
    var name: String { path.deletingPathExtension().lastPathComponent }
    var description: String { name }

    var bytes: [UInt8] { [UInt8](try! Data(contentsOf: path)) }

    /// The file beside this one with `pathExtension`.
    func sibling(_ pathExtension: String) -> [UInt8] {
        [UInt8](try! Data(contentsOf: path.deletingPathExtension().appendingPathExtension(pathExtension)))
    }
}

enum Corpus {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let root = repository.appendingPathComponent("Corpus")

    /// The `.json` files of `directory`, in name order.
    static func cases(in directory: URL) -> [CorpusCase] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { CorpusCase(path: directory.appendingPathComponent($0)) }
    }

    static func cases(_ folder: String) -> [CorpusCase] { cases(in: root.appendingPathComponent(folder)) }

    static let valid = cases("valid")
    static let invalid = cases("invalid")
    /// The bench's payloads of about 1 KB (`bench --corpus Benchmarks/rich-payloads`).
    static let richPayloads = cases(in: repository.appendingPathComponent("Benchmarks/rich-payloads"))
}

/// A small, fast, seeded generator (SplitMix64) so property tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// True when the process runs under AddressSanitizer or ThreadSanitizer: they replace `malloc`
/// (so allocations cannot be counted) and multiply resident memory.
let runningUnderSanitizer: Bool = {
    let program = dlopen(nil, RTLD_NOW)
    return dlsym(program, "__asan_init") != nil || dlsym(program, "__tsan_init") != nil
}()
