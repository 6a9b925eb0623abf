/// 16 lowercase hex digits of a 64-bit value, zero-padded (peer IDs, hashes, vote values).
public func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// Parses exactly 16 hex digits (either case); `nil` for anything else.
public func parseHex16(_ text: String?) -> UInt64? {
    // Digits only: `UInt64(_:radix:)` alone also takes a sign, so "+123456789abcdef" and
    // "-000000000000000" (16 bytes, 15 digits) read as peer IDs and hashes.
    guard let text, text.utf8.count == 16, text.utf8.allSatisfy(isHexDigit) else { return nil }
    return UInt64(text, radix: 16)
}

/// Whether `byte` is an ASCII hex digit, 0-9, a-f or A-F.
public func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
    default: false
    }
}
