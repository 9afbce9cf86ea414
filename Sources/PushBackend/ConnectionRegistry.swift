import NIOCore
import Synchronization

/// The API's open connections, by client address, and whether each is idle (no request in
/// progress): what lets one client's connections be bounded without refusing anyone else.
///
/// A client address at its limit makes room by losing its own oldest idle connection, or is
/// refused; the server at its connection cap makes room by closing the oldest idle connection of
/// anyone. Either way an idle keep-alive connection costs its owner a reconnect, while a flood of
/// held sockets cannot keep a new client out.
package final class ConnectionRegistry: Sendable {
    private struct Entry {
        let channel: any Channel
        let address: String
        let sequence: Int
        var idle = true
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perAddress: [String: Int] = [:]
        var opened = 0

        /// The oldest idle connection, of `address` when given.
        func oldestIdle(of address: String?) -> Entry? {
            entries.values.filter { $0.idle && (address == nil || $0.address == address) }.min { $0.sequence < $1.sequence }
        }
    }

    let maximumPerAddress: Int
    /// Addresses with no limit of their own: trusted proxies, which carry many clients.
    let unlimited: Set<String>
    private let state = Mutex(State())

    package init(maximumPerAddress: Int, unlimited: Set<String> = []) {
        self.maximumPerAddress = max(maximumPerAddress, 1)
        self.unlimited = unlimited
    }

    /// Counts a new connection in, closing its address's oldest idle one when the address is at
    /// its limit.
    /// - Returns: False when the address is at its limit with none idle: close the new one.
    func admit(_ channel: any Channel) -> Bool {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let (admitted, displaced) = state.withLock { state -> (Bool, (any Channel)?) in
            var displaced: (any Channel)?
            if !unlimited.contains(address) && state.perAddress[address, default: 0] >= maximumPerAddress {
                guard let oldest = state.oldestIdle(of: address) else { return (false, nil) }
                state.entries[ObjectIdentifier(oldest.channel)]?.idle = false  // closing
                displaced = oldest.channel
            }
            state.opened += 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address, sequence: state.opened)
            state.perAddress[address, default: 0] += 1
            return (true, displaced)
        }
        displaced?.close(promise: nil)
        return admitted
    }

    func remove(_ channel: any Channel) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            let remaining = state.perAddress[entry.address, default: 1] - 1
            state.perAddress[entry.address] = remaining > 0 ? remaining : nil
        }
    }

    func setIdle(_ channel: any Channel, _ idle: Bool) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.idle = idle }
    }

    /// Closes the oldest idle connection, if there is one: the server is at its cap.
    func closeOldestIdle() {
        let oldest = state.withLock { state -> (any Channel)? in
            guard let oldest = state.oldestIdle(of: nil) else { return nil }
            state.entries[ObjectIdentifier(oldest.channel)]?.idle = false  // closing
            return oldest.channel
        }
        oldest?.close(promise: nil)
    }
}
