import Logging
import Prometheus
import WatchdogStore

/// A node that lost its database (issue 45): said once in the log, counted in `/metrics`, and
/// answered at once with `503` and `Retry-After` instead of each request waiting for the
/// network.
///
/// The store keeps the state (`TelemetryStore.reachability`: its pool marks the database
/// unreachable at the first lost connection, and its probe thread marks it reachable at the
/// first write that gets through again); this is what the server does with it.
struct StoreOutage: Sendable {
    /// `watchdog_store_reachable`: 1 while the database answers, 0 while it is lost.
    let reachable: Gauge
    /// `watchdog_store_outages_total`: times the database was lost.
    let outages: Counter
    /// `watchdog_store_unavailable_responses_total`: requests answered 503 `store_unavailable`.
    let refusals: Counter

    init(registry: PrometheusCollectorRegistry) {
        reachable = registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "watchdog_store_reachable", unitName: "", helpText:
            "1 while the database answers (always for SQLite), 0 from a lost connection until a write gets through again"))
        outages = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "watchdog_store_outages", unitName: "total",
                                                                        helpText: "Times the database was found unreachable"))
        refusals = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "watchdog_store_unavailable_responses", unitName: "total",
                                                                         helpText: "Requests answered 503 store_unavailable"))
        reachable.set(to: 1)
    }

    /// Logs each change between reachable and unreachable once, and keeps the metrics.
    func watch(_ store: any TelemetryStore, logger: Logger) {
        store.observeReachability { [reachable, outages] state in
            if state.isReachable {
                reachable.set(to: 1)
                logger.notice("the database answers again after \(Self.seconds(state.unreachableForSeconds)) s; acknowledging uploads again")
            } else {
                reachable.set(to: 0)
                outages.increment()
                logger.error("lost the database (\(state.failure ?? "connection lost")); answering 503 with Retry-After until a write gets through again")
            }
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }
}

extension APIError {
    /// The code of a 503 whose cause the log already said once (`StoreOutage.watch`).
    static let storeUnreachableCode = "store_unreachable"

    /// 503 for a request the database could not be reached for (or, known lost, was not tried).
    static func storeUnreachable(_ detail: String) -> APIError {
        APIError(status: 503, code: storeUnreachableCode,
                 message: "the database cannot be reached (\(detail)); nothing was stored or read, retry here or on another node",
                 headers: [("Retry-After", "2")])
    }

    /// `storeUnreachable` when `error` is a lost or unreachable database, else `nil`.
    static func storeUnreachable(from error: any Error) -> APIError? {
        PostgresStore.isUnreachable(error) ? storeUnreachable("\(error)") : nil
    }
}
