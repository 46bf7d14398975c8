#if os(iOS)
import Foundation

/// The app's own backend hands out the ingest key in force: after a key is revoked and a new
/// one issued (`watchdogd` admin API), installs that were refused pick the new one up here.
enum IngestKeys {
    static let endpoint = URL(string: "https://api.example.com/watchdog/ingest-key")!
    static let session = URLSession(configuration: .ephemeral)

    static func fetchCurrent() async throws -> String {
        // `URLSession.data(from:)` is iOS 15: at iOS 13, the completion-handler task.
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: endpoint) { data, response, error in
                if let data, (response as? HTTPURLResponse)?.statusCode == 200 {
                    continuation.resume(returning: String(decoding: data, as: UTF8.self))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}
#endif
