import Gzip
import Testing

/// The gzip both directions use (uploads, ingest), through the system zlib.
@Suite struct GzipTests {
    @Test func compressedBytesInflateBackToTheInput() throws {
        for input in [[], Array("{\"reports\": []}".utf8), (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }] as [[UInt8]] {
            let compressed = try Gzip.compress(input)
            #expect(compressed.prefix(2) == [0x1f, 0x8b], "a gzip member")
            #expect(try Gzip.decompress(compressed, limit: 1 << 20) == input)
        }
    }

    /// zlib's refusal is an error, not an empty body sent as if it were gzip.
    @Test func aCompressionZlibRefusesThrowsInsteadOfReturningNoBytes() {
        let error = #expect(throws: Gzip.CompressionFailed.self) {
            try Gzip.compress(Array("abc".utf8), level: 42)
        }
        #expect(error?.call == "deflateInit2")
        #expect(error?.code == -2, "Z_STREAM_ERROR: no such level")
    }
}
