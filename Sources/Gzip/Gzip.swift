import CZlib

/// gzip (RFC 1952) through the system zlib, in both directions, with a hard cap on output size
/// so a small compressed body cannot expand without bound (a "gzip bomb").
public enum Gzip {
    /// Why a body could not be inflated.
    public enum Failure: Error, Equatable, Sendable {
        /// The inflated data would exceed the given limit in bytes.
        case tooLarge(limit: Int)
        /// The data is not a complete, valid gzip stream.
        case corrupt(String)
    }

    /// Inflates a gzip stream, stopping as soon as the output would pass `limit` bytes.
    ///
    /// Concatenated gzip members (RFC 1952 §2.2) are inflated one after another.
    public static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        if input.isEmpty { throw .corrupt("empty gzip body") }
        var stream = z_stream()
        guard watchdog_inflate_init_gzip(&stream) == Z_OK else { throw .corrupt("zlib could not start") }
        defer { inflateEnd(&stream) }

        var output: [UInt8] = []
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var failure: Failure?
        input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = uInt(inputBuffer.count)
            while true {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunkSize - Int(stream.avail_out)
                if output.count + produced > limit {
                    failure = .tooLarge(limit: limit)
                    return
                }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    if stream.avail_in == 0 { return }
                    // Another gzip member follows.
                    guard inflateReset(&stream) == Z_OK else {
                        failure = .corrupt("bad gzip member")
                        return
                    }
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    if stream.avail_in == 0 {
                        failure = .corrupt("gzip stream is truncated")
                        return
                    }
                    continue
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "code \(status)"
                    failure = .corrupt("gzip stream is corrupt: \(message)")
                    return
                }
            }
        }
        if let failure { throw failure }
        return output
    }

    /// zlib could not compress: it refused to start (`deflateInit2`: a level outside -1…9, no
    /// memory, a mismatched zlib) or did not finish the stream (`deflate`).
    public struct CompressionFailed: Error, Equatable, Sendable, CustomStringConvertible {
        /// The zlib call and the code it returned (`Z_STREAM_ERROR` is -2, `Z_BUF_ERROR` -5).
        public var call: String
        public var code: Int32

        public var description: String { "\(call) returned \(code)" }
    }

    /// Compresses bytes into a single gzip member.
    public static func compress(_ input: [UInt8], level: Int32 = Z_DEFAULT_COMPRESSION) throws(CompressionFailed) -> [UInt8] {
        var stream = z_stream()
        let started = watchdog_deflate_init_gzip(&stream, level)
        guard started == Z_OK else { throw CompressionFailed(call: "deflateInit2", code: started) }
        defer { deflateEnd(&stream) }
        // deflateBound is enough for one Z_FINISH call to end the stream; anything but
        // Z_STREAM_END means the output would be a truncated member.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
        let (status, written): (Int32, Int) = input.withUnsafeBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                let status = deflate(&stream, Z_FINISH)
                return (status, outputBuffer.count - Int(stream.avail_out))
            }
        }
        guard status == Z_STREAM_END else { throw CompressionFailed(call: "deflate", code: status) }
        output.removeSubrange(written...)
        return output
    }
}
