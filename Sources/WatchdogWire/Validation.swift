/// A report that passed validation, with the values the server derives from it.
public struct ValidatedReport: Sendable {
    public var report: Report
    /// `occurred_at` in milliseconds since the epoch.
    public var occurredAtMilliseconds: Int64
}

/// A session start that passed validation.
public struct ValidatedSessionStart: Sendable {
    public var session: SessionStart
    public var startedAtMilliseconds: Int64
}

/// Checks one report or session against the rules of docs/api.md ("Ingest"). Every failure names the field
/// and what would be valid, e.g. `view.expected.width must be a finite number ≥ 0 and ≤ 1e9, got -5.0`.
public struct ReportValidator: Sendable {
    /// The server's clock, in milliseconds since the epoch.
    public var nowMilliseconds: Int64

    public init(nowMilliseconds: Int64) {
        self.nowMilliseconds = nowMilliseconds
    }

    public func validate(_ input: Report) throws(ErrorDetail) -> ValidatedReport {
        let checked = try check(input)
        var report = input
        report.id = checked.id
        return ValidatedReport(report: report, occurredAtMilliseconds: checked.occurredAtMilliseconds)
    }

    /// `validate`'s checks without a copy of the report (ingest's path): the id as it is stored
    /// (a UUID in lower case) and `occurred_at` in milliseconds since the epoch.
    public func check(_ report: borrowing Report) throws(ErrorDetail) -> (id: String, occurredAtMilliseconds: Int64) {
        let id = try uuid(report.id, field: "id")
        guard Vocabulary.isValidKind(report.kind) else {
            throw invalid("kind", "must be one of \(Vocabulary.sortedList(Vocabulary.builtInKinds)) or x-<name> (a-z, 0-9, _ . -), got \(quoted(report.kind))")
        }
        let occurredAt = try timestamp(report.occurredAt, field: "occurred_at")
        try checkApp(report.app)
        try checkRelease(report.release)
        if let device = report.device { try checkDevice(device) }
        try optionalText(report.sessionId, field: "session_id", limit: Limits.idLength)
        try optionalText(report.installId, field: "install_id", limit: Limits.idLength)
        guard Vocabulary.isAppState(report.appState) else {
            throw invalid("app_state", "must be one of \(Vocabulary.sortedList(Vocabulary.appStates)), got \(quoted(report.appState))")
        }
        try optionalText(report.screen, field: "screen", limit: Limits.screenLength)
        if let window = report.window { try frame(window, field: "window") }
        if let view = report.view {
            try optionalText(view.name, field: "view.name", limit: Limits.viewNameLength)
            try frame(view.expected, field: "view.expected")
            try frame(view.actual, field: "view.actual")
            if let tolerance = view.tolerance { try nonNegative(tolerance, field: "view.tolerance") }
        } else if report.kind == "view_frame_mismatch" {
            throw ErrorDetail(code: "missing_field", message: "view is required for kind view_frame_mismatch: {\"name\", \"expected\", \"actual\"}")
        }
        if let keyboard = report.keyboard { try checkKeyboard(keyboard) }
        if let lock = report.lock {
            try nonNegative(lock.durationS, field: "lock.duration_s")
            if let flags = lock.flags {
                guard flags.count <= Limits.lockFlags else {
                    throw invalid("lock.flags", "must have at most \(Limits.lockFlags) entries, got \(flags.count)")
                }
                for key in flags.keys { try text(key, field: "lock.flags key", limit: Limits.shortTextLength) }
            }
        } else if report.kind == "interaction_lock" {
            throw ErrorDetail(code: "missing_field", message: "lock is required for kind interaction_lock: {\"duration_s\", \"flags\"}")
        }
        if let logs = report.logs {
            guard logs.count <= Limits.logLines else {
                throw invalid("logs", "must have at most \(Limits.logLines) lines, got \(logs.count)")
            }
            for (index, line) in logs.enumerated() where line.utf8.count > Limits.logLineBytes {
                throw invalid("logs[\(index)]", "must be at most \(Limits.logLineBytes) bytes of UTF-8, got \(line.utf8.count)")
            }
        }
        if let attributes = report.attributes {
            guard attributes.count <= Limits.attributes else {
                throw invalid("attributes", "must have at most \(Limits.attributes) pairs, got \(attributes.count)")
            }
            for (key, value) in attributes {
                try text(key, field: "attributes key", limit: Limits.attributeKeyLength)
                let characters = ByteScan.scalars(value).count
                guard characters <= Limits.attributeValueLength else {
                    throw invalid("attributes.\(key)", "must be at most \(Limits.attributeValueLength) characters, got \(characters)")
                }
            }
        }
        return (id, occurredAt)
    }

