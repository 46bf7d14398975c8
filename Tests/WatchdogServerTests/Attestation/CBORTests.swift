import Crypto
import Foundation
import Testing
@testable import WatchdogServer
import WatchdogTesting

/// The CBOR decoder of App Attest's structures: what it reads, and every bound it keeps.
@Suite struct CBORTests {
    @Test func itReadsTheMajorTypesAttestationsUse() throws {
        let bytes = TestCBOR.encode(.map([(.text("fmt"), .text("apple-appattest")), (.text("n"), .int(-7)), (.text("big"), .int(70_000)),
                                          (.text("x5c"), .array([.bytes([1, 2]), .bytes([])]))]))
        let value = try CBOR.decode(bytes)
        #expect(value["fmt"] == .text("apple-appattest"))
        #expect(value["n"] == .negative(6))
        #expect(value["big"] == .unsigned(70_000))
        #expect(value["x5c"] == .array([.bytes([1, 2]), .bytes([])]))
        #expect(value["absent"] == nil)
    }

    @Test(arguments: [
        ([0x5a, 0xff, 0xff, 0xff, 0xff], "a string of"),           // a length past the input
        ([0x9f, 0xff], "indefinite"),                             // indefinite-length array
        ([0xc0, 0x00], "tags"),                                   // a tag
        ([0xf9, 0x3c, 0x00], "floats"),                           // a half float
        ([0x01, 0x02], "bytes after"),                            // two items
        ([0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], "repeated"), // a repeated key
        ([0x62, 0xc3, 0x28], "UTF-8"),                            // bad UTF-8 text
        ([0x1c], "reserved"),                                     // reserved additional info
        ([0x19, 0x01], "length"),                                 // truncated argument
        ([0x98, 0x41] + [UInt8](repeating: 0, count: 65), "more than"), // too many elements
    ] as [([UInt8], String)])
    func itRefusesWhatAttestationsNeverHold(bytes: [UInt8], reason: String) {
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(bytes) }
        do { _ = try CBOR.decode(bytes) } catch { #expect(error.reason.contains(reason), "\(error.reason)") }
    }

    @Test func nestingAndSizeAreBounded() {
        let deep = [UInt8](repeating: 0x81, count: 9) + [0x00]
        #expect(throws: CBOR.DecodingError(reason: "nested deeper than 8", offset: 9)) { try CBOR.decode(deep) }
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode([UInt8](repeating: 0x81, count: 8) + [0x00], limits: { var l = CBOR.Limits(); l.depth = 4; return l }()) }
        #expect((try? CBOR.decode([UInt8](repeating: 0x81, count: 8) + [0x00])) != nil)
        var big = CBOR.Limits()
        big.size = 10
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(TestCBOR.encode(.bytes([UInt8](repeating: 1, count: 20))), limits: big) }
    }

    @Test func thePinnedRootIsApplesAppAttestationRootCA() throws {
        let base64 = AppAttestRoot.pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: base64))
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "1C:B9:82:3B:A2:8B:A6:AD:2D:33:A0:06:94:1D:E2:AE:4F:51:3E:F1:D4:E8:31:B9:F7:E0:FA:7B:62:42:C9:32")
    }
}
