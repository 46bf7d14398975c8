import Foundation
import Testing
import WatchdogTesting

/// `Resources/openapi.yaml` and the route table describe the same endpoints.
@Suite struct OpenAPISyncTests {
    /// The route table's `path → methods`, as the application serves it.
    func routedEndpoints() throws -> [(path: String, methods: [String])] {
        try TestApplication().application.endpoints
    }

    /// `path → methods` as written in openapi.yaml (paths at two spaces, methods at four).
    func documentedEndpoints() throws -> [String: Set<String>] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Resources/openapi.yaml")
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var endpoints: [String: Set<String>] = [:]
        var current: String?
        var inPaths = false
        for line in lines {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.hasPrefix(" "), !line.isEmpty { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                current = String(line.dropFirst(2).dropLast())
                endpoints[current!] = []
            } else if let path = current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) { endpoints[path]?.insert(method) }
            }
        }
        return endpoints
    }

    /// Each documented path, made concrete, reaches a route: no method gets 404, and a method
    /// the document does not list gets 405.
    @Test func everyDocumentedEndpointIsRoutedWithTheSameMethods() throws {
        let endpoints = try documentedEndpoints()
        #expect(endpoints.count >= 12)
        let app = try TestApplication()
        for (path, methods) in endpoints {
            let concrete = path.replacingOccurrences(of: "{app}", with: "com.example.mail").replacingOccurrences(of: "{key_id}", with: "k1")
                .replacingOccurrences(of: "{version}", with: "3").replacingOccurrences(of: "{id}", with: "r1").replacingOccurrences(of: "{path}", with: "views/app.js")
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                let response = try app.client.request(method, concrete)
                let routed = response.status != 405 && response.errorMessage?.hasPrefix("no endpoint") != true
                #expect(routed == methods.contains(method), "\(method) \(path): documented \(methods.contains(method)), answers \(response.status)")
            }
        }
    }

    @Test func everyRouteIsDocumentedWithTheSameMethods() throws {
        let documented = try documentedEndpoints()
        // A catch-all `{*path}` is documented as `{path}`.
        let routed = try routedEndpoints().map { ($0.path.replacingOccurrences(of: "{*", with: "{"), $0.methods) }
        #expect(Set(routed.map(\.0)) == Set(documented.keys))
        for (path, methods) in routed {
            #expect(Set(methods) == documented[path], "\(path)")
        }
    }
}
