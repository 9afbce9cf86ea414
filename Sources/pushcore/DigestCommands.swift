import ArgumentParser
import PushCore

struct DigestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Print each file's XXH3-64 and XXH3-128 digests, then its name.",
        discussion: """
            Lowercase hex in the canonical (big-endian) form that xxhsum -H3 and xxh128sum print;
            each file is read once, in chunks, never whole into memory.

            Example:
              pushcore digest photo.png
              b4f9a5cf2c5d0a6e  6c2d0e1f9a8b7c6d5e4f3a2b1c0d9e8f  photo.png
            """
    )

    @Argument(help: "Files to digest.") var files: [String]

    func run() throws {
        var failed = false
        for path in files {
            do throws(ResourceError) {
                let digests = try FileResource(path: path).digests()
                Terminal.write("\(XXH3.canonicalHex(digests.hash64))  \(digests.hash128.hexString)  \(path)")
            } catch {
                Terminal.writeError(path, code: error.code.rawValue, error.message)
                failed = true
            }
        }
        if failed { throw CommandFailure.invalid }
    }
}

struct ChunksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chunks",
        abstract: "Print one line per chunk of a file: offset, length and XXH3-64 in hex.",
        discussion: """
            Example:
              pushcore chunks --size 65536 photo.png
              0 65536 3c8f1e2a9b7d6c5e
              65536 12045 0a1b2c3d4e5f6a7b
            """
    )

    @Option(help: "Bytes per chunk, 1 to \(ResourceLimits.maximumChunkSize) (default 65536).")
    var size: Int = ResourceLimits.defaultChunkSize

    @Argument(help: "The file.") var file: String

    func validate() throws {
        guard (1...ResourceLimits.maximumChunkSize).contains(size) else {
            throw ValidationError("--size must be between 1 and \(ResourceLimits.maximumChunkSize)")
        }
    }

    func run() throws {
        do throws(ResourceError) {
            var reader = try FileResource(path: file).chunks(size: size, digests: true).makeReader()
            while let chunk = try reader.next() {
                Terminal.write("\(chunk.offset) \(chunk.bytes.count) \(XXH3.canonicalHex(chunk.digest!))")
            }
        } catch {
            Terminal.writeError(file, code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}
