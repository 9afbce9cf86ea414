// A stand-in for Apple's UIKit, with only the declarations the PushClient article's app delegate
// uses, spelt as UIApplication.h and UIResponder.h declare them and Swift imports them (main-actor
// classes, the delegate protocol whose methods an app implements, the launch options' key type).
// The delegate's requirements are optional in the SDK (Objective-C); here it has none.
public import Foundation

@MainActor
open class UIResponder: NSObject {}

@MainActor
open class UIApplication: UIResponder {
    public struct LaunchOptionsKey: Hashable, Equatable, RawRepresentable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    open func registerForRemoteNotifications() { fatalError("stand-in") }
}

@MainActor
public protocol UIApplicationDelegate: NSObjectProtocol {}
