import WatchdogStore

/// The design effect of clustering by install for one side of a comparison: how much larger
/// the variance of p = X / N (affected sessions over sessions) is when sessions are grouped by
/// the install that started them than if every session were independent.
///
///     S    = Σ over clusters (xᵢ − p·nᵢ)²  = Σxᵢ² − 2pΣxᵢnᵢ + p²Σnᵢ²
///            (an install: its sessions nᵢ and affected xᵢ; a session without install id: a cluster of one)
///     V    = m / (m − 1) · S / N²           (cluster-robust variance of the ratio estimator, m clusters)
///     deff = max(1, V / (p(1 − p) / N))
///
/// Without clustering deff ≈ 1 (m / (m − 1)); one install with hundreds of affected sessions
/// drives it up, and the Wilson interval is then taken at n / deff sessions. Where the
/// variance cannot be estimated — fewer than two clusters, or p = 0 or 1 — each cluster counts
/// as one observation: deff = N / m (a release run by one device has the certainty of one).
enum InstallClusters {
    /// `sums` covers the installs with a session start; sessions and affected sessions of the
    /// side beyond them are clusters of one.
    static func designEffect(sessions: Int, affected: Int, sums: ClusterSums) -> Double {
        guard sessions > 1 else { return 1 }
        let total = Double(sessions)
        let p = Double(min(affected, sessions)) / total
        let singles = max(0, sessions - sums.sessions)
        let clusters = Double(sums.clusters + singles)
        guard p > 0, p < 1, clusters > 1 else { return max(1, total / max(1, clusters)) }
        var sum = sums.affectedSquared - 2 * p * sums.affectedTimesSessions + p * p * sums.sessionsSquared
        let singlesAffected = min(singles, max(0, min(affected, sessions) - sums.affected))
        sum += Double(singlesAffected) * (1 - p) * (1 - p) + Double(singles - singlesAffected) * p * p
        let robust = clusters / (clusters - 1) * max(0, sum) / (total * total)
        return max(1, robust / (p * (1 - p) / total))
    }

    /// The sums of a list of clusters (sessions, affected sessions).
    static func sums(_ clusters: [(sessions: Int, affected: Int)]) -> ClusterSums {
        var sums = ClusterSums()
        for cluster in clusters where cluster.sessions > 0 {
            let n = Double(cluster.sessions), x = Double(min(cluster.affected, cluster.sessions))
            sums.clusters += 1
            sums.sessions += cluster.sessions
            sums.affected += Int(x)
            sums.sessionsSquared += n * n
            sums.affectedTimesSessions += x * n
            sums.affectedSquared += x * x
        }
        return sums
    }
}
