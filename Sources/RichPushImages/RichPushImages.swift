public import PushResources

/// The images a rich push can name, compiled into the binary (drawn by `scripts/make-images.py`).
public enum RichPushImages {
    /// Every embedded image by file name: `pushcore-logo.png`, `sunset.png`.
    public static let registry: ResourceRegistry = {
        do {
            return try ResourceRegistry([
                (name: "pushcore-logo.png", bytes: PackageResources.pushcore_logo_png),
                (name: "sunset.png", bytes: PackageResources.sunset_png),
            ])
        } catch {
            // The names above are fixed and valid; the registry's tests prove it.
            fatalError("embedded image registry: \(error)")
        }
    }()
}
