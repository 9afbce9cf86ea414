import Foundation
import PushCore
import SimdjsonAnchor

// `swift run -c release bench [--json] [--quick] [--filter REGEX] [--corpus DIR]... [--compare FILE] [--save FILE]`

#if DEBUG
if !CommandLine.arguments.contains("--allow-debug") {
    FileHandle.standardError.write(
        Data("error: bench measures nothing useful in a debug build; run `swift run -c release bench` (or pass --allow-debug)\n".utf8))
    exit(1)
}
FileHandle.standardError.write(Data("warning: DEBUG BUILD — these numbers mean nothing\n".utf8))
#endif

let usageLine = "usage: bench [--json] [--quick] [--filter REGEX] [--corpus DIR]... [--compare FILE] [--save FILE]"
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

struct Arguments {
    var json = false
    var quick = false
    var filter: String?
    /// The bench corpora unless `--corpus` names others: small edge cases, ~1 KB mostly-ASCII
    /// payloads, and international ones (non-ASCII text, escapes, pretty-printed).
    var corpora: [URL] = []
    var compare: URL?
    /// Where the run's JSON lines also go, whatever is printed: `scripts/bench-chart.py` draws them.
    var save: URL?

    static func parse(_ arguments: [String]) -> Arguments {
        var parsed = Arguments()
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--json": parsed.json = true
            case "--quick": parsed.quick = true
            case "--allow-debug": break
            case "--filter":
                guard let value = iterator.next() else { usage("--filter needs a regular expression") }
                parsed.filter = value
            case "--corpus":
                guard let value = iterator.next() else { usage("--corpus needs a folder") }
                parsed.corpora.append(URL(fileURLWithPath: value))
            case "--compare":
                guard let value = iterator.next() else { usage("--compare needs a file of `bench --json` lines") }
                parsed.compare = URL(fileURLWithPath: value)
            case "--save":
                guard let value = iterator.next() else { usage("--save needs a file to write the JSON lines to") }
                parsed.save = URL(fileURLWithPath: value)
            case "-h", "--help":
                print(usageLine)
                exit(0)
            default: usage("unknown argument \(argument)")
            }
        }
        if parsed.corpora.isEmpty {
            parsed.corpora = [
                "Corpus/valid", "Benchmarks/rich-payloads", "Benchmarks/international-payloads", "Benchmarks/escaped-payloads",
                "Benchmarks/indented-payloads",
            ].map {
                repository.appendingPathComponent($0)
            }
        }
        return parsed
    }
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench: \(message)\n\(usageLine)\n".utf8))
    exit(2)
}

let arguments = Arguments.parse(CommandLine.arguments)
let filter: Regex<AnyRegexOutput>?
do {
    filter = try arguments.filter.map { try Regex($0) }
} catch {
    usage("invalid --filter: \(error)")
}

// MARK: Inputs

func loadCorpus(_ folder: URL) -> [[UInt8]] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
        usage("cannot read the corpus folder \(folder.path)")
    }
    return names.filter { $0.hasSuffix(".json") }.sorted().compactMap {
        (try? Data(contentsOf: folder.appendingPathComponent($0))).map { [UInt8]($0) }
    }
}

@exclusivity(unchecked) nonisolated(unsafe) var parser = JSONParser()
/// One corpus folder's inputs. Every implementation runs on the same inputs: those that all of
/// them accept (Foundation, for one, refuses numbers such as 1e400 that JSON allows).
struct Corpus {
    let name: String
    let fileCount: Int
    let jsonFiles: [[UInt8]]
    let payloadFiles: [[UInt8]]

