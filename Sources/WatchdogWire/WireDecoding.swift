/// A wire-model type read from a parsed JSON item, with errors that name the field.
public protocol JSONItemDecodable: Sendable {
    init(json: JSONItem) throws(ErrorDetail)
}

/// One parsed item of a batch (a value of a `JSONTape`), as `JSONItemDecodable` types read it.
public struct JSONItem {
    let tape: JSONTape
    let index: Int
}

/// Reads the members of one JSON object at a field path, e.g. `view.expected`. Absent and
/// `null` optional members both read as `nil`; unknown members are ignored (and never copied
/// out of the input).
///
/// A member is looked for from the one after the member read last, round the object: clients
/// list members in the order the wire model declares them, which is the order they are read,
/// so most lookups compare one key.
struct ObjectReader {
    /// Where an object is, as the member names leading to it: kept as static strings and
    /// rendered only for an error's message (rendering every nested object's path cost more
    /// than reading its members). Two levels are kept as names, deeper ones rendered.
    struct FieldPath {
        private var prefix = ""
        private var first: StaticString?
        private var second: StaticString?

        init(_ prefix: String = "") { self.prefix = prefix }

        func appending(_ key: StaticString) -> FieldPath {
            var path = self
            if first == nil { path.first = key } else if second == nil { path.second = key } else { path = FieldPath(text); path.first = key }
            return path
        }

        var text: String {
            var text = prefix
            for name in [first, second].compactMap({ $0 }) { text += text.isEmpty ? "\(name)" : ".\(name)" }
            return text
        }
    }

    let tape: JSONTape
    let index: Int
    private let fieldPath: FieldPath
    /// The key to look at first, and how many members come before it.
    private var cursor: Int
    private var cursorOrdinal = 0

    var path: String { fieldPath.text }

    init(_ item: JSONItem, path: String) throws(ErrorDetail) {
        try self.init(item, at: FieldPath(path))
    }

    init(_ item: JSONItem, at fieldPath: FieldPath) throws(ErrorDetail) {
        guard item.tape.entries[item.index].kind == .object else {
            let path = fieldPath.text
            throw ErrorDetail(code: "invalid_type", message: path.isEmpty ? "each item must be a JSON object" : "\(path) must be an object")
        }
        self.tape = item.tape
        self.index = item.index
        self.fieldPath = fieldPath
        self.cursor = item.index + 1
    }

    /// The index of the value of member `name`, if the object has one.
    private mutating func member(_ name: StaticString) -> Int? {
        let count = tape.entries[index].count
        var key = cursor, ordinal = cursorOrdinal
        for _ in 0..<count {
            if ordinal == count { key = index + 1; ordinal = 0 }
            let next = tape.entries[key + 1].end
            if tape.key(at: key, is: name) {
                cursor = next
                cursorOrdinal = ordinal + 1
                return key + 1
            }
            key = next
            ordinal += 1
        }
        return nil
    }

    func field(_ key: StaticString) -> String { fieldPath.appending(key).text }

    private func kind(_ value: Int) -> JSONTape.Entry.Kind { tape.entries[value].kind }

    private mutating func present(_ key: StaticString) -> Int? {
        guard let value = member(key), kind(value) != .null else { return nil }
        return value
    }

    private mutating func required(_ key: StaticString, _ typeName: String) throws(ErrorDetail) -> Int {
        guard let value = member(key) else {
            throw ErrorDetail(code: "missing_field", message: "\(field(key)) is required")
        }
        if kind(value) == .null {
            throw ErrorDetail(code: "missing_field", message: "\(field(key)) is required and must be \(typeName), got null")
        }
        return value
    }

    private func mismatch(_ key: StaticString, _ typeName: String) -> ErrorDetail {
        ErrorDetail(code: "invalid_type", message: "\(field(key)) must be \(typeName)")
    }

    mutating func string(_ key: StaticString) throws(ErrorDetail) -> String {
        let value = try required(key, "a string")
        guard kind(value) == .string else { throw mismatch(key, "a string") }
        return tape.string(at: value)
    }

    mutating func optionalString(_ key: StaticString) throws(ErrorDetail) -> String? {
        guard let value = present(key) else { return nil }
        guard kind(value) == .string else { throw mismatch(key, "a string") }
        return tape.string(at: value)
    }

    mutating func double(_ key: StaticString) throws(ErrorDetail) -> Double {
        let value = try required(key, "a number")
        guard kind(value) == .number else { throw mismatch(key, "a number") }
        return tape.entries[value].number
    }

    mutating func optionalDouble(_ key: StaticString) throws(ErrorDetail) -> Double? {
        guard let value = present(key) else { return nil }
        guard kind(value) == .number else { throw mismatch(key, "a number") }
        return tape.entries[value].number
    }

    mutating func optionalInt(_ key: StaticString) throws(ErrorDetail) -> Int? {
        guard let value = present(key) else { return nil }
        let number = tape.entries[value].number
        guard kind(value) == .number, number == number.rounded(), abs(number) < 1e15 else { throw mismatch(key, "an integer") }
        return Int(number)
    }

    mutating func optionalBool(_ key: StaticString) throws(ErrorDetail) -> Bool? {
        guard let value = present(key) else { return nil }
        switch kind(value) {
        case .trueValue: return true
        case .falseValue: return false
        default: throw mismatch(key, "true or false")
        }
    }

    mutating func object(_ key: StaticString) throws(ErrorDetail) -> ObjectReader {
        try ObjectReader(JSONItem(tape: tape, index: try required(key, "an object")), at: fieldPath.appending(key))
    }

    mutating func optionalObject(_ key: StaticString) throws(ErrorDetail) -> ObjectReader? {
        guard let value = present(key) else { return nil }
        return try ObjectReader(JSONItem(tape: tape, index: value), at: fieldPath.appending(key))
    }

