import Foundation
import WatchdogHTTP

/// Files the daemon serves: `openapi.yaml` and the dashboard from the resources directory, and
/// Chart.js from Debian's `libjs-chart.js` (no CDN: the dashboard works offline).
struct StaticResources: Sendable {
    let directory: String?
    let chartDirectory: String

    init(directory: String?, chartDirectory: String = "/usr/share/javascript/chart.js") {
        self.directory = directory
        self.chartDirectory = chartDirectory
    }

    func openAPI() throws(APIError) -> HTTPResponse {
        try file(in: directory, path: "openapi.yaml", cache: "no-cache")
    }

    /// `GET /` and the dashboard's files.
    func dashboard(_ path: String) throws(APIError) -> HTTPResponse {
        try file(in: directory.map { ($0 as NSString).appendingPathComponent("dashboard") }, path: path, cache: "no-cache")
    }

    func chart(_ path: String) throws(APIError) -> HTTPResponse {
        try file(in: chartDirectory, path: path, cache: "public, max-age=86400")
    }

    private static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "svg": "image/svg+xml", "png": "image/png", "json": "application/json",
        "map": "application/json", "yaml": "application/yaml; charset=utf-8", "ico": "image/x-icon",
    ]

    private func file(in directory: String?, path: String, cache: String) throws(APIError) -> HTTPResponse {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // Plain names only: no "..", no hidden files, no odd characters.
        guard let directory, !segments.isEmpty, segments.allSatisfy({ segment in
            !segment.isEmpty && !segment.hasPrefix(".") && segment.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 46 || $0 == 45 || $0 == 95 }
        }), let ext = segments.last?.split(separator: ".").last.map(String.init), let type = Self.types[ext] else {
            throw .notFound("no file \(path.prefix(100))")
        }
        let full = (directory as NSString).appendingPathComponent(path)
        guard let data = FileManager.default.contents(atPath: full) else {
            throw .notFound("no file \(path.prefix(100))")
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type), ("Cache-Control", cache)] + SecurityHeaders.page, body: Array(data))
    }
}
