// A stand-in for Apple's Darwin module, with only the C library the core's files use, spelt as the
// macOS and iOS SDKs declare it and Swift imports it: arpa/inet.h (inet_pton), netinet/in.h
// (in_addr, in6_addr), sys/socket.h (AF_INET, AF_INET6), time.h (timespec, clockid_t,
// clock_gettime, available from macOS 10.12 and iOS 10), unistd.h (write), sys/errno.h (errno,
// EINTR), stdlib.h (strtod), xlocale.h (locale_t, newlocale, uselocale) and locale.h (LC_NUMERIC).
// The bodies are never run: the availability check only type-checks against it.

public typealias locale_t = OpaquePointer

public struct in_addr {
    public var s_addr: UInt32
    public init() { s_addr = 0 }
}

public struct in6_addr {
    public var __u6_addr: (UInt64, UInt64)
    public init() { __u6_addr = (0, 0) }
}

public var AF_INET: Int32 { 2 }
public var AF_INET6: Int32 { 30 }

public func inet_pton(_ af: Int32, _ src: UnsafePointer<CChar>!, _ dst: UnsafeMutableRawPointer!) -> Int32 { fatalError() }

public struct timespec {
    public var tv_sec: Int
    public var tv_nsec: Int
    public init() { (tv_sec, tv_nsec) = (0, 0) }
}

/// A C enum, which Swift imports as a struct with a raw value.
public struct clockid_t: RawRepresentable, Equatable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
}

public var CLOCK_REALTIME: clockid_t { clockid_t(rawValue: 0) }

@available(macOS 10.12, iOS 10.0, tvOS 10.0, watchOS 3.0, *)
@discardableResult public func clock_gettime(_ __clock_id: clockid_t, _ __tp: UnsafeMutablePointer<timespec>!) -> Int32 { fatalError() }

public func write(_ __fd: Int32, _ __buf: UnsafeRawPointer!, _ __nbyte: Int) -> Int { fatalError() }

public var errno: Int32 {
    get { fatalError() }
    set { fatalError() }
}
public var EINTR: Int32 { 4 }

public func strtod(_ __str: UnsafePointer<CChar>!, _ __endptr: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>!) -> Double { fatalError() }

public var LC_NUMERIC: Int32 { 4 }
public func newlocale(_ mask: Int32, _ locale: UnsafePointer<CChar>!, _ base: locale_t!) -> locale_t! { fatalError() }
@discardableResult public func uselocale(_ locale: locale_t!) -> locale_t! { fatalError() }