    mutating func optionalStrings(_ key: StaticString) throws(ErrorDetail) -> [String]? {
        guard let value = present(key) else { return nil }
        guard kind(value) == .array else { throw mismatch(key, "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(tape.entries[value].count)
        var element = value + 1
        for index in 0..<tape.entries[value].count {
            guard kind(element) == .string else {
                throw ErrorDetail(code: "invalid_type", message: "\(field(key))[\(index)] must be a string")
            }
            strings.append(tape.string(at: element))
            element = tape.entries[element].end
        }
        return strings
    }

    /// The members of the object at `key`, each read by `read` (nil: not of the wanted type).
    private mutating func optionalMap<Value>(_ key: StaticString, of typeName: String, _ read: (JSONTape, Int) -> Value?) throws(ErrorDetail) -> [String: Value]? {
        guard let value = present(key) else { return nil }
        guard kind(value) == .object else { throw mismatch(key, "an object of \(typeName)s") }
        var map: [String: Value] = [:]
        var member = value + 1
        for _ in 0..<tape.entries[value].count {
            let name = tape.string(at: member)
            guard let element = read(tape, member + 1) else {
                throw ErrorDetail(code: "invalid_type", message: "\(field(key)).\(name.prefix(64)) must be \(typeName == "boolean" ? "true or false" : "a \(typeName)")")
            }
            map[name] = element
            member = tape.entries[member + 1].end
        }
        return map
    }

    mutating func optionalStringMap(_ key: StaticString) throws(ErrorDetail) -> [String: String]? {
        try optionalMap(key, of: "string") { tape, value in tape.entries[value].kind == .string ? tape.string(at: value) : nil }
    }

    mutating func optionalBoolMap(_ key: StaticString) throws(ErrorDetail) -> [String: Bool]? {
        try optionalMap(key, of: "boolean") { tape, value in
            switch tape.entries[value].kind {
            case .trueValue: true
            case .falseValue: false
            default: nil
            }
        }
    }
}

extension Frame {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        var reader = reader
        self.init(x: try reader.double("x"), y: try reader.double("y"), width: try reader.double("width"), height: try reader.double("height"))
    }
}

extension Release {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        var reader = reader
        self.init(version: try reader.string("version"), build: try reader.string("build"), channel: try reader.optionalString("channel"))
    }
}

extension Device {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        var reader = reader
        self.init(model: try reader.optionalString("model"), os: try reader.optionalString("os"), osVersion: try reader.optionalString("os_version"),
                  idiom: try reader.optionalString("idiom"), locale: try reader.optionalString("locale"))
    }
}

extension Report: JSONItemDecodable {
    /// Members are read in the order the wire model declares them (and WatchdogKit writes
    /// them), so `ObjectReader` finds each at its first look.
    public init(json: JSONItem) throws(ErrorDetail) {
        var item = try ObjectReader(json, path: "")
        let id = try item.string("id"), kind = try item.string("kind"), occurredAt = try item.string("occurred_at"), app = try item.string("app")
        let release = try Release(item.object("release"))
        let device = try item.optionalObject("device").typedMap { reader throws(ErrorDetail) in try Device(reader) }
        let sessionId = try item.optionalString("session_id"), installId = try item.optionalString("install_id")
        let appState = try item.string("app_state"), screen = try item.optionalString("screen")
        let window = try item.optionalObject("window").typedMap { reader throws(ErrorDetail) in try Frame(reader) }
        var view: ViewFrames?
        if var reader = try item.optionalObject("view") {
            view = ViewFrames(name: try reader.optionalString("name"), expected: try Frame(reader.object("expected")),
                              actual: try Frame(reader.object("actual")), tolerance: try reader.optionalDouble("tolerance"))
        }
        var keyboard: KeyboardState?
        if var reader = try item.optionalObject("keyboard") {
            keyboard = KeyboardState(
                visible: try reader.optionalBool("visible"),
                frame: try reader.optionalObject("frame").typedMap { reader throws(ErrorDetail) in try Frame(reader) },
                mode: try reader.optionalString("mode"), height: try reader.optionalDouble("height"),
                animationDuration: try reader.optionalDouble("animation_duration"), animationCurve: try reader.optionalInt("animation_curve"),
                inputMode: try reader.optionalString("input_mode"), notification: try reader.optionalString("notification"))
        }
        var lock: InteractionLock?
        if var reader = try item.optionalObject("lock") {
            lock = InteractionLock(durationS: try reader.double("duration_s"), flags: try reader.optionalBoolMap("flags"))
        }
        var action: ClientAction?
        if var reader = try item.optionalObject("action") {
            action = ClientAction(autoFixed: try reader.optionalBool("auto_fixed"), testCrash: try reader.optionalBool("test_crash"))
        }
        self.init(id: id, kind: kind, occurredAt: occurredAt, app: app, release: release, device: device, sessionId: sessionId,
                  installId: installId, appState: appState, screen: screen, window: window,
                  logs: try item.optionalStrings("logs"), attributes: try item.optionalStringMap("attributes"))
        self.view = view
        self.keyboard = keyboard
        self.lock = lock
        self.action = action
    }
}

extension SessionStart: JSONItemDecodable {
    public init(json: JSONItem) throws(ErrorDetail) {
        var item = try ObjectReader(json, path: "")
        self.init(
            id: try item.string("id"),
            installId: try item.optionalString("install_id"),
            startedAt: try item.string("started_at"),
            app: try item.string("app"),
            release: try Release(item.object("release")),
            device: try item.optionalObject("device").typedMap { reader throws(ErrorDetail) in try Device(reader) }
        )
    }
}
