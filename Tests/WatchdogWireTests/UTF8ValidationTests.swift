import Testing
import WatchdogWire

/// `ByteScan.isValidUTF8` (WatchdogWire runs inside WatchdogKit at iOS 13, where the standard
/// library's `String(validating:as:)` does not exist) answers what that initializer answers
/// here, on Linux, where it does.
@Suite struct UTF8ValidationTests {
    static func standard(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }

    @Test func everyOneAndTwoByteSequenceIsJudgedAsTheStandardLibraryJudgesIt() {
        var disagreements: [[UInt8]] = []
        for first in 0...255 {
            let one = [UInt8(first)]
            if ByteScan.isValidUTF8(one) != Self.standard(one) { disagreements.append(one) }
            for second in 0...255 {
                let two = [UInt8(first), UInt8(second)]
                if ByteScan.isValidUTF8(two) != Self.standard(two) { disagreements.append(two) }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test func threeAndFourByteSequencesAroundEveryBoundaryAreJudgedAsTheStandardLibraryJudgesThem() {
        // Each byte's interesting values: the ends of the ranges in the Unicode Standard's table 3-7.
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                              0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var disagreements: [[UInt8]] = []
        for a in edges { for b in edges { for c in edges {
            let three = [a, b, c]
            if ByteScan.isValidUTF8(three) != Self.standard(three) { disagreements.append(three) }
            for d in edges {
                let four = [a, b, c, d]
                if ByteScan.isValidUTF8(four) != Self.standard(four) { disagreements.append(four) }
            }
        } } }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test func longTextIsJudgedWholeAcrossTheWordAtATimeASCIIPath() {
        let text = Array(#"{"reports": [{"screen": "Compose", "logs": ["résumé ✓ 日本語 🧪"]}]}"#.utf8)
        #expect(ByteScan.isValidUTF8(text))
        var generator = SeededGenerator(seed: 38)
        for _ in 0..<2_000 {
            var bytes = text
            // One byte changed anywhere: inside the ASCII words, or in a multi-byte scalar.
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0...3, using: &generator)) }
            #expect(ByteScan.isValidUTF8(bytes) == Self.standard(bytes), "\(bytes)")
        }
        #expect(ByteScan.isValidUTF8([UInt8]()))
    }
}
