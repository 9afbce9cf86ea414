import CXXHash
import Foundation
import PushCore

// `floor.xxh3` is one call of xxHash's own XXH3-64 entry point over the whole buffer (the runtime-
// dispatched one where the library has it, which is what PushCore uses too): the speed no chunked
// stream can beat. It is the only place outside XXH3.swift that calls the C API, on purpose.
func floorXXH3(_ bytes: UnsafeRawBufferPointer) -> UInt64 { pushcore_xxh3_64(bytes.baseAddress, bytes.count, 0) }

/// A pseudo-random resource, so nothing about its contents can be shortcut.
func streamingBytes(_ count: Int) -> [UInt8] {
    var state: UInt64 = 0x5EED
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

// `stream.embedded` streams a 4 MiB resource held the way embedded ones are (a `[UInt8]` in a
// `ResourceRegistry`); the images compiled into the binary are a few KiB (see scripts/make-images.py).
let streamedBytes = streamingBytes(4 << 20)
let streamedResource: EmbeddedResource = {
    var registry = ResourceRegistry()
    return try! registry.register("bench-4mib.bin", bytes: streamedBytes)
}()
let streamedData = Data(streamedBytes)
let digestBytes = streamingBytes(64 << 20)

/// The 64 MiB file `stream.file` reads, removed when the bench exits.
let streamedFilePath: String = {
    let path = NSTemporaryDirectory() + "pushcore-bench-\(getpid()).bin"
    guard FileManager.default.createFile(atPath: path, contents: Data(digestBytes)) else { usage("cannot write \(path)") }
    atexit { unlink(NSTemporaryDirectory() + "pushcore-bench-\(getpid()).bin") }
    return path
}()
let streamedFile = try! FileResource(path: streamedFilePath)

/// `floor.read`: the least a file stream can do. The same file, opened once, read with `pread` in
/// chunks of the stream's size into one buffer, the XXH3-64 of each chunk: what `stream.file` does
/// without its checks, its chunk values or its iterator.
let floorReadDescriptor = open(streamedFilePath, O_RDONLY)
nonisolated(unsafe) let floorReadBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ResourceLimits.defaultChunkSize, alignment: 64)

func floorRead() -> Int {
    var checksum: UInt64 = 0
    var offset = 0
    while true {
        let count = pread(floorReadDescriptor, floorReadBuffer.baseAddress, floorReadBuffer.count, off_t(offset))
        guard count > 0 else { break }
        checksum ^= floorXXH3(UnsafeRawBufferPointer(rebasing: floorReadBuffer[..<count]))
        offset += count
    }
    return Int(truncatingIfNeeded: checksum)
}

func streamEmbeddedPushCore() -> Int {
    var checksum: UInt64 = 0
    for chunk in try! streamedResource.chunks(digests: true) { checksum ^= chunk.digest! }
    return Int(truncatingIfNeeded: checksum)
}

func streamFilePushCore() -> Int {
    var checksum: UInt64 = 0
    var reader = try! streamedFile.chunks(digests: true).makeReader()
    while let chunk = try! reader.next() { checksum ^= chunk.digest! }
    return Int(truncatingIfNeeded: checksum)
}

func makeStreamingWorkloads() -> [Workload] {
    [
        Workload(
            name: "stream.embedded", operations: 1, bytes: streamedBytes.count,
            implementations: [
                Implementation(name: "pushcore", run: streamEmbeddedPushCore),
                // What a straightforward Foundation version does: a `Data` resource, `subdata(in:)` per
                // chunk, then the same digest per chunk.
                Implementation(name: "foundation.baseline") {
                    var checksum: UInt64 = 0
                    var offset = 0
                    while offset < streamedData.count {
                        let end = min(offset + ResourceLimits.defaultChunkSize, streamedData.count)
                        let chunk = streamedData.subdata(in: offset..<end)
                        checksum ^= chunk.withUnsafeBytes { XXH3.hash64($0) }
                        offset = end
                    }
                    return Int(truncatingIfNeeded: checksum)
                },
                Implementation(name: "floor.xxh3") {
                    Int(truncatingIfNeeded: streamedBytes.withUnsafeBytes(floorXXH3))
                },
            ]),
        Workload(
            name: "stream.file", operations: 1, bytes: digestBytes.count,
            implementations: [
                Implementation(name: "pushcore", run: streamFilePushCore),
                Implementation(name: "floor.read", run: floorRead),
                Implementation(name: "floor.xxh3") { Int(truncatingIfNeeded: digestBytes.withUnsafeBytes(floorXXH3)) },
            ]),
        Workload(
            name: "digest.xxh3", operations: 1, bytes: digestBytes.count,
            implementations: [
                Implementation(name: "pushcore") { Int(truncatingIfNeeded: XXH3.hash64(digestBytes)) },
                Implementation(name: "floor.xxh3") { Int(truncatingIfNeeded: digestBytes.withUnsafeBytes(floorXXH3)) },
            ]),
    ]
}

/// Resident memory now, in bytes (Linux: `/proc/self/statm`); nil where unavailable.
func residentBytes() -> Int? {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// How far resident memory rises above where it started while the 64 MiB file streams through
/// once, sampled after every chunk.
func streamFilePeakResidentGrowth() -> Int? {
    _ = streamedFile.count  // creates the file first, outside the measurement
    guard let before = residentBytes() else { return nil }
    var peak = before
    var reader = try! streamedFile.chunks(digests: true).makeReader()
    while let chunk = try! reader.next() {
        blackHole &+= Int(truncatingIfNeeded: chunk.digest!)
        peak = max(peak, residentBytes() ?? peak)
    }
    return peak - before
}
