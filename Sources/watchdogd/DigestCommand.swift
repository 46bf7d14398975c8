import ArgumentParser
import Foundation

extension Alerts {
    /// `watchdogd alerts digest APP --now --hook ID --url URL`: asks a running server to send a
    /// digest of the last 7 days to a hook now (`POST …/alerts/hooks/{id}/digest`), to try a
    /// hook; the weekly digest goes by itself.
    struct Digest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send an app's digest of the last 7 days to a hook now, through a running server.",
            discussion: "The token may come from WATCHDOG_TOKEN instead of --token (it then stays out of the process list). The weekly digest is sent by serve itself once each week is over."
        )

        @Argument(help: "The app's bundle id.") var app: String
        @Flag(help: "Send it now (the only mode: the weekly digest needs no command).") var now = false
        @Option(help: "The hook's id (wh…), an email, teams or webhook hook.") var hook: String
        @Option(help: "The watchdogd base URL, e.g. https://watchdog.example.com.") var url: String
        @Option(help: "An operator or admin token (default: $WATCHDOG_TOKEN).") var token: String?
        @Option(help: "Seconds to wait for the answer.") var timeout: Int = 30

        func run() throws {
            guard now else { throw ValidationError("give --now: the weekly digest is sent by serve, this sends one now") }
            guard let token = token ?? ProcessInfo.processInfo.environment["WATCHDOG_TOKEN"], !token.isEmpty,
                  token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw ValidationError("give a token of one ASCII word: --token or WATCHDOG_TOKEN")
            }
            let path = "/v1/admin/apps/\(escaped(app))/alerts/hooks/\(escaped(hook))/digest"
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            switch ServerRequest.send(base + path, headers: "Authorization: Bearer \(token)\nAccept: application/json", body: [], timeoutMilliseconds: timeout * 1000) {
            case .failure(let failure):
                throw CLIError(failure.description)
            case .success(let answer):
                let text = String(decoding: answer.body, as: UTF8.self)
                guard answer.status == 202 else { throw CLIError("HTTP \(answer.status): \(text.prefix(400))") }
                say("digest queued for hook \(hook); its delivery log shows how it went")
                emit(text)
            }
        }

        private func escaped(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
        }
    }
}
