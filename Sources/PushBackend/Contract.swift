/// The API's OpenAPI document (`openapi.yaml` beside this file), as this server answers it.
enum Contract {
    /// The document; without Live Activities and channels when the server sends through a hub,
    /// which has neither (those routes then answer 501): a client generated from what a server
    /// serves calls only what it does. That one is derived from the parsed document by
    /// scripts/generate-openapi (`Generated/openapi-hub.yaml`), and a test holds it to the source.
    static func document(withLiveActivities: Bool) -> [UInt8] {
        withLiveActivities ? PackageResources.openapi_yaml : PackageResources.openapi_hub_yaml
    }
}
