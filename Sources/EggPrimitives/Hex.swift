/// 16 lowercase hex digits of a 64-bit value, zero-padded (peer IDs, hashes, vote values).
public func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// Parses exactly 16 hex digits; `nil` for anything else.
public func parseHex16(_ text: String?) -> UInt64? {
    guard let text, text.utf8.count == 16 else { return nil }
    return UInt64(text, radix: 16)
}
