/// A deliberate `test_crash`, after its report is on disk: what the crash says, so the crash in
/// the crash reporter (Crashlytics, Sentry, …) can be matched with the report in Watchdog.
public struct TestCrash: Sendable, Equatable {
    /// The id of the report saved just before the crash (`Report.id`).
    public var reportID: String
    /// The report's kind, e.g. `view_frame_mismatch`.
    public var kind: String

    /// The crash for the report `reportID`, of kind `kind`.
    public init(reportID: String, kind: String) {
        self.reportID = reportID
        self.kind = kind
    }

    /// The crash message (`fatalError`'s): names the report id and kind.
    public var message: String {
        "Watchdog test_crash: report \(reportID) (\(kind)); the report with this id in Watchdog has the logs"
    }
}
