import Foundation
import Testing
import WatchdogWire

/// Parsing and formatting read no clock: the dates here are fixed on purpose.
@Suite struct TimestampTests {
    @Test func parsesRFC3339WithFractionsAndOffsets() {
        #expect(Timestamp.parseMilliseconds("1970-01-01T00:00:00Z") == 0)
        #expect(Timestamp.parseMilliseconds("2026-11-20T10:00:01.001Z") == 1_795_168_801_001)
        #expect(Timestamp.parseMilliseconds("2026-11-20T19:00:01.001+09:00") == 1_795_168_801_001)
        #expect(Timestamp.parseMilliseconds("2026-11-20T10:00:01.001999999Z") == 1_795_168_801_001)
        #expect(Timestamp.parseMilliseconds("2024-02-29T00:00:00Z") != nil)
    }

    @Test func rejectsWhatIsNotRFC3339() {
        for text in ["yesterday", "2026-11-20", "2026-11-20T10:00:01", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                     "2026-11-20T24:00:00Z", "2026-11-20T10:00:01.Z", "2026-11-20T10:00:01Zjunk", "２０２６-11-20T10:00:01Z"] {
            #expect(Timestamp.parseMilliseconds(text) == nil, "\(text)")
        }
    }

    @Test func formatsWhatItParses() {
        #expect(Timestamp.format(milliseconds: 1_795_168_801_001) == "2026-11-20T10:00:01.001Z")
        #expect(Timestamp.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
    }
}

/// The switches every report goes through agree with the vocabularies docs/api.md lists.
@Suite struct VocabularyTests {
    @Test func eachCheckAdmitsItsSetsMembersAndNothingElse() {
        let checks: [(Set<String>, (String) -> Bool)] = [
            (Vocabulary.builtInKinds, Vocabulary.isBuiltInKind), (Vocabulary.appStates, Vocabulary.isAppState),
            (Vocabulary.idioms, Vocabulary.isIdiom), (Vocabulary.keyboardModes, Vocabulary.isKeyboardMode),
        ]
        let everyMember = checks.reduce(into: Set<String>()) { $0.formUnion($1.0) }
        for (members, check) in checks {
            for word in everyMember.union(["", "Active", "docked ", "x-docked", "phon", "interaction_lock2"]) {
                #expect(check(word) == members.contains(word), "\(word)")
            }
        }
    }
}

/// The validator's clock is the one it is given: pinned here, with the report a day and two
/// hours before it, so that "more than 24 h after" is tested at a fixed distance.
@Suite struct ReportValidatorTests {
    let validator = ReportValidator(nowMilliseconds: Timestamp.parseMilliseconds("2026-11-21T12:00:00Z")!)

    func report() -> Report {
        Report(id: "83223034-6633-586D-bdb9-a5c502f73ae9", kind: "view_frame_mismatch", occurredAt: "2026-11-20T10:00:01.001Z",
               app: "com.example.mail", release: Release(version: "14.2.0", build: "31245"),
               view: ViewFrames(expected: Frame(x: 0, y: 228, width: 390, height: 44), actual: Frame(x: 0, y: 264, width: 390, height: 44)))
    }

