/// Where an install falls for a share of installs: 0..<10,000, stable per `key` and install id
/// — the server's config rules (`percent`) and WatchdogKit's App Attest onboarding
/// (`attest_percent`) pick installs the same way. FNV-1a-64 of `key \u{1F} installID` with a
/// final avalanche, so neighbouring ids spread evenly.
public enum CohortBucket {
    /// Buckets in all: a percent picks `percent * 100` of them.
    public static let count = 10_000

    /// The bucket, 0..<`count`, of `installID` for `key` (a rule's id, `attest_percent`).
    public static func of(key: String, installID: String) -> Int {
        var fnv = FNV1a64()
        fnv.add(key)
        fnv.add(byte: 0x1F)
        fnv.add(installID)
        var hash = fnv.value
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return Int(hash % UInt64(count))
    }

    /// Whether an install is in the first `percent` (0–100) of installs for `key`.
    public static func includes(key: String, installID: String, percent: Double) -> Bool {
        if percent >= 100 { return true }
        guard percent > 0, !installID.isEmpty else { return false }
        return Double(of(key: key, installID: installID)) < percent * 100
    }
}
