import Foundation
import Testing
@testable import WatchdogServer
@testable import WatchdogStore
import WatchdogTesting

/// `JSONWriter` writes the large stats views byte for byte as `JSONEncoder` (sorted keys,
/// unescaped slashes) did, hostile client strings included.
@Suite struct JSONWriterTests {
    /// Strings a client can send (quotes, backslashes, slashes, U+2028, emoji, combining marks)
    /// and ones it cannot (control characters), each alone and all together.
    static let hostileStrings: [String] = {
        let controls = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        let others = ["", "plain", "\"", "\\", "/", "</script>", "a\"b\\c/d", "\\u0041", "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}",
                      "é", "e\u{301}", "😀", "👩‍👩‍👧", "ｚ", "\u{10FFFF}", "Compose\"Toolbar\\\n(docked)", String(repeating: "x\"", count: 500)]
        return controls + others + [controls.joined() + others.joined()]
    }()

    @Test func hostileStringsAreEscapedAsJSONEncoderEscapesThem() throws {
        for string in Self.hostileStrings {
            try Self.expectSameJSON(written: [string], encoded: [string])
            try Self.expectSameJSON(written: ["k": string], encoded: ["k": string])
        }
        try Self.expectSameJSON(written: Self.hostileStrings, encoded: Self.hostileStrings)
    }

    @Test func dictionaryKeysFromDataAreEscapedAndSortedByTheirUTF8Bytes() throws {
        var counts: [String: Int] = [:]
        for (index, key) in (Self.hostileStrings + ["B", "a", "_", "a_b", "ab", "10", "9", "Z", "z"]).enumerated() { counts[key] = index }
        try Self.expectSameJSON(written: counts, encoded: counts)
    }

    @Test func numbersAreWrittenAsJSONEncoderWritesThem() throws {
        var doubles: [Double] = [0, -0.0, 1, -1, 100, 0.1, 0.5, 2.5, 1 / 3, .pi, 1e15, 1e16, 1e20, 1e21, 1e22, 1e-5, 1e-7, 0.000123,
                                 12_345_678.9, 9_007_199_254_740_992, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                 .leastNonzeroMagnitude, .leastNormalMagnitude, 1.0097464221862984, 204.51, 0.09258]
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2000 {
            doubles.append(Double(bitPattern: generator.next()))
            doubles.append(Double(generator.next() % 1_000_000) / Double(generator.next() % 999 + 1))
        }
        doubles = doubles.filter(\.isFinite)
        try Self.expectSameJSON(written: doubles, encoded: doubles)
        let integers = [0, 1, -1, 9, 10, 99, 100, 1_000_000, Int.max, Int.min, Int.min + 1] + (0..<200).map { _ in Int(bitPattern: UInt(generator.next())) }
        try Self.expectSameJSON(written: integers, encoded: integers)
        try Self.expectSameJSON(written: [true, false], encoded: [true, false])
        let optionals: [Double?] = [nil, 1, nil, 0.25]
        try Self.expectSameJSON(written: optionals, encoded: optionals)
    }

