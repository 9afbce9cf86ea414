/// Whether `text` is `lengths` bytes of ASCII letters, digits and `punctuation` only: what may go
/// into a request's path or a header as it is.
public func isASCIIWord(_ text: String, lengths: ClosedRange<Int>, punctuation: StaticString) -> Bool {
    let allowed = UnsafeBufferPointer(start: punctuation.utf8Start, count: punctuation.utf8CodeUnitCount)
    return lengths.contains(text.utf8.count)
        && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
            default: allowed.contains(byte)
            }
        }
}

/// A device or registration token's first 8 characters and its length: enough to match logs to a
/// device, too little to send to it.
public func shortenedToken(_ token: String) -> String {
    token.utf8.count <= 8 ? token : "\(token.prefix(8))…(\(token.utf8.count))"
}
