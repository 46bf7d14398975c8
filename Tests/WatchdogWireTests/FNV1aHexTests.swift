import Testing
@testable import WatchdogWire

/// `FNV1a64.hex` has two ways to spell a value: in place (iOS 14+, and everywhere else) and
/// through an array (WatchdogKit at iOS 13). Both give the same digits.
@Suite struct FNV1aHexTests {
    @Test func theIOS13SpellingGivesTheSameDigitsAsTheInPlaceOne() {
        var generator = SeededGenerator(seed: 13)
        let values: [UInt64] = [0, 1, 0xF, 0xcbf2_9ce4_8422_2325, .max] + (0..<200).map { _ in generator.next() }
        for value in values {
            #expect(FNV1a64.hexThroughArray(value, prefix: "fp_") == FNV1a64.hex(value, prefix: "fp_"))
            #expect(FNV1a64.hexThroughArray(value, prefix: "") == FNV1a64.hex(value, prefix: ""))
        }
        #expect(FNV1a64.hexThroughArray(0xcbf2_9ce4_8422_2325, prefix: "fp_") == "fp_cbf29ce484222325")
    }
}
