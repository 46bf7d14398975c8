import Foundation
import Prometheus
import Locking
import WatchdogHTTP

/// What `GET /metrics` shows, in the Prometheus text format (swift-prometheus).
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let requests = Locked<[RequestKey: Counter]>([:])
    private let latencies = Locked<[String: DurationHistogram]>([:])
    private let items = Locked<[String: Counter]>([:])
    private let rejections = Locked<[String: Counter]>([:])
    let commitItems: ValueHistogram
    let queueDepth: Gauge
    let databaseBytes: Gauge
    let rateLimitedByKey: Counter
    let rateLimitedByAddress: Counter
    let rateLimitedFailedAuth: Counter
    /// Connections closed because a granted body was not in by its deadline (`--body-deadline`).
    let bodyDeadlineMissed: Counter
    /// Connections the header deadline closed, by why (`ConnectionShedReason`).
    let connectionsShed: [ConnectionShedReason: Counter]
    /// The database's reachability, outages and the 503s they caused.
    let outage: StoreOutage
    static let latencyBuckets: [Duration] = [.microseconds(250), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
                                             .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5)]

    init() {
        commitItems = registry.makeValueHistogram(descriptor: Self.name("watchdog_ingest_commit_items", "", "Items stored per group commit"),
                                                  buckets: [1, 10, 100, 500, 1000, 2500, 5000])
        queueDepth = registry.makeGauge(descriptor: Self.name("watchdog_ingest_queue_depth", "", "Items waiting for the ingest writer"))
        databaseBytes = registry.makeGauge(descriptor: Self.name("watchdog_database", "bytes", "Size of the SQLite database and its WAL"))
        let limited = Self.name("watchdog_rate_limited", "total", "Requests refused with 429, by limit")
        rateLimitedByKey = registry.makeCounter(descriptor: limited, labels: [("limit", "ingest_key")])
        rateLimitedByAddress = registry.makeCounter(descriptor: limited, labels: [("limit", "address")])
        rateLimitedFailedAuth = registry.makeCounter(descriptor: limited, labels: [("limit", "failed_auth")])
        bodyDeadlineMissed = registry.makeCounter(descriptor: Self.name("watchdog_body_deadline_missed", "total",
                                                                        "Connections closed because a body was not in by its deadline"))
        let shed = Self.name("watchdog_connections_shed", "total", "Connections closed while waiting for request headers, by why")
        var shedCounters: [ConnectionShedReason: Counter] = [:]
        for reason in ConnectionShedReason.allCases {
            shedCounters[reason] = registry.makeCounter(descriptor: shed, labels: [("reason", reason.rawValue)])
        }
        connectionsShed = shedCounters
        outage = StoreOutage(registry: registry)
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: metric, unitName: unit, helpText: help)
    }

    /// One HTTP request: by route template (not raw path, which would explode the series) and status.
    /// The labels of one request counter (a struct: no string is built per request).
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    func request(route: String, method: String, status: Int, seconds: Double) {
        recorder(route: route, method: method, status: status).record(nanoseconds: Int64(seconds * 1e9))
    }

    /// The request counter and latency histogram of one route, method and status, looked up
    /// once: a hot path keeps it and records without building labels or taking the caches' locks.
    struct RequestRecorder: Sendable {
        let counter: Counter
        let latency: DurationHistogram

        func record(nanoseconds: Int64) {
            counter.increment()
            latency.recordNanoseconds(nanoseconds)
        }
    }

    func recorder(route: String, method: String, status: Int) -> RequestRecorder {
        let key = RequestKey(method: method, route: route, status: status)
        let counter = requests.withLock { cache in
            if let known = cache[key] { return known }
            let made = registry.makeCounter(descriptor: Self.name("watchdog_http_requests", "total", "HTTP requests by route and status"),
                                            labels: [("route", route), ("method", method), ("status", String(status))])
            cache[key] = made
            return made
        }
        let histogram = latencies.withLock { cache in
            if let known = cache[route] { return known }
            let made = registry.makeDurationHistogram(descriptor: Self.name("watchdog_http_request_duration", "seconds", "Time from the whole request to its answer"),
                                                      labels: [("route", route)], buckets: Self.latencyBuckets)
            cache[route] = made
            return made
        }
        return RequestRecorder(counter: counter, latency: histogram)
    }

    /// Items of a batch: accepted, duplicate, rejected (and why).
    func ingested(kind: String, accepted: Int, duplicates: Int, rejectedCodes: [String]) {
        func counter(_ outcome: String) -> Counter {
            items.withLock { cache in
                let key = "\(kind) \(outcome)"
                if let known = cache[key] { return known }
                let made = registry.makeCounter(descriptor: Self.name("watchdog_ingest_items", "total", "Reports and session starts by outcome"),
                                                labels: [("kind", kind), ("outcome", outcome)])
                cache[key] = made
                return made
            }
        }
        if accepted > 0 { counter("accepted").increment(by: Int64(accepted)) }
        if duplicates > 0 { counter("duplicate").increment(by: Int64(duplicates)) }
        if !rejectedCodes.isEmpty { counter("rejected").increment(by: Int64(rejectedCodes.count)) }
        for code in rejectedCodes {
            rejections.withLock { cache in
                if let known = cache[code] { return known }
                let made = registry.makeCounter(descriptor: Self.name("watchdog_ingest_rejected", "total", "Rejected items by reason"), labels: [("reason", code)])
                cache[code] = made
                return made
            }.increment()
        }
    }
}
