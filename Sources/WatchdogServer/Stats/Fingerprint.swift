import WatchdogWire

/// The key that groups reports into issues: kind + screen + view name + keyboard mode.
/// `fp_` and 16 hex digits of FNV-1a-64 over the four parts joined by U+001F (which the
/// validator refuses inside them, so different parts never produce the same string).
enum Fingerprint {
    static func of(kind: String, screen: String?, viewName: String?, keyboardMode: String?) -> String {
        var hash = FNV1a64()
        hash.add(kind)
        hash.add(byte: 0x1F)
        if let screen { hash.add(screen) }
        hash.add(byte: 0x1F)
        if let viewName { hash.add(viewName) }
        hash.add(byte: 0x1F)
        if let keyboardMode { hash.add(keyboardMode) }
        return hash.hex(prefix: "fp_")
    }

    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 19 && text.hasPrefix("fp_") && text.utf8.dropFirst(3).allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
