import Foundation
import Testing
@testable import WatchdogWire

/// Items are parsed into a flat tape and their members looked up by comparing bytes, from the
/// member after the one read last (issue 26). What a client sends must read exactly as the
/// tree of `String`s it replaced read it: in any member order, with escaped names, and with
/// duplicates refused however they are spelled.
@Suite struct JSONTapeTests {
    /// Read into a tape only, never compared with a clock: a fixed date.
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

/// A batch whose body is JSON of the expected shape is parsed in one pass (`decodeWhole`); any
/// other goes through the splitter and item-by-item parsing (`decodeSplit`), which keeps one
/// malformed item from hiding the others. Where the one-pass reader answers, it must answer
/// exactly what the splitter path answers.
@Suite struct OnePassBatchTests {
    static func describe(_ result: Result<DecodedBatch<Report>, ErrorDetail>?) -> String {
        guard let result else { return "declined" }
        switch result {
        case .failure(let error): return "error \(error.code): \(error.message)"
        case .success(let batch):
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let items = batch.items.map { item -> String in
                switch item {
                case .decoded(let report, let json):
                    return "decoded \(String(decoding: try! encoder.encode(report), as: UTF8.self)) from \(String(decoding: json, as: UTF8.self))"
                case .undecodable(let id, let error): return "undecodable \(id ?? "-") \(error.code): \(error.message)"
                }
            }
            return (items + ["member " + (batch.member.map { String(decoding: $0, as: UTF8.self) } ?? "none")]).joined(separator: "\n")
        }
    }

    static func results(_ body: String, limit: Int = 500) -> (whole: String, split: String) {
        let bytes = Array(body.utf8)
        let whole: Result<DecodedBatch<Report>, ErrorDetail>?
        do throws(ErrorDetail) {
            whole = try BatchDecoder.decodeWhole(Report.self, key: "reports", from: bytes, limit: limit, member: "client_dropped").map { .success($0) }
        } catch {
            whole = .failure(error)
        }
        let split: Result<DecodedBatch<Report>, ErrorDetail>
        do throws(ErrorDetail) {
            split = .success(try BatchDecoder.decodeSplit(Report.self, key: "reports", from: bytes, limit: limit, member: "client_dropped"))
        } catch {
            split = .failure(error)
        }
        return (describe(whole), describe(split))
    }

    @Test func whereOnePassAnswersItAnswersWhatTheSplitterPathAnswers() {
        let good = JSONTapeTests.report
        let wrongType = good.replacingOccurrences(of: #""app_state": "active""#, with: #""app_state": 5"#)
        let noKind = good.replacingOccurrences(of: #""kind": "view_frame_mismatch", "#, with: "")
        let huge = #"{"id": "x", "logs": [""# + String(repeating: "a", count: Limits.itemBytes) + #""]}"#
        let dropped = #"{"id": "d", "release": {"version": "1", "build": "2"}, "evicted": 3, "quarantined": 0}"#
        let bodies: [(String, answered: Bool)] = [
            ("{\"reports\": [\(good), \(wrongType), \(noKind)]}", true),
            ("  {\"client_dropped\": \(dropped), \"reports\": [\(good)], \"other\": [1, {\"a\": null}]}\n", true),
            ("{\"reports\": [], \"client_dropped\": \(dropped)}", true),
            ("{\"reports\": [\(huge), \(good)]}", true),
            ("{\"reports\": [\(good), \(good), \(good)]}", true),
            // Declined: the splitter path's errors and isolation apply.
            ("{\"reports\": [\(good), 7, \"x\"]}", false),
            ("{\"reports\": [\(good), {\"id\": NaN}]}", false),
            ("{\"reports\": [\(good)], \"client_dropped\": null}", false),
            ("{\"reports\": [\(good)], \"client_dropped\": [1]}", false),
            ("{\"reports\": [\(good)], \"reports\": []}", false),
            ("{\"rep\\u006frts\": [\(good)]}", false),
            ("{\"rep\\u006frts\": [], \"reports\": [\(good)]}", false),
            ("{\"reports\": {}}", false),
            ("[\(good)]", false),
            ("{\"reports\": [\(good)]} x", false),
            ("\u{FEFF}{\"reports\": [\(good)]}", false),
            ("{\"reports\": [" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "]}", false),
            // Denser than one value per 8 bytes: its tape would take up to 16 bytes per body byte.
            ("{\"reports\": [\(good), {\"id\": \"d\", \"x\": [" + Array(repeating: "1", count: 5_000).joined(separator: ",") + "]}]}", false),
        ]
        for (body, answered) in bodies {
            let (whole, split) = Self.results(body)
            if answered {
                #expect(whole == split, "\(body.prefix(120))")
                #expect(!whole.hasPrefix("error") && whole != "declined")
            } else {
                #expect(whole == "declined", "\(body.prefix(120)): \(whole.prefix(200))")
            }
        }
        let (whole, split) = Self.results("{\"reports\": [\(good), \(good), \(good)]}", limit: 2)
        #expect(whole == split && whole.hasPrefix("error too_many_items"), "\(whole)")
    }
}
