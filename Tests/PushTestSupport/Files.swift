#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixture file could not be made.
package struct FileSetupError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

/// Bytes that differ at every position, so a misplaced chunk cannot go unnoticed.
package func patternBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
}

/// A file in a fresh temporary folder, removed with the folder when `body` returns.
package func withTemporaryFile<R>(_ bytes: [UInt8], name: String = "resource.bin", _ body: (String, String) throws -> R) throws -> R {
    let (folder, path) = try makeTemporaryFile(bytes, name: name)
    defer { _ = try? runRemoveAll(folder) }
    return try body(folder, path)
}

/// A file in a fresh temporary folder, removed with the folder when `body` returns.
package func withTemporaryFile<R>(
    _ bytes: [UInt8], name: String = "resource.bin", _ body: (String, String) async throws -> R
) async throws -> R {
    let (folder, path) = try makeTemporaryFile(bytes, name: name)
    defer { _ = try? runRemoveAll(folder) }
    return try await body(folder, path)
}

/// A fresh folder under /tmp; the caller removes it, or leaves it for the system to.
package func temporaryDirectory() throws -> String {
    var template = Array("/tmp/pushcore-test-XXXXXX".utf8CString)
    guard let pointer = mkdtemp(&template) else { throw FileSetupError("mkdtemp failed") }
    return String(cString: pointer)
}

private func makeTemporaryFile(_ bytes: [UInt8], name: String) throws -> (folder: String, path: String) {
    let folder = try temporaryDirectory()
    let path = folder + "/" + name
    do {
        try writeFile(path, bytes)
    } catch {
        _ = try? runRemoveAll(folder)
        throw error
    }
    return (folder, path)
}

/// A new file in /tmp holding `bytes`; the caller removes it.
package func temporaryFile(_ bytes: [UInt8]) throws -> String {
    var template = Array("/tmp/pushcore-test-XXXXXX".utf8CString)
    let descriptor = mkstemp(&template)
    guard descriptor >= 0 else { throw FileSetupError("mkstemp failed") }
    close(descriptor)
    let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    try writeFile(path, bytes)
    return path
}

package func writeFile(_ path: String, _ bytes: [UInt8], append: Bool = false) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o644)
    guard descriptor >= 0 else { throw FileSetupError("\(path): open for writing failed") }
    defer { close(descriptor) }
    var written = 0
    while written < bytes.count {
        let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
        guard result > 0 else { throw FileSetupError("\(path): write failed") }
        written += result
    }
}

private func runRemoveAll(_ folder: String) throws {
    guard let directory = opendir(folder) else { return }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." {
            let path = folder + "/" + name
            if rmdir(path) != 0 { unlink(path) }
        }
    }
    closedir(directory)
    rmdir(folder)
}
