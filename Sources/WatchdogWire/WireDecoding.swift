/// A wire-model type read from a parsed JSON item, with errors that name the field.
public protocol JSONItemDecodable: Sendable {
    init(json: JSONNode) throws(ErrorDetail)
}

/// Reads the members of one JSON object at a field path, e.g. `view.expected`. Absent and
/// `null` optional members both read as `nil`; unknown members are ignored.
struct ObjectReader {
    let members: [(String, JSONNode)]
    let path: String

    init(_ node: JSONNode, path: String) throws(ErrorDetail) {
        guard case .object(let members) = node else {
            throw ErrorDetail(code: "invalid_type", message: path.isEmpty ? "each item must be a JSON object" : "\(path) must be an object")
        }
        self.members = members
        self.path = path
    }

    func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Keys are compared by length first: most members are not the one looked for, and a
    /// String's UTF-8 count is at hand where comparing two Strings is not.
    @inline(__always) private static func same(_ name: String, _ key: String) -> Bool {
        name.utf8.count == key.utf8.count && name == key
    }

    private func present(_ key: String) -> JSONNode? {
        for (name, value) in members where Self.same(name, key) {
            if case .null = value { return nil }
            return value
        }
        return nil
    }

    private func required(_ key: String, _ typeName: String) throws(ErrorDetail) -> JSONNode {
        for (name, value) in members where Self.same(name, key) {
            if case .null = value {
                throw ErrorDetail(code: "missing_field", message: "\(field(key)) is required and must be \(typeName), got null")
            }
            return value
        }
        throw ErrorDetail(code: "missing_field", message: "\(field(key)) is required")
    }

    private func mismatch(_ key: String, _ typeName: String) -> ErrorDetail {
        ErrorDetail(code: "invalid_type", message: "\(field(key)) must be \(typeName)")
    }

    func string(_ key: String) throws(ErrorDetail) -> String {
        guard case .string(let text) = try required(key, "a string") else { throw mismatch(key, "a string") }
        return text
    }

    func optionalString(_ key: String) throws(ErrorDetail) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw mismatch(key, "a string") }
        return text
    }

    func double(_ key: String) throws(ErrorDetail) -> Double {
        guard case .number(let number) = try required(key, "a number") else { throw mismatch(key, "a number") }
        return number
    }

    func optionalDouble(_ key: String) throws(ErrorDetail) -> Double? {
        guard let value = present(key) else { return nil }
        guard case .number(let number) = value else { throw mismatch(key, "a number") }
        return number
    }

    func optionalInt(_ key: String) throws(ErrorDetail) -> Int? {
        guard let value = present(key) else { return nil }
        guard case .number(let number) = value, number == number.rounded(), abs(number) < 1e15 else { throw mismatch(key, "an integer") }
        return Int(number)
    }

    func optionalBool(_ key: String) throws(ErrorDetail) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, "true or false") }
        return flag
    }

    func object(_ key: String) throws(ErrorDetail) -> ObjectReader {
        try ObjectReader(try required(key, "an object"), path: field(key))
    }

    func optionalObject(_ key: String) throws(ErrorDetail) -> ObjectReader? {
        guard let value = present(key) else { return nil }
        return try ObjectReader(value, path: field(key))
    }

    func optionalStrings(_ key: String) throws(ErrorDetail) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case .array(let elements) = value else { throw mismatch(key, "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw ErrorDetail(code: "invalid_type", message: "\(field(key))[\(index)] must be a string")
            }
            strings.append(text)
        }
        return strings
    }

    func optionalStringMap(_ key: String) throws(ErrorDetail) -> [String: String]? {
        guard let value = present(key) else { return nil }
        guard case .object(let pairs) = value else { throw mismatch(key, "an object of strings") }
        var map: [String: String] = [:]
        for (name, element) in pairs {
            guard case .string(let text) = element else {
                throw ErrorDetail(code: "invalid_type", message: "\(field(key)).\(name.prefix(64)) must be a string")
            }
            map[name] = text
        }
        return map
    }

    func optionalBoolMap(_ key: String) throws(ErrorDetail) -> [String: Bool]? {
        guard let value = present(key) else { return nil }
        guard case .object(let pairs) = value else { throw mismatch(key, "an object of booleans") }
        var map: [String: Bool] = [:]
        for (name, element) in pairs {
            guard case .bool(let flag) = element else {
                throw ErrorDetail(code: "invalid_type", message: "\(field(key)).\(name.prefix(64)) must be true or false")
            }
            map[name] = flag
        }
        return map
    }
}

extension Frame {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        self.init(x: try reader.double("x"), y: try reader.double("y"), width: try reader.double("width"), height: try reader.double("height"))
    }
}

extension Release {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        self.init(version: try reader.string("version"), build: try reader.string("build"), channel: try reader.optionalString("channel"))
    }
}

extension Device {
    init(_ reader: ObjectReader) throws(ErrorDetail) {
        self.init(model: try reader.optionalString("model"), os: try reader.optionalString("os"), osVersion: try reader.optionalString("os_version"),
                  idiom: try reader.optionalString("idiom"), locale: try reader.optionalString("locale"))
    }
}

extension Report: JSONItemDecodable {
    public init(json: JSONNode) throws(ErrorDetail) {
        let item = try ObjectReader(json, path: "")
        self.init(
            id: try item.string("id"),
            kind: try item.string("kind"),
            occurredAt: try item.string("occurred_at"),
            app: try item.string("app"),
            release: try Release(item.object("release")),
            device: try item.optionalObject("device").map { reader throws(ErrorDetail) in try Device(reader) },
            sessionId: try item.optionalString("session_id"),
            installId: try item.optionalString("install_id"),
            appState: try item.string("app_state"),
            screen: try item.optionalString("screen"),
            window: try item.optionalObject("window").map { reader throws(ErrorDetail) in try Frame(reader) },
            logs: try item.optionalStrings("logs"),
            attributes: try item.optionalStringMap("attributes")
        )
        if let view = try item.optionalObject("view") {
            self.view = ViewFrames(name: try view.optionalString("name"), expected: try Frame(view.object("expected")),
                                   actual: try Frame(view.object("actual")), tolerance: try view.optionalDouble("tolerance"))
        }
        if let keyboard = try item.optionalObject("keyboard") {
            self.keyboard = KeyboardState(
                visible: try keyboard.optionalBool("visible"),
                frame: try keyboard.optionalObject("frame").map { reader throws(ErrorDetail) in try Frame(reader) },
                mode: try keyboard.optionalString("mode"), height: try keyboard.optionalDouble("height"),
                animationDuration: try keyboard.optionalDouble("animation_duration"), animationCurve: try keyboard.optionalInt("animation_curve"),
                inputMode: try keyboard.optionalString("input_mode"), notification: try keyboard.optionalString("notification"))
        }
        if let lock = try item.optionalObject("lock") {
            self.lock = InteractionLock(durationS: try lock.double("duration_s"), flags: try lock.optionalBoolMap("flags"))
        }
        if let action = try item.optionalObject("action") {
            self.action = ClientAction(autoFixed: try action.optionalBool("auto_fixed"), testCrash: try action.optionalBool("test_crash"))
        }
    }
}

extension SessionStart: JSONItemDecodable {
    public init(json: JSONNode) throws(ErrorDetail) {
        let item = try ObjectReader(json, path: "")
        self.init(
            id: try item.string("id"),
            installId: try item.optionalString("install_id"),
            startedAt: try item.string("started_at"),
            app: try item.string("app"),
            release: try Release(item.object("release")),
            device: try item.optionalObject("device").map { reader throws(ErrorDetail) in try Device(reader) }
        )
    }
}
