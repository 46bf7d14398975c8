import WatchdogStore

/// The design effect of clustering by install for one side of a comparison: how much larger
/// the variance of p = X / N (affected sessions over sessions) is when sessions are grouped by
/// the install that started them than if every session were independent.
///
///     S    = Σ over clusters (xᵢ − p·nᵢ)²        (an install: its sessions nᵢ and affected xᵢ;
///                                                  a session without install id: a cluster of one)
///     V    = m / (m − 1) · S / N²                 (cluster-robust variance of the ratio estimator, m clusters)
///     deff = max(1, V / (p(1 − p) / N))
///
/// Without clustering deff ≈ 1 (m / (m − 1)); one install with hundreds of affected sessions
/// drives it up, and the Wilson interval is then taken at n / deff sessions.
enum InstallClusters {
    /// `clusters`: (sessions, affected sessions) per install; sessions and affected sessions
    /// beyond their sums are singletons.
    static func designEffect(sessions: Int, affected: Int, clusters: [(sessions: Int, affected: Int)]) -> Double {
        let total = Double(sessions)
        guard sessions > 1 else { return 1 }
        let p = Double(min(affected, sessions)) / total
        guard p > 0, p < 1 else { return 1 }
        var sum = 0.0
        var clustered = 0, clusteredAffected = 0
        for cluster in clusters where cluster.sessions > 0 {
            let x = Double(min(cluster.affected, cluster.sessions)), n = Double(cluster.sessions)
            sum += (x - p * n) * (x - p * n)
            clustered += cluster.sessions
            clusteredAffected += min(cluster.affected, cluster.sessions)
        }
        let singles = max(0, sessions - clustered)
        let singlesAffected = min(singles, max(0, min(affected, sessions) - clusteredAffected))
        sum += Double(singlesAffected) * (1 - p) * (1 - p) + Double(singles - singlesAffected) * p * p
        let clusterCount = Double(clusters.filter { $0.sessions > 0 }.count + singles)
        guard clusterCount > 1 else { return 1 }
        let robust = clusterCount / (clusterCount - 1) * sum / (total * total)
        return max(1, robust / (p * (1 - p) / total))
    }
}
