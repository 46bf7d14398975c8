import ArgumentParser
import Foundation

/// `watchdogd gate`: asks a running watchdogd whether a release may ship (`GET
/// /v1/apps/{app}/gate`), prints the answer's markdown summary for the CI job to show, and
/// exits 0 (pass), 1 (fail) or 2 (not yet). Anything else — the server unreachable, a bad
/// token, an unknown base — exits 3 with the reason on stderr, so a job can tell "the release
/// is bad" from "the gate could not ask".
struct Gate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pass, fail or not yet for a release, from the always-valid verdict against its base (exit 0, 1, 2; 3 when it cannot ask).",
        discussion: """
        Prints a markdown summary (verdict, interval, sessions, installs, reasons) on stdout. The token may \
        come from WATCHDOG_TOKEN instead of --token (it then stays out of the process list). docs/release-health.md, "Release gate".
        """
    )

    static let cannotAsk: Int32 = 3

    @Option(help: "The watchdogd base URL, e.g. https://watchdog.example.com.") var url: String
    @Option(help: "A viewer or admin token (default: $WATCHDOG_TOKEN).") var token: String?
    @Option(help: "The app's bundle id.") var app: String
    @Option(help: "The release: VERSION (BUILD), VERSION when it has one build, or its id.") var release: String
    @Option(help: "The base release (default: the previous release with sessions).") var against: String?
    @Option(help: "Sessions each side needs before pass or fail (default 200).") var minimumSessions: Int?
    @Option(help: "Installs each side's sessions must come from (default 20).") var minimumInstalls: Int?
    @Option(help: "Pass only once the interval rules out a regression this large (default 1.5).") var maximumRatio: Double?
    @Option(help: "all, or attested: count only installs with an attested App Attest key (docs/security.md, \"Attested installs\").") var installs: String?
    @Option(help: "Seconds to wait for the answer.") var timeout: Int = 30

    func run() throws {
        guard let token = token ?? ProcessInfo.processInfo.environment["WATCHDOG_TOKEN"], !token.isEmpty else {
            throw ValidationError("give a token: --token or WATCHDOG_TOKEN")
        }
        guard token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else { throw ValidationError("the token must be one word of ASCII") }
        guard var components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""), components.host != nil else {
            throw ValidationError("--url must be an http:// or https:// URL, got \(url)")
        }
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1 to 600 seconds") }
        components.path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path += "/v1/apps/\(app)/gate"
        var query = [URLQueryItem(name: "release", value: release)]
        if let against { query.append(URLQueryItem(name: "against", value: against)) }
        if let minimumSessions { query.append(URLQueryItem(name: "minimum_sessions", value: String(minimumSessions))) }
        if let minimumInstalls { query.append(URLQueryItem(name: "minimum_installs", value: String(minimumInstalls))) }
        if let maximumRatio { query.append(URLQueryItem(name: "maximum_ratio", value: String(maximumRatio))) }
        if let installs {
            guard ["all", "attested"].contains(installs) else { throw ValidationError("--installs must be all or attested, got \(installs)") }
            query.append(URLQueryItem(name: "installs", value: installs))
        }
        components.queryItems = query
        // `+` is a space in a query: a build like 1.0+5 must arrive as it is.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let address = components.url?.absoluteString else { throw ValidationError("cannot make a URL of --url and --app") }

        let answer = ServerRequest.send(address, headers: "Authorization: Bearer \(token)\nAccept: application/json", timeoutMilliseconds: timeout * 1000)
        switch answer {
        case .failure(let reason):
            say("watchdogd gate: \(reason)")
            throw ExitCode(Self.cannotAsk)
        case .success(let (status, body)):
            guard status == 200, let decision = try? JSONDecoder().decode(Decision.self, from: body), (0...2).contains(decision.exitCode) else {
                let detail = (try? JSONDecoder().decode(ErrorAnswer.self, from: body)).map { "\($0.error.code): \($0.error.message)" }
                    ?? String(decoding: body.prefix(300), as: UTF8.self)
                say("watchdogd gate: HTTP \(status) from \(url): \(detail)")
                throw ExitCode(Self.cannotAsk)
            }
            FileHandle.standardOutput.write(Data(decision.markdown.utf8))
            throw ExitCode(decision.exitCode)
        }
    }

    private struct Decision: Decodable {
        var exitCode: Int32
        var markdown: String

        enum CodingKeys: String, CodingKey {
            case exitCode = "exit_code"
            case markdown
        }
    }

    private struct ErrorAnswer: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }

        var error: Detail
    }
}
