import CZstd
import ZstdDictionaries

/// zstd with a dictionary trained on report and session bodies (`watchdog_zstd_dictionary_v1()`),
/// the codec of stored bodies since issue 26: about a tenth smaller and three to four times
/// cheaper than deflate with a preset dictionary (`PresetDictionaryCodec`), because the
/// dictionary is digested once for the whole process (a `ZSTD_CDict`/`ZSTD_DDict`), where zlib
/// primed every stream with the dictionary again.
///
/// A frame names its dictionary by id in its header and carries the content size and a
/// checksum, so a damaged or foreign row is an error, never wrong text. A codec keeps one
/// compression and one decompression context and is not thread-safe: take one per thread or
/// from a pool. The digested dictionaries are shared and read-only.
final class ZstdBodyCodec {
    /// Why stored bytes could not be decompressed.
    enum Failure: Error, Equatable {
        /// Not a frame of a known dictionary, truncated, or failing its checksum.
        case corrupt(String)
        /// Decompressed, it would exceed the limit.
        case tooLarge(limit: Int)
    }

    /// The frame magic (little-endian 0xFD2FB528) every stored zstd body starts with; a zlib
    /// stream (the bodies written before) starts with its CMF byte, never 0x28.
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    /// Whether `bytes` start like a zstd frame.
    static func isFrame(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 4 && bytes[0] == magic[0] && bytes[1] == magic[1] && bytes[2] == magic[2] && bytes[3] == magic[3]
    }

    /// Level 3: on the benchmark's payloads (1.28 KB each) 3 gives about 320 B a body at
    /// 250 MB/s, 1 about 345 B, 5 about 305 B at a third of the speed (zstd -b, same machine).
    static let level: Int32 = 3

    /// The id of dictionary 1, as frames name it.
    static let dictionaryID = ZSTD_getDictID_fromDict(watchdog_zstd_dictionary_v1(), watchdog_zstd_dictionary_v1_size())

    // Digested once for the process (for level 3), read-only from then on.
    nonisolated(unsafe) private static let compressionDictionary = ZSTD_createCDict(watchdog_zstd_dictionary_v1(), watchdog_zstd_dictionary_v1_size(), level)
    nonisolated(unsafe) private static let decompressionDictionary = ZSTD_createDDict(watchdog_zstd_dictionary_v1(), watchdog_zstd_dictionary_v1_size())

    private let compressor: OpaquePointer?
    private let decompressor: OpaquePointer?

    init() {
        compressor = ZSTD_createCCtx()
        decompressor = ZSTD_createDCtx()
        if let compressor {
            ZSTD_CCtx_setParameter(compressor, ZSTD_c_checksumFlag, 1)
            ZSTD_CCtx_refCDict(compressor, Self.compressionDictionary)
        }
        if let decompressor { ZSTD_DCtx_refDDict(decompressor, Self.decompressionDictionary) }
    }

    deinit {
        ZSTD_freeCCtx(compressor)
        ZSTD_freeDCtx(decompressor)
    }

    /// One frame holding `input`; `nil` only if zstd cannot allocate.
    func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let compressor, Self.compressionDictionary != nil else { return nil }
        let bound = ZSTD_compressBound(input.count)
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            let written = ZSTD_compress2(compressor, buffer.baseAddress, bound, input.baseAddress, input.count)
            failed = ZSTD_isError(written) != 0
            count = failed ? 0 : written
        }
        return failed ? nil : output
    }

    /// The bytes of one frame made by `compress`.
    func decompress(_ input: UnsafeRawBufferPointer, limit: Int) throws(Failure) -> [UInt8] {
        guard let decompressor, Self.decompressionDictionary != nil else { throw .corrupt("zstd could not start") }
        let size = ZSTD_getFrameContentSize(input.baseAddress, input.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values: every frame written
        // here names its size.
        guard size < UInt64.max - 1 else { throw .corrupt("not a zstd frame with its content size") }
        guard size <= UInt64(limit) else { throw .tooLarge(limit: limit) }
        var failure: Failure?
        let output = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
            let produced = ZSTD_decompressDCtx(decompressor, buffer.baseAddress, Int(size), input.baseAddress, input.count)
            if ZSTD_isError(produced) != 0 {
                failure = .corrupt(String(cString: ZSTD_getErrorName(produced)))
                count = 0
            } else if produced != Int(size) {
                failure = .corrupt("\(produced) bytes where the frame names \(size)")
                count = 0
            } else {
                count = produced
            }
        }
        if let failure { throw failure }
        return output
    }
}
