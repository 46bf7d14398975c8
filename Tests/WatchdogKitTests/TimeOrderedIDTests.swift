import Testing
import WatchdogKit
import WatchdogWire

/// Ids are UUID version 7: valid for the server, ordered by time, unique.
@Suite struct TimeOrderedIDTests {
    @Test func idsAreVersion7UUIDsWhoseTextStartsWithTheTime() {
        let id = TimeOrderedID.make(milliseconds: 0x0193_4f1a_2b3c)
        #expect(UUIDText.isValid(id))
        #expect(id.hasPrefix("01934f1a-2b3c-7"))
        let variant = id[id.index(id.startIndex, offsetBy: 19)]
        #expect("89ab".contains(variant), "RFC 9562 variant 10")
        #expect(id == id.lowercased())
    }

    @Test func laterIdsSortAfterEarlierOnesAndNoneRepeats() {
        let start: UInt64 = 1_795_000_000_000
        let ids = (0..<20_000).map { TimeOrderedID.make(milliseconds: start + UInt64($0 / 10)) }
        #expect(Set(ids).count == ids.count)
        for index in stride(from: 10, to: ids.count, by: 10) {
            #expect(ids[index - 1] < ids[index], "a later millisecond sorts after every id of an earlier one")
        }
    }
}