    @Test func aNonFiniteNumberIsAnInternalErrorAsWithJSONEncoder() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(JSONBody.response(writing: [value]).status == 500)
            #expect(JSONBody.response([value]).status == 500, "JSONEncoder refuses it too")
        }
        #expect(JSONBody.response(writing: [1.5]).status == 200)
    }

    @Test func issuesViewIsWrittenAsJSONEncoderWritesIt() throws {
        let current = ReleaseStats.sample(version: "13.4.9", build: "30849", sessions: 200_000)
        let previous = ReleaseStats.sample(version: "13.4.8", build: "30816", sessions: 100_000)
        var issues: [IssueView] = []
        for (index, hostile) in Self.hostileStrings.enumerated() {
            let row = IssueRow(fingerprint: "fp_\(index)", release: current.release, kind: index % 2 == 0 ? "view_frame_mismatch" : "x-\(hostile)",
                               screen: index % 3 == 0 ? nil : hostile, viewName: index % 5 == 0 ? nil : "view \(hostile)",
                               keyboardMode: index % 7 == 0 ? nil : "docked", reports: index * 37, suspectReports: index, affectedSessions: index * 11,
                               firstSeen: 1_763_621_807_509 + Int64(index), lastSeen: 1_763_881_751_101, floodedReports: index % 4)
            let before = IssueRow(fingerprint: row.fingerprint, release: previous.release, kind: row.kind, reports: index * 5, suspectReports: 0,
                                  affectedSessions: index * 3, firstSeen: 0, lastSeen: 0)
            var trend: SessionComparison? = SessionComparison(
                base: .init(sessions: previous.sessions, affectedSessions: before.affectedSessions, reports: before.reports, floodedReports: 0, designEffect: 1.0097464221862984),
                target: .init(sessions: current.sessions, affectedSessions: row.affectedSessions, reports: row.reports, floodedReports: row.floodedReports, designEffect: 1.3))
            if index % 6 == 1 { trend = trend?.withheld(SessionComparison.partialHistoryReason) }
            if index % 9 == 2 { trend = nil }
            issues.append(IssueView(row: row, sessions: index % 8 == 3 ? 0 : current.sessions, firstRelease: index % 2 == 0 ? previous.release : current.release,
                                    isNew: index % 2 == 1, regressed: index % 4 == 0, previous: index % 9 == 2 ? nil : PreviousRelease(release: previous, row: index % 3 == 0 ? nil : before),
                                    trend: trend))
        }
        // A side without sessions: no ratio, interval or verdict, and a reason.
        let empty = IssueRow(fingerprint: "fp_empty", release: current.release, kind: "keyboard_without_input", reports: 0, suspectReports: 4, affectedSessions: 0, firstSeen: 0, lastSeen: 0)
        issues.append(IssueView(row: empty, sessions: 0, firstRelease: current.release, isNew: true, regressed: false,
                                previous: PreviousRelease(release: ReleaseStats.sample(version: "1", build: "1", sessions: 0), row: nil),
                                trend: SessionComparison(base: .init(sessions: 0, affectedSessions: 0, reports: 0, floodedReports: 0), target: .init(sessions: 0, affectedSessions: 0, reports: 0, floodedReports: 0))))
        let view = IssuesView(app: "com.example.\"mail\"/😀", release: current.release.text, id: current.release.id, sessions: current.sessions, issues: issues)
        try Self.expectSameJSON(written: view, encoded: view)
        try Self.expectSameJSON(written: IssuesView(app: "a", release: "1 (1)", id: "r", sessions: 0, issues: []), encoded: IssuesView(app: "a", release: "1 (1)", id: "r", sessions: 0, issues: []))
    }

    @Test func releasesViewIsWrittenAsJSONEncoderWritesIt() throws {
        var releases: [ReleaseStatsView] = []
        for (index, hostile) in Self.hostileStrings.enumerated() {
            var stats = ReleaseStats.sample(version: "13.\(index).\(hostile)", build: "\(30_000 + index)", sessions: index % 4 == 0 ? 0 : index * 1_013)
            stats.reportsByKind = ["view_frame_mismatch": index * 7, "x-\(hostile)": index + 1, "x-\(hostile)2": 3]
            stats.suspectReportsByKind = index % 2 == 0 ? [:] : ["x-\(hostile)": index]
            stats.floodedReportsByKind = index % 3 == 0 ? [:] : ["keyboard_without_input": index * 2]
            stats.affectedSessions = index * 300
            stats.concentration = InstallConcentration(installs: index * 10, topInstalls: index, reports: index % 5 == 0 ? 0 : index * 40, topInstallsReports: index * 3)
            stats.autoFixed = index
            stats.testCrashes = index % 2
            stats.clientEvicted = index * 2
            stats.clientQuarantined = index % 3
            releases.append(ReleaseStatsView(stats))
        }
        var unlisted = UnlistedReleases()
        unlisted.total = 100_000
        unlisted.sessions = 250_000
        unlisted.implausibleSessions = 7
        unlisted.reports = 3
        let view = ReleasesView(app: "com.example.mail", releases: releases, total: releases.count + 5, offset: 5, limit: 100, unlisted: UnlistedSummaryView(unlisted))
        try Self.expectSameJSON(written: view, encoded: view)
    }

    @Test func timeseriesViewIsWrittenAsJSONEncoderWritesIt() throws {
        var series: [String: [Int]] = [:], rates: [String: [Double?]] = [:]
        for (index, hostile) in Self.hostileStrings.enumerated() {
            series["x-\(hostile)"] = (0..<24).map { ($0 * index) % 17 }
            rates["x-\(hostile)"] = (0..<24).map { $0 % 5 == 0 ? nil : Double(($0 * index) % 17) * 1000 / Double($0 * 13 + 1) }
        }
        // The view is only written, never compared with a clock: its buckets are any 24 labels.
        for release in [nil, "13.4.9 (30849)"] {
            let view = TimeseriesView(app: "com.example.mail", release: release, bucket: "hour", buckets: (0..<24).map { "2026-11-23T\($0 < 10 ? "0" : "")\($0):00:00Z" },
                                      series: series, suspectSeries: ["view_frame_mismatch": Array(repeating: 1, count: 24)], floodedSeries: [:],
                                      sessions: (0..<24).map { $0 * 13 + 1 }, rates: rates, affectedSessions: (0..<24).map { $0 * 3 },
                                      shares: rates.mapValues { $0.map { $0.map { $0 / 1000 } } }, partialBuckets: [23], truncated: release == nil)
            try Self.expectSameJSON(written: view, encoded: view)
        }
    }

    /// Through the routes: hostile names a client may send come back intact from the three
    /// endpoints the writer serves.
    @Test func hostileNamesFromReportsComeBackIntactFromIssuesReleasesAndTimeseries() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let hostile = "Compose\"Toolbar\\/\u{2028}😀 <é>"
        let session = Fixtures.session()
        #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": [session]]).status == 202)
        var report = try Fixtures.freshReport(kind: "x-custom.glitch", sessionID: session["id"] as? String)
        report["screen"] = hostile
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [report]]).status == 202)

        let issues = try app.client.request("GET", "/v1/apps/com.example.mail/issues", token: viewer)
        #expect(issues.status == 200, "\(issues.text)")
        let issue = try #require((issues.json["issues"] as? [[String: Any]])?.first)
        #expect(issue["screen"] as? String == hostile)
        #expect(issue["kind"] as? String == "x-custom.glitch")
        #expect(issue["new"] as? Bool == true)
        #expect(issue["affected_session_rate"] as? Double == 1)

        let releases = try app.client.request("GET", "/v1/apps/com.example.mail/releases", token: viewer)
        let release = try #require((releases.json["releases"] as? [[String: Any]])?.first)
        #expect((release["reports_by_kind"] as? [String: Int])?["x-custom.glitch"] == 1)

        let series = try app.client.request("GET", "/v1/apps/com.example.mail/timeseries?bucket=hour", token: viewer)
        #expect(series.status == 200, "\(series.text)")
        #expect((series.json["series"] as? [String: [Int]])?["x-custom.glitch"]?.reduce(0, +) == 1)
    }

    /// The writer's bytes equal `JSONBody.encode`'s, and both parse to the same value.
    static func expectSameJSON(written: some JSONWritable, encoded: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var json = JSONWriter()
        written.write(to: &json)
        let reference = try JSONBody.encode(encoded)
        #expect(String(decoding: json.bytes, as: UTF8.self) == String(decoding: reference, as: UTF8.self), sourceLocation: sourceLocation)
        // Strings compare by canonical equivalence ("é" as one scalar or two): the bytes must match too.
        let common = min(json.bytes.count, reference.count)
        let firstDifference = (0..<common).first { json.bytes[$0] != reference[$0] } ?? (json.bytes.count == reference.count ? nil : common)
        #expect(firstDifference == nil, "the bytes differ from byte \(firstDifference ?? 0) on", sourceLocation: sourceLocation)
        let parsedWritten = try JSONSerialization.jsonObject(with: Data(json.bytes), options: [.fragmentsAllowed]) as? NSObject
        let parsedReference = try JSONSerialization.jsonObject(with: Data(reference), options: [.fragmentsAllowed]) as? NSObject
        #expect(parsedWritten != nil && parsedWritten == parsedReference, sourceLocation: sourceLocation)
    }
}

/// A seeded generator (SplitMix64), so a failing number can be found again.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension ReleaseStats {
    static func sample(version: String, build: String, sessions: Int) -> ReleaseStats {
        ReleaseStats(release: ReleaseID(version: version, build: build), sessions: sessions, reportsByKind: [:], suspectReportsByKind: [:],
                     affectedSessions: sessions / 10, autoFixed: 0, testCrashes: 0, firstSeen: 1_763_621_807_509, lastSeen: 1_763_881_751_101)
    }
}
