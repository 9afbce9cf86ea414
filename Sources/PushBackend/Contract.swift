/// The API's OpenAPI document (`openapi.yaml` beside this file), as this server answers it.
enum Contract {
    /// The document; without Live Activities and channels when the server sends through a hub,
    /// which has neither (those routes then answer 501): a client generated from what a server
    /// serves calls only what it does.
    static func document(withLiveActivities: Bool) -> [UInt8] {
        let full = PackageResources.openapi_yaml
        guard !withLiveActivities else { return full }
        var kept: [Substring] = []
        var skipping = false
        for line in String(decoding: full, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            // A path is a key indented by two spaces under `paths:`; its operations are indented deeper.
            if line.hasPrefix("  /") { skipping = line.hasPrefix("  /api/activities") || line.hasPrefix("  /api/channels") }
            if !line.hasPrefix("   ") && !line.hasPrefix("  /") { skipping = false }
            if skipping || line.hasPrefix("  - name: liveActivities") || line.hasPrefix("    description: Live Activities and broadcast") { continue }
            kept.append(line)
        }
        return Array(kept.joined(separator: "\n").utf8)
    }
}
