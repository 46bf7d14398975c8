import Foundation
import WatchdogHTTP

/// Files served from the resources directory (`Resources/` of the repository, or where a
/// package installs it), read once at start.
struct StaticResources: Sendable {
    private let openAPIDocument: [UInt8]?
    private let directory: String?

    init(directory: String?) {
        self.directory = directory
        openAPIDocument = directory.flatMap { FileManager.default.contents(atPath: ($0 as NSString).appendingPathComponent("openapi.yaml")) }.map(Array.init)
    }

    func openAPI() throws(APIError) -> HTTPResponse {
        guard let openAPIDocument else {
            throw .notFound("openapi.yaml was not found in the resources directory (\(directory ?? "none set")); set --resources-dir")
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml; charset=utf-8"), ("X-Content-Type-Options", "nosniff")], body: openAPIDocument)
    }
}
