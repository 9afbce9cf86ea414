/// The package's version, in one place: `pushcore --version` prints it, and `CHANGELOG.md`'s
/// latest entry is headed with it (a test holds the two together).
public enum PushCoreVersion {
    public static let current = "0.1.0"
}
