import NIOCore
import Synchronization

/// The API's open connections, by client address, and whether each is idle (no request in
/// progress): what lets one client's connections be bounded without refusing anyone else.
///
/// A client address at its limit makes room by losing its own oldest idle connection, or is
/// refused; the server at its connection cap makes room by closing the oldest idle connection of
/// anyone. Either way an idle keep-alive connection costs its owner a reconnect, while a flood of
/// held sockets cannot keep a new client out. A connection being closed no longer counts, so that
/// one arrival closes one connection at most.
package final class ConnectionRegistry: Sendable {
    private struct Entry {
        let channel: any Channel
        let address: String
        let sequence: Int
        var idle = true
        var closing = false
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Connections per address, those being closed left out.
        var live: [String: Int] = [:]
        var closing = 0
        var opened = 0

        /// Marks the oldest idle connection (of `address`, when given) as closing and returns it.
        mutating func closeOldestIdle(of address: String?) -> (any Channel)? {
            let candidates = entries.values.filter { $0.idle && !$0.closing && (address == nil || $0.address == address) }
            guard let oldest = candidates.min(by: { $0.sequence < $1.sequence }) else { return nil }
            entries[ObjectIdentifier(oldest.channel)]?.closing = true
            live[oldest.address, default: 1] -= 1
            closing += 1
            return oldest.channel
        }
    }

    /// The server's connection cap (its ``ConnectionCap``'s).
    let maximum: Int
    let maximumPerAddress: Int
    /// Addresses with no limit of their own: trusted proxies, which carry many clients.
    let unlimited: Set<String>
    private let state = Mutex(State())

    package init(maximum: Int, maximumPerAddress: Int, unlimited: Set<String> = []) {
        self.maximum = max(maximum, 1)
        self.maximumPerAddress = max(maximumPerAddress, 1)
        self.unlimited = unlimited
    }

    /// Counts a new connection in, closing its address's oldest idle one when the address is at
    /// its limit, and anyone's oldest idle one when the server is at its cap (which stops it
    /// accepting until a connection closes: this one does).
    /// - Returns: False when the address is at its limit with none idle: close the new one.
    func admit(_ channel: any Channel) -> Bool {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let (admitted, displaced) = state.withLock { state -> (Bool, [any Channel]) in
            var displaced: [any Channel] = []
            if !unlimited.contains(address) && state.live[address, default: 0] >= maximumPerAddress {
                guard let oldest = state.closeOldestIdle(of: address) else { return (false, []) }
                displaced.append(oldest)
            }
            state.opened += 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address, sequence: state.opened)
            state.live[address, default: 0] += 1
            // Counted here, once the connection is set up, rather than as it is accepted: a burst
            // of accepts is counted in whole before any of it is set up.
            if state.entries.count - state.closing >= maximum, let oldest = state.closeOldestIdle(of: nil) {
                displaced.append(oldest)
            }
            return (true, displaced)
        }
        for connection in displaced { connection.close(promise: nil) }
        return admitted
    }

    func remove(_ channel: any Channel) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            if entry.closing {
                state.closing -= 1
            } else {
                state.live[entry.address, default: 1] -= 1
            }
            if state.live[entry.address] == 0 { state.live[entry.address] = nil }
        }
    }

    func setIdle(_ channel: any Channel, _ idle: Bool) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.idle = idle }
    }
}