    public func validate(_ input: SessionStart) throws(ErrorDetail) -> ValidatedSessionStart {
        var session = input
        session.id = try uuid(session.id, field: "id")
        try optionalText(session.installId, field: "install_id", limit: Limits.idLength)
        let startedAt = try timestamp(session.startedAt, field: "started_at")
        try checkApp(session.app)
        try checkRelease(session.release)
        if let device = session.device { try checkDevice(device) }
        return ValidatedSessionStart(session: session, startedAtMilliseconds: startedAt)
    }

    // MARK: - Field rules

    private func checkApp(_ app: String) throws(ErrorDetail) {
        try text(app, field: "app", limit: Limits.appLength)
    }

    private func checkRelease(_ release: Release) throws(ErrorDetail) {
        try text(release.version, field: "release.version", limit: Limits.versionLength)
        try text(release.build, field: "release.build", limit: Limits.versionLength)
        try optionalText(release.channel, field: "release.channel", limit: Limits.channelLength)
    }

    private func checkDevice(_ device: Device) throws(ErrorDetail) {
        try optionalText(device.model, field: "device.model", limit: Limits.deviceFieldLength)
        try optionalText(device.os, field: "device.os", limit: Limits.deviceFieldLength)
        try optionalText(device.osVersion, field: "device.os_version", limit: Limits.deviceFieldLength)
        try optionalText(device.locale, field: "device.locale", limit: Limits.deviceFieldLength)
        if let idiom = device.idiom, !Vocabulary.isIdiom(idiom) {
            throw invalid("device.idiom", "must be one of \(Vocabulary.sortedList(Vocabulary.idioms)), got \(quoted(idiom))")
        }
    }

    private func checkKeyboard(_ keyboard: KeyboardState) throws(ErrorDetail) {
        if let frame = keyboard.frame { try self.frame(frame, field: "keyboard.frame") }
        if let mode = keyboard.mode, !Vocabulary.isKeyboardMode(mode) {
            throw invalid("keyboard.mode", "must be one of \(Vocabulary.sortedList(Vocabulary.keyboardModes)), got \(quoted(mode))")
        }
        if let height = keyboard.height { try nonNegative(height, field: "keyboard.height") }
        if let duration = keyboard.animationDuration { try nonNegative(duration, field: "keyboard.animation_duration") }
        try optionalText(keyboard.inputMode, field: "keyboard.input_mode", limit: Limits.shortTextLength)
        try optionalText(keyboard.notification, field: "keyboard.notification", limit: Limits.shortTextLength)
    }

    // Field names are built only for the message of a failure (`@autoclosure`): a report has
    // four frames, and their 16 names cost more than checking the numbers.
    private func frame(_ frame: Frame, field: @autoclosure () -> String) throws(ErrorDetail) {
        try finite(frame.x, field: "\(field()).x")
        try finite(frame.y, field: "\(field()).y")
        try nonNegative(frame.width, field: "\(field()).width")
        try nonNegative(frame.height, field: "\(field()).height")
    }

    private func finite(_ value: Double, field: @autoclosure () -> String) throws(ErrorDetail) {
        guard value.isFinite, abs(value) <= 1e9 else {
            throw invalid(field(), "must be a finite number within ±1e9, got \(value)")
        }
    }

