// A stand-in for Apple's Security framework, with only the declarations PushClient's Keychain
// store uses, spelt as SecItem.h and SecBase.h declare them and Swift imports them (constants as
// `let`s of CFString, status codes as `var`s of OSStatus, the SecItem functions' parameters).
// Linux has no CoreFoundation types to import: Foundation's bridged classes stand in for
// CFString, CFDictionary and CFData, which is how the code uses them (`as CFDictionary`).
public import Foundation

public typealias OSStatus = Int32
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFData = NSData
public typealias CFTypeRef = AnyObject

nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"

public var errSecSuccess: OSStatus { 0 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }

public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { fatalError("stand-in") }
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { fatalError("stand-in") }
public func SecItemDelete(_ query: CFDictionary) -> OSStatus { fatalError("stand-in") }
