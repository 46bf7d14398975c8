/// One JSON value parsed by `JSONReader` into a flat list of entries in document order (issue
/// 26): an object is its entry, then each member's key and value; an array its entry, then its
/// elements. Nothing is copied out of the input while parsing — a string entry is a range of
/// the input's bytes (or of `unescaped`, when it had escapes) — so an item's decoding makes a
/// `String` only for the fields it reads, and a parse allocates two arrays, not one per object.
/// The tree of `JSONNode`s it replaced cost a third of the CPU of storing a report.
public final class JSONTape {
    /// 32 bytes: positions and counts are kept as 32-bit integers (`JSONReader` refuses an
    /// input of 2 GiB or more; bodies are at most a few MiB).
    struct Entry {
        enum Kind: UInt8 { case null, falseValue, trueValue, number, string, array, object }

        var number: Double
        private var start32: Int32
        private var count32: Int32 = 0
        private var end32: Int32
        private var close32: Int32 = 0
        var kind: Kind
        /// A string whose bytes are in `unescaped` (it had escapes), not in the input.
        var escaped: Bool
        /// A member name all of whose bytes are ASCII (not worked out for other strings).
        var ascii: Bool

        init(kind: Kind, escaped: Bool = false, ascii: Bool = false, start: Int = 0, count: Int = 0, end: Int, number: Double = 0) {
            self.kind = kind
            self.escaped = escaped
            self.ascii = ascii
            self.start32 = Int32(truncatingIfNeeded: start)
            self.count32 = Int32(truncatingIfNeeded: count)
            self.end32 = Int32(truncatingIfNeeded: end)
            self.number = number
        }

        /// A string's first byte; an object's or array's opening bracket.
        var start: Int { Int(start32) }
        /// A string's byte count; an object's members or an array's elements.
        var count: Int {
            get { Int(count32) }
            set { count32 = Int32(truncatingIfNeeded: newValue) }
        }
        /// The index of the entry after this value and everything in it.
        var end: Int {
            get { Int(end32) }
            set { end32 = Int32(truncatingIfNeeded: newValue) }
        }
        /// An object's or array's bytes, from its opening bracket (`start`) to after its closing one.
        var close: Int {
            get { Int(close32) }
            set { close32 = Int32(truncatingIfNeeded: newValue) }
        }
    }

    let entries: [Entry]
    /// The input the entries' ranges point into.
    let bytes: [UInt8]
    let unescaped: [UInt8]

    init(entries: [Entry], bytes: [UInt8], unescaped: [UInt8]) {
        self.entries = entries
        self.bytes = bytes
        self.unescaped = unescaped
    }

    /// The bytes of the string at `index`, for `body`.
    @inline(__always)
    func withBytes<Result>(of index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let entry = entries[index]
        return (entry.escaped ? unescaped : bytes).withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[entry.start..<entry.start + entry.count]))
        }
    }

    /// The string at `index`.
    func string(at index: Int) -> String {
        withBytes(of: index) { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the key at `index` is `name`, an ASCII field name. Compared as bytes: no other
    /// spelling of a lowercase ASCII name is canonically equivalent to it, so this answers what
    /// `String`'s `==` answers. Most keys differ in length, which is looked at first.
    @inline(__always)
    func key(at index: Int, is name: StaticString) -> Bool {
        guard entries[index].count == name.utf8CodeUnitCount else { return false }
        let start = entries[index].start
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        if entries[index].escaped {
            return unescaped.withUnsafeBufferPointer { ByteScan.equal(UnsafeBufferPointer(rebasing: $0[start..<start + expected.count]), expected) }
        }
        return bytes.withUnsafeBufferPointer { ByteScan.equal(UnsafeBufferPointer(rebasing: $0[start..<start + expected.count]), expected) }
    }

    /// The index of the value of member `name` of the object at `object`, if it has one.
    @inline(__always)
    func member(_ name: StaticString, of object: Int) -> Int? {
        var key = object + 1
        for _ in 0..<entries[object].count {
            if self.key(at: key, is: name) { return key + 1 }
            key = entries[key + 1].end
        }
        return nil
    }

    /// The value of the first member of the object at `object` whose name, as sent (an escaped
    /// name is not read), is `name`.
    func member(sentAs name: String, of object: Int) -> Int? {
        var name = name
        return name.withUTF8 { wanted in
            var key = object + 1
            for _ in 0..<entries[object].count {
                if !entries[key].escaped, withBytes(of: key, { ByteScan.equal($0, wanted) }) {
                    return key + 1
                }
                key = entries[key + 1].end
            }
            return nil
        }
    }

    /// The value at `index` as a tree, for callers that walk a whole document.
    func node(at index: Int) -> JSONNode {
        let entry = entries[index]
        switch entry.kind {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .number: return .number(entry.number)
        case .string: return .string(string(at: index))
        case .array:
            var elements: [JSONNode] = []
            elements.reserveCapacity(entry.count)
            var element = index + 1
            for _ in 0..<entry.count {
                elements.append(node(at: element))
                element = entries[element].end
            }
            return .array(elements)
        case .object:
            var members: [(String, JSONNode)] = []
            members.reserveCapacity(entry.count)
            var key = index + 1
            for _ in 0..<entry.count {
                members.append((string(at: key), node(at: key + 1)))
                key = entries[key + 1].end
            }
            return .object(members)
        }
    }
}
