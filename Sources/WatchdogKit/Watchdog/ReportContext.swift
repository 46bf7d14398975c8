import Foundation
import WatchdogWire

/// Who is reporting: the app, its release and device, the install and the current session.
public struct ReportContext: Sendable, Equatable {
    /// The app's bundle id.
    public var app: String
    /// The app's release.
    public var release: Release
    /// The device.
    public var device: Device
    /// Anonymous, stable per install.
    public var installID: String
    /// Changes with each session start.
    public var sessionID: String

    /// A context for a new session unless `sessionID` says which.
    public init(app: String, release: Release, device: Device, installID: String, sessionID: String = TimeOrderedID.make()) {
        self.app = app
        self.release = release
        self.device = device
        self.installID = installID
        self.sessionID = sessionID
    }
}

/// The app's lifecycle state, as `UIApplication.State`.
public enum AppState: String, Sendable, Equatable {
    /// In front and receiving events: the only state the watchdogs judge in.
    case active
    /// In front but not receiving events (a system alert, the app switcher, a transition).
    case inactive
    /// Not on screen.
    case background
}

/// Where reports go before upload: `persist` returns once the report is on disk; `enqueue`
/// may write it later, off the caller's thread (the agent's sink does: `fsync` stays off the
/// main thread).
public protocol ReportSink: AnyObject {
    /// Writes `report` durably, or throws (nothing was written): for a report a deliberate crash
    /// follows.
    func persist(_ report: Report) throws
    /// A report `persist` could not write (the device locked before its first unlock, a full
    /// disk): the sink may keep it and write it later. By default it is dropped.
    func keepForRetry(_ report: Report)
    /// Hands `report` over to be written, now or later; a failure is the sink's to handle. By
    /// default: `persist` now, `keepForRetry` if that fails.
    func enqueue(_ report: Report)
}

extension ReportSink {
    /// Drops the report (a sink that keeps nothing for later).
    public func keepForRetry(_ report: Report) {}

    /// `persist` now, `keepForRetry` if that fails.
    public func enqueue(_ report: Report) {
        do {
            try persist(report)
        } catch {
            keepForRetry(report)
        }
    }
}

/// Wall-clock time as RFC 3339, for `occurred_at`.
func rfc3339(_ date: Date) -> String {
    Timestamp.format(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
}