    private func nonNegative(_ value: Double, field: @autoclosure () -> String) throws(ErrorDetail) {
        guard value.isFinite, value >= 0, value <= 1e9 else {
            throw invalid(field(), "must be a finite number ≥ 0 and ≤ 1e9, got \(value)")
        }
    }

    private func timestamp(_ value: String, field: String) throws(ErrorDetail) -> Int64 {
        guard let milliseconds = Timestamp.parseMilliseconds(value) else {
            throw invalid(field, "must be an RFC 3339 time such as 2026-11-20T10:00:01.001Z, got \(quoted(value))")
        }
        guard milliseconds <= nowMilliseconds + Limits.futureSkewMilliseconds else {
            throw invalid(field, "must not be more than 24 h after the server's time (\(Timestamp.format(milliseconds: nowMilliseconds))), got \(quoted(value))")
        }
        guard milliseconds >= Limits.earliestMilliseconds else {
            throw invalid(field, "must be after 2007-01-09T00:00:00Z, got \(quoted(value))")
        }
        return milliseconds
    }

    private func uuid(_ value: String, field: String) throws(ErrorDetail) -> String {
        guard UUIDText.isValid(value) else {
            throw invalid(field, "must be a UUID such as 83223034-6633-586d-bdb9-a5c502f73ae9, got \(quoted(value))")
        }
        return value.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }) ? value.lowercased() : value
    }

    private func text(_ value: String, field: String, limit: Int) throws(ErrorDetail) {
        guard !value.isEmpty else { throw invalid(field, "must not be empty") }
        // Characters are Unicode code points, as openapi.yaml's maxLength (JSON Schema) counts them.
        let scan = ByteScan.scalars(value)
        guard scan.count <= limit else {
            throw invalid(field, "must be at most \(limit) characters, got \(scan.count)")
        }
        guard !scan.control else {
            throw invalid(field, "must not contain control characters")
        }
    }

    private func optionalText(_ value: String?, field: String, limit: Int) throws(ErrorDetail) {
        if let value { try text(value, field: field, limit: limit) }
    }

    private func invalid(_ field: String, _ rule: String) -> ErrorDetail {
        ErrorDetail(code: "invalid_field", message: "\(field) \(rule)")
    }

    private func quoted(_ value: String) -> String {
        let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
        return "\"\(shown)\""
    }
}

extension ReportValidator {
    /// Checks `client_dropped` by the rules of reports: its id a UUID, its release strings as
    /// `release.*` of a report. Messages name the field under `client_dropped.`.
    static func checkClientDropped(_ dropped: ClientDropped) throws(ErrorDetail) {
        let validator = ReportValidator(nowMilliseconds: 0)
        do throws(ErrorDetail) {
            if let id = dropped.id { _ = try validator.uuid(id, field: "id") }
            try validator.checkRelease(dropped.release)
        } catch {
            throw ErrorDetail(code: error.code, message: "\(ClientDropped.key).\(error.message)")
        }
    }
}

extension ReportValidator {
    /// Checks a release's version and build by the rules of a report's `release.version` and
    /// `release.build` (an admin declaring a release from CI): messages name `version`/`build`.
    public static func checkRelease(version: String, build: String) throws(ErrorDetail) {
        let validator = ReportValidator(nowMilliseconds: 0)
        try validator.text(version, field: "version", limit: Limits.versionLength)
        try validator.text(build, field: "build", limit: Limits.versionLength)
    }
}

/// The textual form of a UUID: 8-4-4-4-12 hexadecimal digits.
public enum UUIDText {
    public static func isValid(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isValid) ?? Array(text.utf8).withUnsafeBufferPointer(isValid)
    }

    private static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                if byte != 45 { return false }
            } else if !((byte >= 48 && byte <= 57) || (byte >= 97 && byte <= 102) || (byte >= 65 && byte <= 70)) {
                return false
            }
        }
        return true
    }

    /// 16 bytes as lowercase `8-4-4-4-12` text.
    public static func text(bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
