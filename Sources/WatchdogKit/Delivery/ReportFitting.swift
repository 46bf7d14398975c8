import WatchdogWire

/// Fits a report to the server's limits (`Limits`, docs/api.md "Ingest") before it is saved, so
/// that no field the SDK fills from the app — a screen named after a SwiftUI hosting
/// controller's full generic type, a long view name, a host's attributes — makes the server
/// reject the report after it was kept for upload.
///
/// A name over its limit first loses its generic arguments (`UIHostingController<ModifiedContent<…>>`
/// becomes `UIHostingController`), then, if still too long, is cut at a character boundary and
/// ends with `…`. Control characters become spaces; an empty optional name is left out. Limits
/// count Unicode scalars, as the server does.
public enum ReportFitting {
    /// `report` with every text field within the server's limits (unchanged when it already is).
    public static func fit(_ report: Report) -> Report {
        var report = report
        report.screen = report.screen.flatMap { optionalName($0, limit: Limits.screenLength) }
        if var view = report.view {
            view.name = view.name.flatMap { optionalName($0, limit: Limits.viewNameLength) }
            report.view = view
        }
        if var keyboard = report.keyboard {
            keyboard.inputMode = keyboard.inputMode.flatMap { optionalName($0, limit: Limits.shortTextLength) }
            keyboard.notification = keyboard.notification.flatMap { optionalName($0, limit: Limits.shortTextLength) }
            report.keyboard = keyboard
        }
        if var lock = report.lock, let flags = lock.flags {
            lock.flags = fittedKeys(flags, count: Limits.lockFlags, keyLimit: Limits.shortTextLength) { $0 }
            report.lock = lock
        }
        if let attributes = report.attributes {
            report.attributes = fittedKeys(attributes, count: Limits.attributes, keyLimit: Limits.attributeKeyLength) { value in
                value.unicodeScalars.count <= Limits.attributeValueLength ? value : cut(value, limit: Limits.attributeValueLength)
            }
        }
        return report
    }

    /// `name` within `limit` scalars: generic arguments stripped first, then cut with `…`.
    public static func name(_ name: String, limit: Int) -> String {
        let clean = withoutControlCharacters(name)
        if clean.unicodeScalars.count <= limit { return clean }
        let stripped = withoutGenericArguments(clean)
        if !stripped.isEmpty, stripped.unicodeScalars.count <= limit { return stripped }
        return cut(stripped.isEmpty ? clean : stripped, limit: limit)
    }

    /// `UIHostingController<ModifiedContent<ChatView, …>>` → `UIHostingController`; the text
    /// between balanced angle brackets goes, what follows the closing one stays
    /// (`Outer<Int>.Inner` → `Outer.Inner`).
    static func withoutGenericArguments(_ text: String) -> String {
        var depth = 0
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "<" {
                depth += 1
            } else if scalar == ">", depth > 0 {
                depth -= 1
            } else if depth == 0 {
                kept.append(scalar)
            }
        }
        return String(kept)
    }

    private static func optionalName(_ text: String, limit: Int) -> String? {
        let fitted = name(text, limit: limit)
        return fitted.isEmpty ? nil : fitted
    }

    /// The first `limit - 1` scalars, whole characters only, and `…`.
    private static func cut(_ text: String, limit: Int) -> String {
        var result = ""
        var scalars = 0
        for character in text {
            let count = character.unicodeScalars.count
            if scalars + count > limit - 1 { break }
            result.append(character)
            scalars += count
        }
        return result + "…"
    }

    private static func withoutControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    /// At most `count` entries (the first keys in sorted order, so the choice is stable), keys
    /// fitted to `keyLimit`; entries whose key fits to nothing, or collides, are dropped.
    private static func fittedKeys<Value>(_ dictionary: [String: Value], count: Int, keyLimit: Int,
                                          value: (Value) -> Value) -> [String: Value] {
        let fits = dictionary.count <= count && dictionary.keys.allSatisfy { key in
            !key.isEmpty && key.unicodeScalars.count <= keyLimit && !key.unicodeScalars.contains(where: isControl)
        }
        if fits { return dictionary.mapValues(value) }
        var result: [String: Value] = [:]
        for key in dictionary.keys.sorted() where result.count < count {
            guard let fitted = optionalName(key, limit: keyLimit), result[fitted] == nil, let entry = dictionary[key] else { continue }
            result[fitted] = value(entry)
        }
        return result
    }
}