    init(_ folder: URL) {
        name = folder.lastPathComponent == "valid" ? "Corpus/valid" : folder.lastPathComponent
        let allFiles = loadCorpus(folder)
        fileCount = allFiles.count
        jsonFiles = allFiles.filter { bytes in
            (try? parser.validate(bytes)) != nil
                && (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
                && simdjsonAccepts(bytes)
        }
        payloadFiles = jsonFiles.filter { bytes in
            guard let payload = try? APNsPayload(decoding: bytes, parser: &parser), let encoded = try? payload.encoded(limit: .max)
            else { return false }
            return (try? JSONDecoder().decode(CodablePayload.self, from: Data(bytes))) != nil
                && (try? JSONDecoder().decode(CodablePayload.self, from: Data(encoded))) != nil
                && (try? JSONSerialization.jsonObject(with: Data(encoded))) != nil
        }
        guard !jsonFiles.isEmpty else { usage("no JSON files that every parser accepts in \(folder.path)") }
    }
}

let corpora = arguments.corpora.map(Corpus.init)

let silentRich = APNsPayload.silentRichPush(
    richId: "4f1c2a9e8d0b4c7e9a513b6f0e2d7c11", richType: "img", richMessage: "Look at \"this\" photo from the hike!")
var alertPayload = APNsPayload(
    aps: APNsAPS(
        alert: .fields(
            APNsAlertFields(
                title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play poker with you tonight — bring snacks & chips")),
        badge: 9, sound: .named("bingbong.aiff"), threadID: "poker-night", category: "GAME_INVITATION",
        interruptionLevel: .timeSensitive, relevanceScore: 0.75))
alertPayload["gameID"] = "12345678"

let silentRichBytes = try! silentRich.encoded()
let alertBytes = try! alertPayload.encoded()

func totalBytes(_ files: [[UInt8]]) -> Int { files.reduce(0) { $0 + $1.count } }

// Foundation's inputs, prepared outside the timed region like ours.
let silentRichData = Data(silentRichBytes)
func foundationObject(_ bytes: [UInt8]) -> Any { try! JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) }
let silentRichFoundation = foundationObject(silentRichBytes)
let alertFoundation = foundationObject(alertBytes)
let decoder = JSONDecoder()
let encoder = JSONEncoder()
func codable(_ bytes: [UInt8]) -> CodablePayload { try! decoder.decode(CodablePayload.self, from: Data(bytes)) }
let silentRichCodable = codable(silentRichBytes)
let alertCodable = codable(alertBytes)

// MARK: Implementations

@exclusivity(unchecked) nonisolated(unsafe) var buffer: [UInt8] = []
buffer.reserveCapacity(8192)

func buildPushCore(_ models: [APNsPayload]) -> Implementation {
    Implementation(name: "pushcore") {
        models.withUnsafeBufferPointer { models in
            var checksum = 0
            // The reused buffer is a local for the loop, as in a caller's own hot loop: a
            // global array is reached through its accessor at every use (swapped, not copied:
            // no allocation).
            var local: [UInt8] = []
            swap(&local, &buffer)
            defer { swap(&local, &buffer) }
            for index in models.indices {
                local.removeAll(keepingCapacity: true)
                try! models[index].encode(into: &local)
                checksum &+= local.count
            }
            return checksum
        }
    }
}

func buildSerialization(_ objects: [Any]) -> Implementation {
    Implementation(name: "foundation.JSONSerialization") {
        objects.reduce(0) { $0 &+ (try! JSONSerialization.data(withJSONObject: $1)).count }
    }
}

func buildEncoder(_ models: [CodablePayload]) -> Implementation {
    Implementation(name: "foundation.JSONEncoder") {
        models.reduce(0) { $0 &+ (try! encoder.encode($1)).count }
    }
}

func parsePushCore(_ files: [[UInt8]]) -> Implementation {
    Implementation(name: "pushcore") {
        var checksum = 0
        for index in files.indices { checksum &+= try! parser.parse(files[index], touchEveryValue) }
        return checksum
    }
}

func parseSerialization(_ files: [Data]) -> Implementation {
    Implementation(name: "foundation.JSONSerialization") {
        var checksum = 0
        for index in files.indices {
            checksum &+= touchEveryFoundationValue(try! JSONSerialization.jsonObject(with: files[index], options: [.fragmentsAllowed]))
        }
        return checksum
    }
}

func simdjsonAccepts(_ bytes: [UInt8]) -> Bool {
    guard let anchor = simdjson_anchor_parser_create() else { return false }
    defer { simdjson_anchor_parser_destroy(anchor) }
    var padded = bytes + [UInt8](repeating: 0, count: simdjson_anchor_padding())
    return padded.withUnsafeMutableBufferPointer { simdjson_anchor_parse_walk(anchor, $0.baseAddress, bytes.count) >= 0 }
}

/// simdjson's DOM parse of each document and the same walk, through the C++ shim. Each document is
/// copied once, outside the timed region, into a buffer with the padding simdjson reads past its
/// end; the parser is reused, as a simdjson user does. Two rows where the machine allows: simdjson
/// with the best kernel it picks at run time, and pinned to its 128-bit one, the vector width
/// PushCore's scanner is compiled for.
func parseSimdjson(_ files: [[UInt8]]) -> [Implementation] {
    let padding = simdjson_anchor_padding()
    let documents = files.map { file -> UnsafeBufferPointer<UInt8> in
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: file.count + padding)
        copy.initialize(repeating: 0)
        _ = copy.initialize(from: file)
        return UnsafeBufferPointer(rebasing: UnsafeBufferPointer(copy)[..<file.count])
    }
    func implementation(_ name: String, _ anchor: OpaquePointer) -> Implementation {
        Implementation(name: name) {
            var checksum = 0
            for document in documents { checksum &+= Int(simdjson_anchor_parse_walk(anchor, document.baseAddress, document.count)) }
            return checksum
        }
    }
    guard let best = simdjson_anchor_parser_create() else { fatalError("simdjson: out of memory") }
    var implementations = [implementation("anchor.simdjson", best)]
    if simdjsonBestKernel != simdjsonNarrowKernel, let narrow = simdjson_anchor_parser_create_with_kernel(simdjsonNarrowKernel) {
        implementations.append(implementation("anchor.simdjson.\(simdjsonNarrowKernel)", narrow))
    }
    return implementations
}

let simdjsonBestKernel = String(cString: simdjson_anchor_best_kernel())
/// simdjson's SSE4.2 kernel: 128-bit vectors, as in PushCore's x86-64 build (whose baseline is SSE2).
let simdjsonNarrowKernel = "westmere"

let payloadWorkloads: [Workload] = [
    Workload(
        name: "build.silent-rich", operations: 1, bytes: silentRichBytes.count,
        implementations: [buildPushCore([silentRich]), buildSerialization([silentRichFoundation]), buildEncoder([silentRichCodable])]),
    Workload(
        name: "build.alert", operations: 1, bytes: alertBytes.count,
        implementations: [buildPushCore([alertPayload]), buildSerialization([alertFoundation]), buildEncoder([alertCodable])]),
    Workload(
        name: "parse.silent-rich", operations: 1, bytes: silentRichBytes.count,
        implementations: [parsePushCore([silentRichBytes]), parseSerialization([silentRichData])] + parseSimdjson([silentRichBytes])),
]

/// `model` with each custom value that is pre-encoded JSON (`.raw`) as a tree of typed values.
func withTypedCustomValues(_ model: APNsPayload) -> APNsPayload {
    var typed = model
    typed.customKeys = model.customKeys.map { member in
        guard case .raw(let raw) = member.value else { return member }
        return JSONMember(member.key, try! JSON(try! parser.parse(raw.bytes).root))
    }
    return typed
}

/// The workloads over one corpus; their inputs are prepared here, outside the timed region.
func corpusWorkloads(_ corpus: Corpus) -> [Workload] {
    let jsonFiles = corpus.jsonFiles, payloadFiles = corpus.payloadFiles
    let models = payloadFiles.map { try! APNsPayload(decoding: $0, parser: &parser) }
    let modelBytes = models.map { try! $0.encoded(limit: .max) }
    let typedModels = models.map(withTypedCustomValues)
    precondition(typedModels.map { try! $0.encoded(limit: .max) } == modelBytes, "a typed model encodes otherwise")
    let payloadData = payloadFiles.map { Data($0) }
    var workloads = [
        Workload(
            name: "parse.corpus", corpus: corpus.name, operations: jsonFiles.count, bytes: totalBytes(jsonFiles),
            implementations: [parsePushCore(jsonFiles), parseSerialization(jsonFiles.map { Data($0) })] + parseSimdjson(jsonFiles))
    ]
    guard !payloadFiles.isEmpty else { return workloads }
    workloads += [
        Workload(
            name: "build.corpus", corpus: corpus.name, operations: models.count, bytes: totalBytes(modelBytes),
            implementations: [
                buildPushCore(models), buildSerialization(modelBytes.map(foundationObject)), buildEncoder(modelBytes.map(codable)),
            ]),
        // The same payloads with their custom values as typed trees, as an app that builds its
        // payload from its own values has them (a decoded payload keeps them as encoded bytes).
        Workload(
            name: "build.corpus.typed", corpus: corpus.name, operations: typedModels.count, bytes: totalBytes(modelBytes),
            implementations: [
                buildPushCore(typedModels), buildSerialization(modelBytes.map(foundationObject)), buildEncoder(modelBytes.map(codable)),
            ]),
        Workload(
            name: "decode.corpus", corpus: corpus.name, operations: payloadFiles.count, bytes: totalBytes(payloadFiles),
            implementations: [
                Implementation(name: "pushcore") {
                    var checksum = 0
                    for index in payloadFiles.indices {
                        checksum &+= try! APNsPayload(decoding: payloadFiles[index], parser: &parser).customKeys.count
                    }
                    return checksum
                },
                Implementation(name: "foundation.JSONSerialization") {
                    payloadData.reduce(0) {
                        $0 &+ payloadFromFoundation(try! JSONSerialization.jsonObject(with: $1))!.customKeys.count
                    }
                },
                Implementation(name: "foundation.JSONDecoder") {
                    payloadData.reduce(0) { $0 &+ (try! decoder.decode(CodablePayload.self, from: $1)).custom.count }
                },
            ]),
        Workload(
            name: "view.corpus", corpus: corpus.name, operations: payloadFiles.count, bytes: totalBytes(payloadFiles),
            implementations: [
                Implementation(name: "pushcore") {
                    var checksum = 0
                    for index in payloadFiles.indices { checksum &+= try! APNsPayloadView.read(payloadFiles[index], parser: &parser, readEveryField) }
                    return checksum
                },
                Implementation(name: "foundation.JSONSerialization") {
                    payloadData.reduce(0) {
                        $0 &+ payloadFromFoundation(try! JSONSerialization.jsonObject(with: $1))!.customKeys.count
                    }
                },
            ]),
        Workload(
            name: "lint.corpus", corpus: corpus.name, operations: payloadFiles.count, bytes: totalBytes(payloadFiles),
            implementations: [
                Implementation(name: "pushcore") {
                    var checksum = 0
                    for index in payloadFiles.indices { checksum &+= try! APNsLinter.lint(payloadFiles[index], parser: &parser).count }
                    return checksum
                },
                parseSerialization(payloadData),
            ]),
    ]
    return workloads
}

// MARK: SAS

let sasResource = "https://my-namespace.servicebus.windows.net/my-hub/messages/"
let sasKeyName = "DefaultFullSharedAccessSignature"
let sasKey = "JHadkDHkdhi74jaHdakhy/rZ6KEdfhasYdahO8JOx/1sZXTUlc="
let sasSigner = SASSigner(keyName: sasKeyName, key: sasKey)
let sasCache = SASTokenCache(signer: sasSigner)
let foundationCache = FoundationSASCache(keyName: sasKeyName, key: sasKey)
nonisolated(unsafe) var sasExpiry: Int64 = 1_700_000_000
let sasBytes = (try! sasSigner.token(for: sasResource, expiry: sasExpiry)).utf8.count

let sasWorkloads: [Workload] = [
    Workload(
        name: "sas.mint", operations: 1, bytes: sasBytes,
        implementations: [
            // A new expiry every time, so nothing can be reused between tokens.
            Implementation(name: "pushcore") {
                sasExpiry &+= 1
                return try! sasSigner.token(for: sasResource, expiry: sasExpiry).utf8.count
            },
            Implementation(name: "foundation.baseline") {
                sasExpiry &+= 1
                return foundationSASToken(resource: sasResource, keyName: sasKeyName, key: sasKey, expiry: sasExpiry).utf8.count
            },
        ]),
    Workload(
        name: "sas.cached", operations: 1, bytes: sasBytes,
        implementations: [
            Implementation(name: "pushcore") { try! sasCache.token(for: sasResource).utf8.count },
            Implementation(name: "foundation.baseline") { foundationCache.token(for: sasResource).utf8.count },
        ]),
]

// MARK: Run

/// An earlier run's medians (`--compare`), by benchmark, corpus and implementation; read with
/// PushCore's own parser.
let earlier: [String: Double] = {
    guard let file = arguments.compare else { return [:] }
    guard let data = try? Data(contentsOf: file) else { usage("cannot read \(file.path)") }
    var medians: [String: Double] = [:]
    for line in data.split(separator: UInt8(ascii: "\n")) where line.first == UInt8(ascii: "{") {
        guard let row = try? parser.parse(Array(line)).root, let benchmark = row["benchmark"]?.string,
            let implementation = row["implementation"]?.string, let median = row["ns_per_op"]?.double
        else { usage("\(file.path) is not the output of `bench --json`: \(String(decoding: line.prefix(80), as: UTF8.self))") }
        medians[rowKey(benchmark, row["corpus"]?.string, implementation)] = median
    }
    return medians
}()

func rowKey(_ benchmark: String, _ corpus: String?, _ implementation: String) -> String {
    "\(benchmark) \(corpus ?? "-") \(implementation)"
}

/// The run's JSON lines for `--save`, written to the file once the run is complete (so that
/// `--compare` and `--save` may name the same file, and an interrupted run leaves the old one).
nonisolated(unsafe) var savedLines: [String] = []

let options = arguments.quick ? BenchOptions.quick : BenchOptions()
if !arguments.json {
    print("PushCore bench")
    for corpus in corpora {
        print(
            "corpus \(corpus.name): \(corpus.fileCount) files; \(corpus.jsonFiles.count) JSON texts every parser accepts, "
                + "\(corpus.payloadFiles.count) APNs payloads every decoder accepts")
    }
    print("xxHash: \(XXH3.usesRuntimeDispatch ? "runtime-dispatched (best of SSE2/AVX2/AVX-512)" : "portable") entry points")
    print("medians of \(options.samples) interleaved samples; ns per payload (min–max); speedup = baseline ÷ pushcore")
    print("(below 1x: the baseline is faster; anchor.simdjson is the C++ simdjson library, the fastest parser there is)")
    print(
        "simdjson: \(simdjsonBestKernel) kernel (\(String(cString: simdjson_anchor_best_kernel_description())))"
            + (simdjsonBestKernel == simdjsonNarrowKernel ? "" : "; anchor.simdjson.\(simdjsonNarrowKernel) pins its 128-bit SSE4.2 kernel"))
    if let compare = arguments.compare { print("change: each row's median against the same row in \(compare.lastPathComponent)") }
    print(
        "\nbenchmark".padding(toLength: 20, withPad: " ", startingAt: 0) + "corpus".padding(toLength: 24, withPad: " ", startingAt: 0)
            + "implementation".padding(toLength: 31, withPad: " ", startingAt: 0)
            + "ns/op".leftPadded(10) + "  (min–max)".padding(toLength: 22, withPad: " ", startingAt: 0) + "MB/s".leftPadded(9)
            + "allocs/op".leftPadded(11) + "speedup".leftPadded(10) + (arguments.compare == nil ? "" : "change".leftPadded(9)))
}
let workloads =
    payloadWorkloads + makeFCMWorkloads() + corpora.flatMap(corpusWorkloads) + sasWorkloads + makeProviderTokenWorkloads() + makeStreamingWorkloads()
for workload in workloads {
    if let filter, (try? filter.firstMatch(in: workload.name)) == nil { continue }
    // Measured before timing, while no other stream has touched the heap's high-water mark.
    let peakGrowth = workload.name == "stream.file" ? streamFilePeakResidentGrowth() : nil
    for var measurement in measure(workload, options: options) {
        if measurement.implementation == "pushcore" { measurement.peakResidentGrowth = peakGrowth }
        measurement.earlierMedian = earlier[rowKey(measurement.workload, measurement.corpus, measurement.implementation)]
        if arguments.json {
            print(measurement.jsonLine)
        } else {
            print(measurement.tableRow)
        }
        savedLines.append(measurement.jsonLine)
        fflush(nil)  // every stream: progress shows even when piped
    }
    if let peakGrowth, !arguments.json {
        print(
            "stream.file: resident memory rose at most \(peakGrowth / 1024) KiB while streaming \(digestBytes.count >> 20) MiB in \(ResourceLimits.defaultChunkSize >> 10) KiB chunks"
        )
    }
}
let sendNames = Set(
    ["apns.send", "apns.send.bulk", "apns.send.client", "fcm.send", "fcm.send.client"].filter { name in
        filter.map { (try? $0.firstMatch(in: name)) != nil } ?? true
    })
if !sendNames.isEmpty {
    let sendsPerSample = arguments.quick ? 1000 : 10_000
    let samples = arguments.quick ? 1 : 5
    let apnsNames = sendNames.filter { $0.hasPrefix("apns.") }, fcmNames = sendNames.filter { $0.hasPrefix("fcm.") }
    let measurements =
        (apnsNames.isEmpty ? [] : measureAPNsSend(samples: samples, sendsPerSample: sendsPerSample, names: apnsNames))
        + (fcmNames.isEmpty ? [] : measureFCMSend(samples: samples, sendsPerSample: sendsPerSample, names: fcmNames))
    for var measurement in measurements where sendNames.contains(measurement.workload) {
        measurement.earlierMedian = earlier[rowKey(measurement.workload, nil, measurement.implementation)]
        print(arguments.json ? measurement.jsonLine : measurement.tableRow)
        savedLines.append(measurement.jsonLine)
        if !arguments.json {
            let latency = measurement.latency.map { ", request latency p50 \(format($0.p50 / 1000)) µs, p99 \(format($0.p99 / 1000)) µs" } ?? ""
            let cpu =
                measurement.cpuPerOperation.map { ", CPU \(format($0.median / 1000)) µs/send (\(format($0.min / 1000))–\(format($0.max / 1000)))" }
                ?? ""
            let scope = measurement.workload.hasSuffix(".send.client") ? "the client's process" : "client and emulator"
            print("  \(measurement.workload): \(format(measurement.operationsPerSecond, 0)) sends/s\(latency)\(cpu); CPU and allocs/op over \(scope)")
        }
        fflush(nil)
    }
}
if let save = arguments.save {
    guard (try? Data((savedLines.joined(separator: "\n") + "\n").utf8).write(to: save, options: .atomic)) != nil else {
        usage("cannot write \(save.path)")
    }
}
if !arguments.json { print("\n(checksum \(blackHole & 0xFFFF))") } else if blackHole == 42 { print("") }

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

extension Measurement {
    var tableRow: String {
        let range = "  (\(format(nanoseconds.min))–\(format(nanoseconds.max)))"
        return workload.padding(toLength: 19, withPad: " ", startingAt: 0)
            + (corpus ?? "").padding(toLength: 24, withPad: " ", startingAt: 0)
            + implementation.padding(toLength: 31, withPad: " ", startingAt: 0)
            + format(nanoseconds.median).leftPadded(10) + range.padding(toLength: 22, withPad: " ", startingAt: 0)
            + format(megabytesPerSecond).leftPadded(9)
            + (allocationsPerOperation.map { format($0, 2) } ?? "n/a").leftPadded(11)
            + (pushcoreSpeedup.map { format($0, $0 < 10 ? 2 : 1) + "x" } ?? "").leftPadded(10)
            + (earlierMedian.map { format(100 * (nanoseconds.median / $0 - 1), 1) + "%" }.map { $0.hasPrefix("-") ? $0 : "+" + $0 } ?? "")
            .leftPadded(arguments.compare == nil ? 0 : 9)
    }

