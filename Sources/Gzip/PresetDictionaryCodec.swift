import CZlib

/// Lossless compression of small JSON documents with a preset dictionary (RFC 1950 `FDICT`):
/// deflate starts with the dictionary already in its window, so keys and values every report
/// repeats cost a back-reference from the first byte on, where plain deflate of a 1 KB body
/// would find little to refer to.
///
/// One codec keeps a deflate and an inflate stream and reuses them (`deflateReset`), because
/// setting up a stream allocates about 256 KiB — more than compressing a report costs. A codec
/// is not thread-safe: use one per thread, or take one from a pool.
public final class PresetDictionaryCodec {
    /// Why stored bytes could not be inflated.
    public enum Failure: Error, Equatable, Sendable {
        /// Not a zlib stream, truncated, failing its checksum, or needing another dictionary.
        case corrupt(String)
        /// Inflated, it would exceed the limit.
        case tooLarge(limit: Int)
    }

    private let dictionary: [UInt8]
    /// The dictionary's Adler-32, as the zlib header names it.
    public let dictionaryID: UInt
    private let deflater = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let inflater = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var deflaterReady = false
    private var inflaterReady = false
    private let level: Int32
    private let windowBits: Int32
    private let memoryLevel: Int32

    /// - Parameters:
    ///   - level: zlib's 1 (fastest) to 9.
    ///   - windowBits: how far back a match may reach, 2^n bytes (9–15); the dictionary should fit.
    ///   - memoryLevel: zlib's 1–9; the hash table, which every reset clears, is 2^(n+7) entries.
    public init(dictionary: [UInt8], level: Int32 = Z_DEFAULT_COMPRESSION, windowBits: Int32 = 15, memoryLevel: Int32 = 8) {
        self.dictionary = dictionary
        self.level = level
        self.windowBits = windowBits
        self.memoryLevel = memoryLevel
        dictionaryID = dictionary.withUnsafeBufferPointer { UInt(adler32(adler32(0, nil, 0), $0.baseAddress, uInt($0.count))) }
        deflater.initialize(to: z_stream())
        inflater.initialize(to: z_stream())
    }

    deinit {
        if deflaterReady { deflateEnd(deflater) }
        if inflaterReady { inflateEnd(inflater) }
        deflater.deallocate()
        inflater.deallocate()
    }

    /// Compresses `input` into one zlib stream that needs this codec's dictionary to inflate.
    /// Returns `nil` only if zlib fails (out of memory), never for any input.
    public func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        if !deflaterReady {
            guard watchdog_deflate_init_zlib(deflater, level, windowBits, memoryLevel) == Z_OK else { return nil }
            deflaterReady = true
        } else {
            guard deflateReset(deflater) == Z_OK else { return nil }
        }
        let primed = dictionary.withUnsafeBufferPointer { deflateSetDictionary(deflater, $0.baseAddress, uInt($0.count)) }
        guard primed == Z_OK else { return nil }
        let bound = Int(deflateBound(deflater, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status: Int32 = output.withUnsafeMutableBufferPointer { out in
            deflater.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            deflater.pointee.avail_in = uInt(input.count)
            deflater.pointee.next_out = out.baseAddress
            deflater.pointee.avail_out = uInt(out.count)
            return deflate(deflater, Z_FINISH)
        }
        // deflateBound guarantees room for the whole stream in one call.
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(deflater.pointee.total_out)...)
        return output
    }

    /// Inflates one zlib stream made by `compress` with the same dictionary.
    public func decompress(_ input: UnsafeRawBufferPointer, limit: Int) throws(Failure) -> [UInt8] {
        if !inflaterReady {
            guard watchdog_inflate_init_zlib(inflater) == Z_OK else { throw .corrupt("zlib could not start") }
            inflaterReady = true
        } else {
            guard inflateReset(inflater) == Z_OK else { throw .corrupt("zlib could not reset") }
        }
        var output = [UInt8](repeating: 0, count: min(limit, max(256, input.count * 6)))
        var produced = 0
        inflater.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        inflater.pointee.avail_in = uInt(input.count)
        while true {
            if produced == output.count {
                guard output.count < limit else { throw .tooLarge(limit: limit) }
                output.append(contentsOf: repeatElement(0, count: min(limit - output.count, output.count)))
            }
            let status: Int32 = output.withUnsafeMutableBufferPointer { out in
                inflater.pointee.next_out = out.baseAddress! + produced
                inflater.pointee.avail_out = uInt(out.count - produced)
                let status = inflate(inflater, Z_NO_FLUSH)
                produced = out.count - Int(inflater.pointee.avail_out)
                return status
            }
            switch status {
            case Z_STREAM_END:
                guard inflater.pointee.avail_in == 0 else { throw .corrupt("bytes after the end of the stream") }
                output.removeSubrange(produced...)
                return output
            case Z_NEED_DICT:
                guard inflater.pointee.adler == dictionaryID else {
                    throw .corrupt("needs dictionary \(inflater.pointee.adler), this codec has \(dictionaryID)")
                }
                let set = dictionary.withUnsafeBufferPointer { inflateSetDictionary(inflater, $0.baseAddress, uInt($0.count)) }
                guard set == Z_OK else { throw .corrupt("zlib refused the dictionary") }
            case Z_OK:
                continue
            case Z_BUF_ERROR where inflater.pointee.avail_out > 0:
                throw .corrupt("truncated stream")
            case Z_BUF_ERROR:
                continue
            default:
                throw .corrupt(inflater.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)")
            }
        }
    }
}