    func message(_ change: (inout Report) -> Void) -> String? {
        var report = report()
        change(&report)
        do {
            _ = try validator.validate(report)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func acceptsAValidReportAndNormalizesItsId() throws {
        let valid = try validator.validate(report())
        #expect(valid.report.id == "83223034-6633-586d-bdb9-a5c502f73ae9")
    }

    @Test func namesTheFieldAndWhatWouldBeValid() {
        #expect(message { $0.view?.expected.width = -5 } == "view.expected.width must be a finite number ≥ 0 and ≤ 1e9, got -5.0")
        #expect(message { $0.view?.actual.x = .infinity }?.hasPrefix("view.actual.x must be a finite number") == true)
        #expect(message { $0.kind = "crash" }?.hasPrefix("kind must be one of") == true)
        #expect(message { $0.kind = "x-custom_glitch.v2" } == nil)
        #expect(message { $0.kind = "x-" }?.hasPrefix("kind") == true)
        #expect(message { $0.occurredAt = "2026-11-23T10:00:00Z" }?.hasPrefix("occurred_at must not be more than 24 h after") == true)
        #expect(message { $0.id = "not-a-uuid" }?.hasPrefix("id must be a UUID") == true)
        #expect(message { $0.appState = "foreground" }?.hasPrefix("app_state must be one of active, background, inactive") == true)
        #expect(message { $0.screen = String(repeating: "s", count: 129) } == "screen must be at most 128 characters, got 129")
        #expect(message { $0.keyboard = KeyboardState(mode: "flying") }?.hasPrefix("keyboard.mode must be one of") == true)
        #expect(message { $0.device = Device(idiom: "watch") }?.hasPrefix("device.idiom must be one of") == true)
        #expect(message { $0.logs = Array(repeating: "x", count: 201) } == "logs must have at most 200 lines, got 201")
        #expect(message { $0.attributes = Dictionary(uniqueKeysWithValues: (0..<33).map { ("k\($0)", "v") }) } == "attributes must have at most 32 pairs, got 33")
        #expect(message { $0.view = nil }?.hasPrefix("view is required for kind view_frame_mismatch") == true)
        #expect(message { $0.kind = "interaction_lock"; $0.lock = nil }?.hasPrefix("lock is required") == true)
        #expect(message { $0.sessionId = String(repeating: "s", count: 65) } == "session_id must be at most 64 characters, got 65")
        #expect(message { $0.screen = String(repeating: "é", count: 128) } == nil, "limits count characters, as openapi.yaml's maxLength does, not bytes")
        #expect(message { $0.release.build = "" } == "release.build must not be empty")
        #expect(message { $0.screen = "Compose\nController" } == "screen must not contain control characters")
    }

    /// Lengths are Unicode scalars and control characters C0 or DEL, whatever their UTF-8 length
    /// (the validator counts them on the bytes): checked against Swift's own scalar view over
    /// random text of 1- to 4-byte scalars, near each limit.
    @Test func countsCharactersAndControlsByUnicodeScalarWhateverTheirUTF8Length() {
        let printable: [Unicode.Scalar] = ["a", "Z", "é", "\u{0301}", "中", "😀", "\u{80}", "\u{FFFD}", " "]
        // Rare controls, each alone or together, so that each decides some verdicts.
        let alphabets = [printable, printable + ["\u{1F}"], printable + ["\u{7F}"], printable + ["\u{1F}", "\u{7F}"]]
        var random = SeededGenerator(seed: 26)
        for round in 0..<2000 {
            let scalars = alphabets[round % alphabets.count]
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 120...136, using: &random) {
                let rare = Int.random(in: 0..<40, using: &random) == 0
                text.append(rare ? scalars[Int.random(in: printable.count..<max(printable.count + 1, scalars.count), using: &random) % scalars.count]
                                 : printable[Int.random(in: 0..<printable.count, using: &random)])
            }
            let screen = String(text)
            let count = screen.unicodeScalars.count
            let control = screen.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            let expected = count > 128 ? "screen must be at most 128 characters, got \(count)" : control ? "screen must not contain control characters" : nil
            #expect(message { $0.screen = screen } == expected, "\(screen.unicodeScalars.map { String($0.value, radix: 16) })")
            let value = String(screen.unicodeScalars.prefix(count * 2))
            let attribute = message { $0.attributes = ["k": value + value] }
            let length = (value + value).unicodeScalars.count
            #expect(attribute == (length > 256 ? "attributes.k must be at most 256 characters, got \(length)" : nil))
        }
        #expect(message { $0.id = "83223034-6633-586d-bdb9-a5c502f73ae9" } == nil)
    }
}

@Suite struct BatchDecoderTests {
    @Test func keepsGoodItemsBesideUndecodableOnes() throws {
        // Decoding reads no clock: a fixed date.
        let body = #"{"reports": [{"id": "a", "kind": 5}, 7, {"id": "83223034-6633-586d-bdb9-a5c502f73ae9", "kind": "view_frame_mismatch", "occurred_at": "2026-11-20T10:00:01Z", "app": "a", "release": {"version": "1", "build": "2"}, "app_state": "active"}]}"#
        let batch = try BatchDecoder.decode(Report.self, key: "reports", from: Array(body.utf8))
        #expect(batch.items.count == 3)
        guard case .undecodable(let id, let error) = batch.items[0] else { Issue.record("item 0 decoded"); return }
        #expect(id == "a")
        #expect(error.message == "kind must be a string")
        guard case .undecodable(nil, let second) = batch.items[1] else { Issue.record("item 1 decoded"); return }
        #expect(second.message == "each item must be a JSON object")
        guard case .decoded = batch.items[2] else { Issue.record("item 2 not decoded"); return }
    }

    @Test func refusesBodiesOfTheWrongShape() {
        for (body, code) in [("{", "invalid_json"), (#"{"reports": "x"}"#, "invalid_shape"), (#"{"sessions": []}"#, "invalid_shape"), ("[]", "invalid_shape")] {
            do {
                _ = try BatchDecoder.decode(Report.self, key: "reports", from: Array(body.utf8))
                Issue.record("\(body) decoded")
            } catch {
                #expect(error.code == code, "\(body)")
            }
        }
    }
}
