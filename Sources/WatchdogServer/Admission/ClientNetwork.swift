/// The network a client address belongs to, as admission and the session limits count them:
/// an IPv4 /24 (`203.0.113.0/24`) or an IPv6 /48 (`2001:db8:1::/48`) — what one customer of an
/// ISP or one cloud machine is typically given, so one attacker is one network however many
/// addresses of it they use. An IPv4-mapped IPv6 address counts as its IPv4 address.
/// `nil` for an empty or unparsable address (in-memory requests).
enum ClientNetwork {
    static func of(_ address: String) -> String? {
        if let v4 = ipv4(address) { return "\(v4[0]).\(v4[1]).\(v4[2]).0/24" }
        guard let v6 = ipv6(address) else { return nil }
        if v6[0..<5].allSatisfy({ $0 == 0 }), v6[5] == 0xFFFF {
            return "\(v6[6] >> 8).\(v6[6] & 0xFF).\(v6[7] >> 8).0/24"
        }
        return v6[0..<3].map { String($0, radix: 16) }.joined(separator: ":") + "::/48"
    }

    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func ipv4(_ text: String) -> [UInt8]? { ipv4(Substring(text)) }

    /// The eight 16-bit groups of an IPv6 address (a zone `%…` ignored, `::` expanded, a
    /// trailing dotted IPv4 part accepted).
    private static func ipv6(_ address: String) -> [UInt16]? {
        var text = Substring(address)
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        guard text.contains(":"), text.count <= 64 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let v4 = ipv4(piece) {
                    result += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                } else {
                    guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                    result.append(value)
                }
            }
            return result
        }
        let halves = text.components(separatedBy: "::")
        switch halves.count {
        case 1:
            guard let all = groups(text), all.count == 8 else { return nil }
            return all
        case 2:
            guard let head = groups(Substring(halves[0])), let tail = groups(Substring(halves[1])), head.count + tail.count <= 7 else { return nil }
            return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        default:
            return nil
        }
    }
}
