import Foundation
import Testing
@testable import WatchdogWire

/// Items are parsed into a flat tape and their members looked up by comparing bytes, from the
/// member after the one read last (issue 26). What a client sends must read exactly as the
/// tree of `String`s it replaced read it: in any member order, with escaped names, and with
/// duplicates refused however they are spelled.
@Suite struct JSONTapeTests {
    static let report = #"""
        {"id": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "kind": "view_frame_mismatch", "occurred_at": "2026-11-20T10:00:01.250Z",
         "app": "com.example.mail", "release": {"version": "4.2.0", "build": "1234", "channel": "beta"},
         "device": {"model": "iPhone15,2", "os": "iOS", "os_version": "18.1", "idiom": "phone", "locale": "de_DE"},
         "session_id": "s-1", "install_id": "i-1", "app_state": "active", "screen": "Compose",
         "window": {"x": 0, "y": 0, "width": 393, "height": 852},
         "view": {"name": "ComposeToolbar", "expected": {"x": 0, "y": 500.5, "width": 393, "height": 44},
                  "actual": {"x": 0, "y": 808, "width": 393, "height": 44}, "tolerance": 1},
         "keyboard": {"visible": true, "frame": {"x": 0, "y": 544.5, "width": 393, "height": 307.5}, "mode": "docked",
                      "height": 307.5, "animation_duration": 0.25, "animation_curve": 7, "input_mode": "de-DE", "notification": "did_show"},
         "lock": {"duration_s": 12.5, "flags": {"transition": true, "ignoring_events": false}},
         "action": {"auto_fixed": true, "test_crash": false},
         "logs": ["a", "b\n\"c\""], "attributes": {"theme": "dark", "\u00e9": "x"}}
        """#

    /// `node` as JSON with every object's members in the order `order` gives them.
    static func serialize(_ node: JSONNode, order: ([String]) -> [String]) -> String {
        switch node {
        case .object(let members):
            let values = Dictionary(uniqueKeysWithValues: members)
            return "{" + order(members.map(\.0)).map { "\(serialize(.string($0), order: order)): \(serialize(values[$0]!, order: order))" }.joined(separator: ", ") + "}"
        case .array(let elements):
            return "[" + elements.map { serialize($0, order: order) }.joined(separator: ", ") + "]"
        case .string(let text):
            return String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
        case .number(let number): return "\(number)"
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }

    /// The report decoded from `json`, written back with sorted keys (comparable as bytes).
    static func decoded(_ json: String) throws -> String {
        let batch = try BatchDecoder.decode(Report.self, key: "reports", from: Array("{\"reports\": [\(json)]}".utf8))
        guard case .decoded(let report, _) = batch.items.first else { throw ErrorDetail(code: "test", message: "not decoded: \(batch.items)") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    @Test func membersInAnyOrderReadAsInTheWireModelsOrder() throws {
        let expected = try Self.decoded(Self.report)
        #expect(expected.contains(#""notification":"did_show""#) && expected.contains(#""ignoring_events":false"#), "every member read")
        let object = try JSONReader.parse(Array(Self.report.utf8))
        var generator = SeededGenerator(seed: 26)
        for round in 0..<20 {
            let order: ([String]) -> [String] = round == 0 ? { $0.reversed() } : { $0.shuffled(using: &generator) }
            let reordered = Self.serialize(object, order: order)
            #expect(try Self.decoded(reordered) == expected, "\(reordered)")
        }
    }

    @Test func anEscapedMemberNameIsThatMember() throws {
        let escaped = Self.report.replacingOccurrences(of: #""kind""#, with: #""\u006bind""#)
            .replacingOccurrences(of: #""mode""#, with: #""mod\u0065""#)
        #expect(escaped != Self.report)
        #expect(try Self.decoded(escaped) == Self.decoded(Self.report))
    }

    @Test func duplicateNamesAreRefusedHoweverTheyAreSpelled() throws {
        // Plain and escaped; canonically equivalent (é precomposed and e + combining acute;
        // the Kelvin sign and K), as Swift's String compares them.
        let pairs = [(#""a""#, #""\u0061""#), (#""\u0061""#, #""a""#), ("\"\u{E9}\"", "\"e\u{301}\""), (#""K""#, #""\u212A""#),
                     (#""\u212A""#, #""K""#), (#""a\"b""#, #""a\u0022b""#)]
        for (first, second) in pairs {
            for filler in [0, 70] {  // scanned, and past 64 members (hashed in a set)
                let others = (0..<filler).map { "\"k\($0)\": \($0)" }
                let text = "{" + ([first + ": 1"] + others + [second + ": 2"]).joined(separator: ", ") + "}"
                #expect(throws: JSONReader.Failure.self, "\(text.prefix(80))") { try JSONReader.parse(Array(text.utf8)) }
            }
        }
        for text in [#"{"a": 1, "b": 2, "ab": 3, "ba": 4, "A": 5}"#, #"{"a": {"a": 1, "b": 2}, "b": {"a": {"b": 3}}}"#,
                     "{" + (0..<200).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + "}"] {
            _ = try JSONReader.parse(Array(text.utf8))
        }
        // A nested object's names end with it: the parent's next member is compared with the parent's.
        #expect(throws: JSONReader.Failure.self) { try JSONReader.parse(Array(#"{"a": {"b": 1}, "c": 2, "a": 3}"#.utf8)) }
    }

    @Test func aFailureSaysWhereAsTheTreeReaderDid() {
        for (text, offset) in [(#"{"a": 1, "a": 2}"#, 9), (#"{"a": [1, }"#, 10), (#"{"a": "x\u00"}"#, 12)] {
            do {
                _ = try JSONReader.parse(Array(text.utf8))
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.offset == offset, "\(text): \(error)")
            }
        }
    }
}
