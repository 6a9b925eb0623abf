/// 16 lowercase hex digits of a 64-bit value, zero-padded (peer IDs, hashes, vote values).
public func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// Parses exactly 16 hex digits (either case); `nil` for anything else.
public func parseHex16(_ text: String?) -> UInt64? {
    guard var text else { return nil }
    return text.withUTF8 { parseHex16(utf8: $0) }
}

/// ``parseHex16(_:)`` on UTF-8 bytes (the log reader reads them in place).
public func parseHex16(utf8 digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
    // Digit by digit: `UInt64(_:radix:)` also takes a sign, so "+123456789abcdef" and
    // "-000000000000000" (16 bytes, 15 digits) would read as peer IDs and hashes.
    guard digits.count == 16 else { return nil }
    var value: UInt64 = 0
    for byte in digits {
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
        value = value << 4 | UInt64(digit)
    }
    return value
}

/// Whether `byte` is an ASCII hex digit, 0-9, a-f or A-F.
public func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
    default: false
    }
}
