/// Sizes every client-supplied value is bounded by (docs/api.md, "Ingest"). Shared by the server, which
/// enforces them, and the client library, which stays inside them.
public enum Limits {
    public static let itemsPerBatch = 500
    public static let bodyBytes = 1 << 20
    /// One item's JSON at most: a full report (200 log lines of 1 KiB, 32 attributes) fits.
    public static let itemBytes = 256 << 10
    public static let idLength = 64
    public static let appLength = 255
    public static let versionLength = 64
    public static let channelLength = 32
    public static let deviceFieldLength = 64
    public static let screenLength = 128
    public static let viewNameLength = 128
    public static let shortTextLength = 64
    public static let logLines = 200
    public static let logLineBytes = 1024
    public static let attributes = 32
    public static let attributeKeyLength = 64
    public static let attributeValueLength = 256
    public static let lockFlags = 32
    /// How far in the future of the server's clock a device's timestamp may be.
    public static let futureSkewMilliseconds: Int64 = 24 * 3600 * 1000
    /// Timestamps before this (2007-01-09, the first iPhone) are a broken device clock.
    public static let earliestMilliseconds: Int64 = 1_168_300_800_000
}

/// The vocabularies of docs/api.md ("Ingest").
public enum Vocabulary {
    public static let builtInKinds: Set<String> = [
        "view_frame_mismatch", "input_covered_by_keyboard", "keyboard_without_input", "interaction_lock",
    ]
    public static let appStates: Set<String> = ["active", "inactive", "background"]
    public static let idioms: Set<String> = ["phone", "pad", "mac", "tv", "vision"]
    public static let keyboardModes: Set<String> = ["docked", "undocked", "split", "floating", "hardware", "hidden"]

    /// A built-in kind, or `x-` followed by 1–64 of `a-z 0-9 _ . -`.
    public static func isValidKind(_ kind: String) -> Bool {
        if isBuiltInKind(kind) { return true }
        guard kind.hasPrefix("x-") else { return false }
        let name = kind.utf8.dropFirst(2)
        return !name.isEmpty && name.count <= 64 && name.allSatisfy { byte in
            (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 95 || byte == 46 || byte == 45
        }
    }

    // The checks every report makes, as switches: comparing a few short strings costs less
    // than hashing one for a set (callgrind, docs/performance.md). Each lists its set's members.

    /// `builtInKinds.contains(kind)`.
    public static func isBuiltInKind(_ kind: String) -> Bool {
        switch kind {
        case "view_frame_mismatch", "input_covered_by_keyboard", "keyboard_without_input", "interaction_lock": true
        default: false
        }
    }

    /// `appStates.contains(state)`.
    public static func isAppState(_ state: String) -> Bool {
        switch state {
        case "active", "inactive", "background": true
        default: false
        }
    }

    /// `idioms.contains(idiom)`.
    public static func isIdiom(_ idiom: String) -> Bool {
        switch idiom {
        case "phone", "pad", "mac", "tv", "vision": true
        default: false
        }
    }

    /// `keyboardModes.contains(mode)`.
    public static func isKeyboardMode(_ mode: String) -> Bool {
        switch mode {
        case "docked", "undocked", "split", "floating", "hardware", "hidden": true
        default: false
        }
    }

    static func sortedList(_ values: Set<String>) -> String {
        values.sorted().joined(separator: ", ")
    }
}
