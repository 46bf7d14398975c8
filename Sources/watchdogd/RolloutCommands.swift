import ArgumentParser
import Foundation

/// `watchdogd rollouts list|show|start|pause|resume|advance|abort`: the guarded rollouts of
/// `/v1/admin/apps/{app}/rollouts`, through the running server's API (a step is a config
/// version, which the serving process makes), with an admin token.
struct Rollouts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start and steer guarded rollouts of config rules (through the running server).",
        discussion: "Needs --url and --token (or WATCHDOG_URL and WATCHDOG_ADMIN_TOKEN); prints the server's JSON answer (docs/rollouts-and-alerts.md, \"Guarded rollouts\").",
        subcommands: [List.self, Show.self, Start.self, Action.self]
    )

    struct Server: ParsableArguments {
        @Option(help: "The server's URL, e.g. http://127.0.0.1:8080 (default: WATCHDOG_URL).") var url: String?
        @Option(help: "An admin token (default: WATCHDOG_ADMIN_TOKEN).") var token: String?

        /// Sends one request and prints the answer's body; a status other than 2xx is an error.
        func call(_ method: String, _ path: String, body: [String: Any]? = nil) throws {
            let environment = ProcessInfo.processInfo.environment
            guard let base = url ?? environment["WATCHDOG_URL"], let endpoint = URL(string: base + path), endpoint.host != nil else {
                throw ValidationError("--url (or WATCHDOG_URL) must be the server's URL, e.g. http://127.0.0.1:8080")
            }
            guard let token = token ?? environment["WATCHDOG_ADMIN_TOKEN"] else { throw ValidationError("--token (or WATCHDOG_ADMIN_TOKEN) is required: an admin token") }
            var headers = "Authorization: Bearer \(token)"
            var payload: [UInt8]?
            if let body {
                payload = Array(try JSONSerialization.data(withJSONObject: body))
                headers += "\nContent-Type: application/json"
            }
            let response: (status: Int, body: Data)
            switch ServerRequest.send(endpoint.absoluteString, headers: headers, body: method == "POST" ? payload ?? [] : nil, timeoutMilliseconds: 30_000) {
            case .success(let answer): response = answer
            case .failure(let reason): throw CLIError("\(base) did not answer: \(reason)")
            }
            let text = String(decoding: response.body, as: UTF8.self)
            guard (200..<300).contains(response.status) else { throw CLIError("HTTP \(response.status): \(text)") }
            emit(text)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An app's rollouts, as JSON.")
        @OptionGroup var server: Server
        @Argument(help: "The app's bundle id.") var app: String
        func run() throws { try server.call("GET", "/v1/admin/apps/\(app)/rollouts") }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One rule's rollout: steps, evidence, the guard's latest look.")
        @OptionGroup var server: Server
        @Argument(help: "The app's bundle id.") var app: String
        @Argument(help: "The config rule's id.") var rule: String
        func run() throws { try server.call("GET", "/v1/admin/apps/\(app)/rollouts/\(rule)") }
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a guarded rollout of a config rule at its first step.")
        @OptionGroup var server: Server
        @Argument(help: "The app's bundle id.") var app: String
        @Argument(help: "The config rule's id.") var rule: String
        @Option(help: "Percentages, comma-separated and increasing (default 1,5,25,50,100).") var steps: String?
        @Option(help: "Session starts each cohort needs at a step (default 200).") var minimumSessions: Int?
        @Option(help: "Hours a step lasts at least (default 24).") var minimumHours: Double?
        @Flag(help: "Do not roll back on the all-kinds verdict (then --kind is needed).") var noOverall = false
        @Option(help: "A report kind whose own regressed verdict rolls back; repeatable.") var kind: [String] = []

        func run() throws {
            var body: [String: Any] = ["rule": rule, "guard": ["overall": !noOverall, "kinds": kind]]
            if let steps {
                let values = steps.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
                guard values.allSatisfy({ $0 != nil }) else { throw ValidationError("--steps must be numbers separated by commas, e.g. 1,5,25,50,100") }
                body["steps"] = values.compactMap { $0 }
            }
            if let minimumSessions { body["minimum_sessions"] = minimumSessions }
            if let minimumHours { body["minimum_hours"] = minimumHours }
            try server.call("POST", "/v1/admin/apps/\(app)/rollouts", body: body)
        }
    }

    struct Action: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "act",
            abstract: "pause, resume, advance (one step) or abort (the rule back to 0 %) a rollout.")
        @OptionGroup var server: Server
        @Argument(help: "pause, resume, advance or abort.") var action: String
        @Argument(help: "The app's bundle id.") var app: String
        @Argument(help: "The config rule's id.") var rule: String

        func validate() throws {
            guard ["pause", "resume", "advance", "abort"].contains(action) else { throw ValidationError("the action is pause, resume, advance or abort") }
        }

        func run() throws { try server.call("POST", "/v1/admin/apps/\(app)/rollouts/\(rule)/\(action)") }
    }
}
