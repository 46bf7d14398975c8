import Crypto

/// The `Watchdog-Signature` header of a webhook delivery: HMAC-SHA256 (RFC 2104, FIPS 198-1;
/// swift-crypto's `HMAC<SHA256>`) keyed with the hook's secret (its UTF-8 bytes, `whsec_…`
/// whole) over the `Watchdog-Timestamp` value, a `.`, and the body's exact bytes:
///
///     Watchdog-Signature: sha256=<64 hex digits of HMAC(secret, "1764000000." + body)>
///
/// A receiver recomputes it, compares in constant time, and refuses timestamps more than a
/// few minutes old (a replayed delivery). `Watchdog-Delivery` is the idempotency key.
public enum WebhookSignature {
    /// `sha256=<hex>` for one attempt's timestamp (seconds since the epoch) and body.
    public static func header(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        let message = Array("\(timestamp).".utf8) + body
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + Array(code).hexString
    }

    /// Whether `header` is the signature of `body` at `timestamp` (constant time).
    public static func isValid(_ header: String, secret: String, timestamp: Int64, body: [UInt8]) -> Bool {
        constantTimeEquals(Array(header.utf8), Array(self.header(secret: secret, timestamp: timestamp, body: body).utf8))
    }
}