    var jsonLine: String {
        var fields = [
            "\"benchmark\":\"\(workload)\"", "\"implementation\":\"\(implementation)\"", "\"bytes_per_op\":\(bytesPerOperation)",
            "\"ns_per_op\":\(format(nanoseconds.median, 2))", "\"ns_per_op_min\":\(format(nanoseconds.min, 2))",
            "\"ns_per_op_max\":\(format(nanoseconds.max, 2))", "\"mb_per_s\":\(format(megabytesPerSecond, 2))",
            "\"ops_per_s\":\(format(operationsPerSecond, 0))",
            "\"allocations_per_op\":\(allocationsPerOperation.map { format($0, 2) } ?? "null")",
        ]
        if let pushcoreSpeedup { fields.append("\"pushcore_speedup\":\(format(pushcoreSpeedup, 2))") }
        if let peakResidentGrowth { fields.append("\"peak_rss_growth_bytes\":\(peakResidentGrowth)") }
        if let corpus { fields.insert("\"corpus\":\"\(corpus)\"", at: 1) }
        if let earlierMedian { fields.append("\"ns_per_op_earlier\":\(format(earlierMedian, 2))") }
        if let latency {
            fields.append("\"latency_p50_ns\":\(format(latency.p50, 0))")
            fields.append("\"latency_p99_ns\":\(format(latency.p99, 0))")
        }
        if let cpuPerOperation {
            fields.append("\"cpu_ns_per_op\":\(format(cpuPerOperation.median, 0))")
            fields.append("\"cpu_ns_per_op_min\":\(format(cpuPerOperation.min, 0))")
            fields.append("\"cpu_ns_per_op_max\":\(format(cpuPerOperation.max, 0))")
        }
        if allocationsCountProcess { fields.append("\"allocations_scope\":\"process\"") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
