import GRDB
import Gzip
import Locking

/// How the store keeps a report's or session's JSON: deflated (zlib format) with a preset
/// dictionary of the report schema — keys, the closed vocabularies, the usual shapes — so a
/// 1.2 KB report takes about a third of that, and the client's exact bytes come back on read.
///
/// The dictionary is part of the file format: a stored body names it by its Adler-32 in the
/// zlib header. Never edit `v1`; a better dictionary is a `v2` beside it, and `text(from:)`
/// keeps inflating both. Bodies written before compression (TEXT) are read as they are.
enum StoredBody {
    /// Compresses a body on the caller's thread (ingest: libmicrohttpd's, not the writer's).
    static func compress(_ text: String) -> [UInt8] {
        var text = text
        let compressed = text.withUTF8 { utf8 in codec { $0.compress(UnsafeRawBufferPointer(utf8)) } }
        // zlib fails only when it cannot allocate; an uncompressed body is still exact.
        return compressed ?? Array(text.utf8)
    }

    /// The stored body as the client's text: a BLOB is inflated, TEXT (older rows) is as stored.
    static func text(from value: DatabaseValue) throws -> String {
        switch value.storage {
        case .string(let text):
            return text
        case .blob(let data):
            let bytes = try data.withUnsafeBytes { raw in
                try codec { codec throws(PresetDictionaryCodec.Failure) in try codec.decompress(raw, limit: maximumBytes) }
            }
            return String(decoding: bytes, as: UTF8.self)
        default:
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "a stored body is neither TEXT nor BLOB")
        }
    }

    /// A stored body read as bytes (the PostgreSQL store keeps every body compressed).
    static func text(fromCompressed bytes: [UInt8]) throws -> String {
        let inflated = try bytes.withUnsafeBytes { raw in
            try codec { codec throws(PresetDictionaryCodec.Failure) in try codec.decompress(raw, limit: maximumBytes) }
        }
        return String(decoding: inflated, as: UTF8.self)
    }

    /// Larger than any body ingest accepts (the request body limit), so a damaged row cannot
    /// inflate without bound.
    static let maximumBytes = 16 << 20

    private static let pool = Locked<[PresetDictionaryCodec]>([])

    /// Runs `body` with a codec of its own; codecs are reused (a fresh zlib stream costs more
    /// than compressing a report). Level 3, an 8 KiB window (the dictionary and a report fit)
    /// and a 16 KiB hash table. On the benchmark's payloads (1.28 KB each) level 3 gives 360 B
    /// in 17.7 µs of CPU, level 6 348 B in 22.4 µs, no dictionary 684 B (measured together).
    private static func codec<Result, Failure: Error>(_ body: (PresetDictionaryCodec) throws(Failure) -> Result) throws(Failure) -> Result {
        let codec = pool.withLock { $0.popLast() } ?? PresetDictionaryCodec(dictionary: v1, level: 3, windowBits: 13, memoryLevel: 6)
        defer { pool.withLock { if $0.count < 16 { $0.append(codec) } } }
        return try body(codec)
    }

    /// Dictionary 1: what reports and sessions repeat, as WatchdogKit (compact) and hand-written
    /// clients (`": "`) spell it. Later bytes are cheaper to refer to, so the most common come last.
    static let v1: [UInt8] = Array(("""
        "notification": "keyboardDidChangeFrame", "keyboardDidHide", "keyboardDidShow", "keyboardWillHide", \
        "lock": {"duration_s": , "flags": {"navigation_transition": true, "user_interaction_disabled": true}}, \
        "window": {"x": 0, "y": 0, "width": 390, "height": 844}, "os": "iPadOS", "idiom": "pad", "mac", "vision", "tv", \
        "app_state": "background", "inactive", "mode": "undocked", "split", "floating", "hardware", "hidden", \
        "kind": "input_covered_by_keyboard", "keyboard_without_input", "interaction_lock", "attributes": {"experiment": \
        "session": {"id": "started_at": "release": {"version": "build": "channel": "beta", "production", "testflight", \
        "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone", "locale": "en_US"}, \
        "view": {"name": "expected": {"x": 0, "y": 0, "width": 390, "height": 44}, "actual": {"x": 0, "y": 0, "width": 390, "height": 44}, "tolerance": 1.0}, \
        "keyboard": {"visible": true, "frame": {"x": 0, "y": 0, "width": 390, "height": 336}, "mode": "docked", "height": 336, \
        "animation_duration": 0.25, "animation_curve": 7, "input_mode": "en-US", "notification": "keyboardWillChangeFrame"}, \
        "action": {"auto_fixed": false, "test_crash": false}, "logs": ["[keyboard][tracker] keyboardWillShow: frame end ", \
        "[keyboard][tracker] keyboardWillChangeFrame: calculated height - ", "[keyboard][watchdog] woof: expected y  actual y  delta "], \
        {"id":"","kind":"view_frame_mismatch","occurred_at":"2026-11-20T10:00:00.000Z","app":"com.example.","release":{"version":"","build":"","channel":"beta"},\
        "device":{"model":"iPhone","os":"iOS","os_version":"18.","idiom":"phone","locale":"en_US"},"session_id":"","install_id":"","app_state":"active",\
        "screen":"ViewController","window":{"x":0,"y":0,"width":390,"height":844},"view":{"name":"","expected":{"x":0,"y":0,"width":390,"height":44},\
        "actual":{"x":0,"y":0,"width":390,"height":44},"tolerance":1},"keyboard":{"visible":true,"frame":{"x":0,"y":0,"width":390,"height":336},\
        "mode":"docked","height":336,"animation_duration":0.25,"animation_curve":7,"input_mode":"en-US","notification":"keyboardWillChangeFrame"},\
        "action":{"auto_fixed":false,"test_crash":false},"logs":["[keyboard][watchdog] woof: "],"attributes":{}}
        """).utf8)
}
