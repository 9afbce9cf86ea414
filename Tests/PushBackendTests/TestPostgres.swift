import Foundation
import Logging
import PostgresNIO
import PushTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL server of this test process's own: `initdb` into a temporary folder (as the
/// `postgres` user when the tests run as root, which initdb refuses), trust authentication on a
/// free port of 127.0.0.1, no fsync; stopped and removed when the process exits. Each test takes a
/// fresh database from ``makeDatabase()``.
enum TestPostgres {
    struct Server: Sendable {
        let port: Int
        let directory: String
    }

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    /// Started on first use; the error says why not (PostgreSQL missing: `make deps` installs it).
    /// Read it through ``running()`` only.
    private static let server: Result<Server, SetupError> = start()

    /// The server, started on a thread of its own: `start()` blocks for seconds (initdb, then
    /// `pg_ctl start -w`), and every test that needs it waits in the static's initialiser. On the
    /// cooperative pool, two such tests hold both threads of a two-core machine and stall every
    /// other test in the process until the server is up.
    static func running() async throws -> Server {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: server.mapError { $0 as any Error }) }.start()
        }
    }

    /// `postgres://postgres@127.0.0.1:PORT/NAME` of a new, empty database.
    static func makeDatabase() async throws -> String {
        let name = "pushcore_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await execute("CREATE DATABASE \(name)", database: "postgres")
        return "postgres://postgres@127.0.0.1:\(try await running().port)/\(name)?sslmode=disable"
    }

    /// Runs one statement as the superuser, outside any store.
    static func execute(_ sql: String, database: String) async throws {
        let port = try await running().port
        let client = PostgresClient(
            configuration: .init(
                host: "127.0.0.1", port: port, username: "postgres", password: nil, database: database, tls: .disable),
            backgroundLogger: Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await client.query(PostgresQuery(unsafeSQL: sql))
        }
    }

    private static func start() -> Result<Server, SetupError> {
        guard let bin = binaries() else { return .failure(SetupError(description: "PostgreSQL's initdb and pg_ctl are not installed (make deps)")) }
        guard let directory = try? temporaryDirectory() else { return .failure(SetupError(description: "mkdtemp failed")) }
        let asRoot = getuid() == 0
        if asRoot, run(["chown", "postgres", directory]) != 0 {
            return .failure(SetupError(description: "cannot give \(directory) to the postgres user"))
        }
        let data = directory + "/data"
        guard run(asUser(asRoot, [bin + "/initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])) == 0 else {
            return .failure(SetupError(description: "initdb failed"))
        }
        for _ in 0..<5 {
            guard let port = try? Int(TCPListener.unusedPort()) else { continue }
            let options = "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(directory) -c fsync=off -c max_connections=200"
            if run(asUser(asRoot, [bin + "/pg_ctl", "-D", data, "-l", directory + "/log", "-o", options, "-w", "-t", "30", "start"])) == 0 {
                stopCommand = asUser(asRoot, [bin + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
                folder = directory
                atexit {
                    if let command = TestPostgres.stopCommand { _ = TestPostgres.run(command) }
                    if let folder = TestPostgres.folder { _ = TestPostgres.run(["rm", "-rf", folder]) }
                }
                return .success(Server(port: port, directory: directory))
            }
        }
        return .failure(SetupError(description: "the PostgreSQL server did not start; see \(directory)/log"))
    }

    nonisolated(unsafe) private static var stopCommand: [String]?
    nonisolated(unsafe) private static var folder: String?

    /// The folder of `initdb` and `pg_ctl`: on the PATH, or Debian's /usr/lib/postgresql/VERSION/bin.
    private static func binaries() -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where FileManager.default.isExecutableFile(atPath: folder + "/initdb") && FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl") {
            return folder
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let folder = "/usr/lib/postgresql/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: folder + "/initdb") { return folder }
        }
        return nil
    }

    private static func asUser(_ asRoot: Bool, _ command: [String]) -> [String] {
        asRoot ? ["runuser", "-u", "postgres", "--"] + command : command
    }

    /// Runs a command to its end with stdio on /dev/null; its exit status. Not `Process`: on Linux
    /// it waits until every process that inherited its pipe has gone, and `pg_ctl start` leaves
    /// the server behind holding it.
    @discardableResult
    static func run(_ command: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else of this process: the server outlives the test that started it, and would
        // hold open every socket and pipe it inherited (a flood test's connections, swift test's
        // pipes) until the process exits. glibc's closefrom action is looked up by name: Swift's
        // Glibc module leaves GNU extensions out.
        #if canImport(Glibc)
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(addCloseFrom, to: AddCloseFrom.self)(&actions, 3)
        }
        #endif
        var arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, command[0], &actions, nil, &arguments, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}
