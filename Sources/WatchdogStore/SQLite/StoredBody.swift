import GRDB
import Gzip
import Locking

/// How the store keeps a report's or session's JSON: compressed, and the client's exact bytes
/// come back on read. Since issue 26 a body is one zstd frame with dictionary 1
/// (`ZstdBodyCodec`, about a quarter of a 1.3 KB report); before, it was deflated (zlib
/// format) with the preset dictionary `v1`, and such rows stay as they are and are read as
/// they were: the bytes say which (a zstd frame starts with its magic, a zlib stream with
/// its CMF byte). Bodies written before compression (TEXT) are read as they are.
///
/// The dictionaries are part of the file format: a stored body names its dictionary (zlib by
/// Adler-32, zstd by id). Never edit `v1` or the zstd dictionary 1; a better one is a v2
/// beside them, and `text(from:)` keeps reading every one.
enum StoredBody {
    /// Compresses a body on the caller's thread (ingest: libmicrohttpd's, not the writer's).
    static func compress(_ text: String) -> [UInt8] {
        var text = text
        let compressed = text.withUTF8 { utf8 in zstd { $0.compress(UnsafeRawBufferPointer(utf8)) } }
        // zstd fails only when it cannot allocate; an uncompressed body is still exact.
        return compressed ?? Array(text.utf8)
    }

    /// The stored body as the client's text: a BLOB is decompressed, TEXT (older rows) is as stored.
    static func text(from value: DatabaseValue) throws -> String {
        switch value.storage {
        case .string(let text):
            return text
        case .blob(let data):
            return try data.withUnsafeBytes { try text(fromCompressed: $0) }
        default:
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "a stored body is neither TEXT nor BLOB")
        }
    }

    /// A stored body read as bytes (the PostgreSQL store keeps every body compressed).
    static func text(fromCompressed bytes: [UInt8]) throws -> String {
        try bytes.withUnsafeBytes { try text(fromCompressed: $0) }
    }

    /// A zstd frame or, written before issue 26, a zlib stream with the preset dictionary `v1`.
    static func text(fromCompressed raw: UnsafeRawBufferPointer) throws -> String {
        let bytes: [UInt8]
        if ZstdBodyCodec.isFrame(raw) {
            bytes = try zstd { codec throws(ZstdBodyCodec.Failure) in try codec.decompress(raw, limit: maximumBytes) }
        } else {
            bytes = try zlib { codec throws(PresetDictionaryCodec.Failure) in try codec.decompress(raw, limit: maximumBytes) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Larger than any body ingest accepts (the request body limit), so a damaged row cannot
    /// inflate without bound.
    static let maximumBytes = 16 << 20

    private static let zstdPool = Locked<[ZstdBodyCodec]>([])
    private static let zlibPool = Locked<[PresetDictionaryCodec]>([])

    /// Runs `body` with a zstd codec of its own; codecs are reused (a fresh context costs more
    /// than compressing a report).
    private static func zstd<Result, Failure: Error>(_ body: (ZstdBodyCodec) throws(Failure) -> Result) throws(Failure) -> Result {
        let codec = zstdPool.withLock { $0.popLast() } ?? ZstdBodyCodec()
        defer { zstdPool.withLock { if $0.count < 16 { $0.append(codec) } } }
        return try body(codec)
    }

    /// The same for the zlib codec that wrote bodies before issue 26 (level 3, an 8 KiB window,
    /// a 16 KiB hash table: the parameters they were written with do not matter to inflate).
    static func zlib<Result, Failure: Error>(_ body: (PresetDictionaryCodec) throws(Failure) -> Result) throws(Failure) -> Result {
        let codec = zlibPool.withLock { $0.popLast() } ?? PresetDictionaryCodec(dictionary: v1, level: 3, windowBits: 13, memoryLevel: 6)
        defer { zlibPool.withLock { if $0.count < 16 { $0.append(codec) } } }
        return try body(codec)
    }

    /// The zlib preset dictionary of bodies written before issue 26: what reports and sessions repeat, as WatchdogKit (compact) and hand-written
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
