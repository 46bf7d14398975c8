import Foundation

/// Headless Chromium (Debian's `chromium`), one profile per browser so the session cookie set
/// by a sign-in link is kept between page loads.
final class Browser {
    static let binary = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    let profile = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-browser-\(UUID().uuidString)")

    /// Where screenshots go: `$WATCHDOG_ARTIFACTS` (CI keeps them) or a temp dir.
    static let artifacts: URL = {
        let folder = ProcessInfo.processInfo.environment["WATCHDOG_ARTIFACTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-screenshots")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    deinit { try? FileManager.default.removeItem(at: profile) }

    /// The DOM after the page ran its scripts (and fetched its data) for `budget` ms of virtual time.
    func dom(_ url: String, budget: Int = 8000) throws -> String {
        try run(["--dump-dom", url], budget: budget)
    }

    /// Saves a screenshot, returns its path.
    @discardableResult
    func screenshot(_ url: String, name: String, budget: Int = 8000) throws -> URL {
        let file = Self.artifacts.appendingPathComponent("\(name).png")
        _ = try run(["--window-size=1300,1400", "--screenshot=\(file.path)", url], budget: budget)
        return file
    }

    private func run(_ arguments: [String], budget: Int) throws -> String {
        guard let binary = Self.binary else {
            throw HTTPClientError(description: "chromium is not installed (./deploy/setup.sh installs it)")
        }
        // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start. Virtual time
        // runs faster than the clock, so the budget plus a minute bounds any honest run.
        let result = try ChildProcess.run(URL(fileURLWithPath: binary), [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(profile.path)", "--virtual-time-budget=\(budget)",
        ] + arguments, seconds: Double(budget) / 1000 + 60)
        return result.stdout
    }
}
