#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes all of `bytes` to `descriptor`, in as many `write(2)` calls as the kernel needs (one,
/// unless a signal cuts a write short); false when the descriptor takes no more (closed, full).
package func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var written = 0
    while written < bytes.count {
        #if canImport(Glibc)
        let result = Glibc.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
        #else
        let result = Darwin.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
        #endif
        if result > 0 {
            written += result
        } else if result < 0 && errno == EINTR {
            continue
        } else {
            return false
        }
    }
    return true
}
