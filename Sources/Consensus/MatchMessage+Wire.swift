import EggPrimitives

extension MatchMessage {
    /// The compact binary encoding (≤ ``bytesMax`` bytes for every message the core produces): the
    /// kind's byte, then the fields as the description (`MatchMessage+Schema.swift`) gives them.
    public func encoded() -> [UInt8] {
        var coder = WireWriter()
        coder.out.writer.u8(tag.rawValue)
        var message = self
        message.describe(&coder)
        return coder.out.writer.bytes
    }

    /// Decodes a payload; `nil` for anything malformed (unknown tag, out-of-range field,
    /// truncated, trailing bytes). Never traps.
    public static func decode(_ bytes: [UInt8]) -> MatchMessage? {
        guard bytes.count <= bytesMax else { return nil }
        var coder = WireReader(input: WireIn(reader: LEB128ByteReader(bytes)))
        guard let raw = coder.input.reader.u8(), let tag = Tag(rawValue: raw) else { return nil }
        var message = blank(tag)
        message.describe(&coder)
        guard !coder.failed, coder.input.reader.isAtEnd, message.isValid else { return nil }
        return message
    }
}

/// Which fields a wire codec is at: a list's records are walked once for their inline fields and,
/// when they have trailing fields (``MessageCoder/trailingField(_:_:_:omitted:)``), once more for those.
private enum WirePass {
    case inline, trailing
}

/// Writes the fields in the description's order.
struct WireWriter: MessageCoder {
    var out = WireOut()
    fileprivate var pass = WirePass.inline
    /// A trailing field of the records being written is not at its omitted value.
    private var trailingNeeded = false
    /// The records being written have a trailing field.
    private var trailingSeen = false

    var failed: Bool { false }

    mutating func require(_ condition: @autoclosure () -> Bool) {}

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        guard pass == .inline else { return }
        form.write(value, to: &out)
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable {
        field(key, &value, form)
    }

    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) {
        guard pass == .inline else { return }
        out.writer.u8(value == nil ? 0 : 1)
        if let value { form.write(value, to: &out) }
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        guard pass == .inline else { return }
        out.writer.varint(UInt64(values.count))
        for value in values { form.write(value, to: &out) }
    }

    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline else { return }
        out.writer.varint(UInt64(values.count))
        trailingSeen = false
        trailingNeeded = false
        for index in values.indices { describe(&values[index], &self) }
        guard trailingSeen, trailingNeeded else { return }
        pass = .trailing
        for index in values.indices { describe(&values[index], &self) }
        pass = .inline
    }

    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        records("", &values, count: count, blank: blank, describe)
    }

    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline else { return }
        out.writer.u8(value == nil ? 0 : 1)
        if var record = value {
            describe(&record, &self)
        }
    }

    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline, var record = value else { return }
        describe(&record, &self)
    }

    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable {
        switch pass {
        case .inline:
            trailingSeen = true
            if value != omitted { trailingNeeded = true }
        case .trailing:
            form.write(value, to: &out)
        }
    }
}

/// Reads the fields in the description's order, each within its limit.
struct WireReader: MessageCoder {
    var input: WireIn
    fileprivate var pass = WirePass.inline
    private(set) var failed = false
    /// The records being read have a trailing field.
    private var trailingSeen = false

    init(input: WireIn) { self.input = input }

    mutating func require(_ condition: @autoclosure () -> Bool) {
        if !failed && !condition() { failed = true }
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F) {
        guard pass == .inline, !failed else { return }
        guard let read = form.read(from: &input) else { return failed = true }
        value = read
    }

    mutating func field<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, jsonOmits omitted: F.Value)
        where F.Value: Equatable {
        field(key, &value, form)
    }

    mutating func nullable<F: FieldForm>(_ key: StaticString, _ value: inout F.Value?, _ form: F) {
        guard pass == .inline, !failed else { return }
        guard let flag = input.reader.u8(), flag <= 1 else { return failed = true }
        guard flag == 1 else { return value = nil }
        guard let read = form.read(from: &input) else { return failed = true }
        value = read
    }

    mutating func list<F: FieldForm>(_ key: StaticString, _ values: inout [F.Value], _ form: F, count: ClosedRange<Int>) {
        guard pass == .inline, !failed else { return }
        guard let n = input.reader.varint(max: UInt64(count.upperBound)), n >= count.lowerBound else { return failed = true }
        var read: [F.Value] = []
        read.reserveCapacity(Int(n))
        for _ in 0..<n {
            guard let value = form.read(from: &input) else { return failed = true }
            read.append(value)
        }
        values = read
    }

    mutating func records<T>(_ key: StaticString, _ values: inout [T], count: ClosedRange<Int>, blank: T,
                             _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline, !failed else { return }
        guard let n = input.reader.varint(max: UInt64(count.upperBound)), n >= count.lowerBound else { return failed = true }
        var read: [T] = []
        read.reserveCapacity(Int(n))
        trailingSeen = false
        for _ in 0..<n {
            var record = blank
            describe(&record, &self)
            guard !failed else { return }
            read.append(record)
        }
        if trailingSeen && !input.reader.isAtEnd {
            pass = .trailing
            for index in read.indices { describe(&read[index], &self) }
            pass = .inline
        }
        values = read
    }

    mutating func columns<T>(_ values: inout [T], count: ClosedRange<Int>, blank: T, _ describe: (inout T, inout Self) -> Void) {
        records("", &values, count: count, blank: blank, describe)
    }

    mutating func nullable<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline, !failed else { return }
        guard let flag = input.reader.u8(), flag <= 1 else { return failed = true }
        guard flag == 1 else { return value = nil }
        var record = blank
        describe(&record, &self)
        value = record
    }

    mutating func trailing<T>(_ key: StaticString, _ value: inout T?, blank: T, _ describe: (inout T, inout Self) -> Void) {
        guard pass == .inline, !failed else { return }
        guard !input.reader.isAtEnd else { return value = nil }
        var record = blank
        describe(&record, &self)
        value = record
    }

    mutating func trailingField<F: FieldForm>(_ key: StaticString, _ value: inout F.Value, _ form: F, omitted: F.Value)
        where F.Value: Equatable {
        guard !failed else { return }
        switch pass {
        case .inline:
            trailingSeen = true
            value = omitted
        case .trailing:
            guard let read = form.read(from: &input) else { return failed = true }
            value = read
        }
    }
}
