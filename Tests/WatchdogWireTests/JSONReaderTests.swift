import Testing
@testable import WatchdogWire

@Suite struct JSONReaderTests {
    func parse(_ text: String) throws(JSONReader.Failure) -> JSONNode {
        try JSONReader.parse(Array(text.utf8))
    }

    @Test func readsEveryKindOfValue() throws {
        let node = try parse(#" {"a": [1, -2.5, 3e2, true, false, null], "b": "x\"\\\/\n\u00e9\ud83d\ude00", "c": {}} "#)
        #expect(node["a"] == .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null]))
        #expect(node["b"] == .string("x\"\\/\né😀"))
        #expect(node["c"] == .object([]))
    }

    @Test func refusesWhatRFC8259Refuses() {
        let bad = ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e", "1e999", "-1e999", "NaN", "Infinity", "'a'", "{a:1}",
                   "\"\\x\"", "\"\\ud800\"", "\"tab\there\"", "[1] [2]", "tru", "// c\n1", "{\"a\":1,\"a\":2}"]
        for text in bad {
            #expect(throws: JSONReader.Failure.self, "\(text)") { try parse(text) }
        }
    }

    @Test func refusesDuplicateKeysInLargeObjectsToo() {
        let members = (0..<40).map { "\"k\($0)\": \($0)" } + ["\"k7\": 0"]
        #expect(throws: JSONReader.Failure.self) { try parse("{" + members.joined(separator: ",") + "}") }
    }

    @Test func boundsNesting() throws {
        _ = try parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        #expect(throws: JSONReader.Failure.self) { try parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)) }
        #expect(throws: JSONReader.Failure.self) { try parse(String(repeating: "[", count: 1_000_000)) }
    }
}

@Suite struct JSONBatchSplitterTests {
    @Test func findsEachElementOfTheArrayExactly() throws {
        let body = Array(#"{"meta": {"x": [1, "]"]}, "reports": [ {"id": "a,]"} , [], "s", 12 ], "z": null}"#.utf8)
        let ranges = try JSONBatchSplitter.elements(of: "reports", in: body)
        #expect(ranges.map { String(decoding: body[$0], as: UTF8.self) } == [#"{"id": "a,]"}"#, "[]", "\"s\"", "12"])
    }

    @Test func tellsShapeFromSyntaxErrors() {
        let cases: [(String, Bool)] = [(#"{"reports": {}}"#, true), (#"{"other": []}"#, true), ("[]", true), (#"{"reports": [], "reports": []}"#, true),
                                       (#"{"reports": [1,]}"#, false), (#"{"reports": [1] "#, false), (#"{"reports": []} x"#, false)]
        for (text, isShape) in cases {
            do {
                _ = try JSONBatchSplitter.elements(of: "reports", in: Array(text.utf8))
                Issue.record("\(text) was split")
            } catch {
                if case .shape = error { #expect(isShape, "\(text)") } else { #expect(!isShape, "\(text)") }
            }
        }
    }
}

@Suite struct JSONBatchSplitterIsolationTests {
    @Test func elementsWithSyntaxErrorsAreStillDelimited() throws {
        let deep = String(repeating: "[", count: 200) + "\"]\"" + String(repeating: "]", count: 200)
        let elements = [#"{"a": NaN}"#, "True", #"{"b": -Infinity}"#, "{\"c\": \"a\tb\"}", deep, #"{"d": 1}"#]
        let body = Array("{\"reports\": [\(elements.joined(separator: ", "))]}".utf8)
        let ranges = try JSONBatchSplitter.elements(of: "reports", in: body)
        #expect(ranges.map { String(decoding: body[$0], as: UTF8.self) } == elements)
    }

    @Test func aBareWordOutsideTheBatchIsStillInvalidJSON() {
        for text in ["NaN", #"{"reports": [], "x": NaN}"#, "{\"re\tports\": []}"] {
            do {
                _ = try JSONBatchSplitter.elements(of: "reports", in: Array(text.utf8))
                Issue.record("\(text) was split")
            } catch {
                guard case .malformed = error else { Issue.record("\(text): \(error)"); continue }
            }
        }
    }
}

/// The string scans read 8 bytes at a time (`ByteScan`): a quote, a backslash, a control
/// character or a non-ASCII byte at every offset of a word, near the end of the input or not,
/// must give what a byte-at-a-time reading gives.
@Suite struct WordAtATimeScanTests {
    static let specials: [(text: String, decoded: String?)] = [
        ("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"), ("\\u00e9", "é"), ("é", "é"), ("😀", "😀"), ("\u{7F}", "\u{7F}"),
        ("\t", nil), ("\u{01}", nil), ("\u{1F}", nil),
    ]

    @Test func aSpecialByteAtEveryOffsetReadsAsByteByByte() throws {
        for length in 0...24 {
            for offset in 0...length {
                for (special, decoded) in Self.specials {
                    let before = String(repeating: "a", count: offset), after = String(repeating: "b", count: length - offset)
                    let json = "{\"k\": \"\(before)\(special)\(after)\", \"n\": 1}"
                    let element = "{\"reports\": [\(json), 2]}"
                    let ranges = try JSONBatchSplitter.elements(of: "reports", in: Array(element.utf8))
                    #expect(ranges.map { String(decoding: Array(element.utf8)[$0], as: UTF8.self) } == [json, "2"], "\(json)")
                    if let decoded {
                        let node = try JSONReader.parse(Array(json.utf8))
                        #expect(node["k"] == .string(before + decoded + after), "\(json)")
                        #expect(node["n"] == .number(1))
                    } else {
                        #expect(throws: JSONReader.Failure.self, "\(json)") { try JSONReader.parse(Array(json.utf8)) }
                    }
                }
            }
        }
    }

    @Test func asciiIsToldFromAnyNonASCIIByteAtAnyOffset() {
        for length in 0...24 {
            #expect(ByteScan.isASCII(String(repeating: "a", count: length)))
            for offset in 0..<max(length, 1) where length > 0 {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                bytes[offset] = 0xC3
                bytes.insert(0xA9, at: offset + 1)
                #expect(!ByteScan.isASCII(String(decoding: bytes, as: UTF8.self)), "\(length) \(offset)")
            }
        }
    }
}
