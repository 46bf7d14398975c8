import ArgumentParser
import WatchdogServer
import WatchdogStore

/// `watchdogd alerts hooks|rules add|list|remove`: what `/v1/admin/apps/{app}/alerts` does,
/// on the data dir, also while `serve` runs (it reads rules and hooks at each pass).
struct Alerts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage alert rules and the webhooks they post to.",
        discussion: "A running serve evaluates new rules at its next pass, after the next data arrives (docs/api.md, \"Alerts\").",
        subcommands: [Hooks.self, Rules.self, Digest.self]
    )

    struct Hooks: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Webhooks alerts are posted to.", subcommands: [Add.self, List.self, Remove.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create a webhook and print its signing secret alone on stdout (shown once).",
                discussion: "Deliveries carry Watchdog-Signature: sha256=HMAC-SHA256(secret, \"<Watchdog-Timestamp>.<body>\")."
            )

            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String
            @Option(help: "webhook (default), pagerduty, teams or email.") var kind: String?
            @Option(help: "An http:// or https:// URL: a Slack incoming webhook, a Teams workflow's URL; pagerduty: default PagerDuty's Events API v2.")
            var url: String?
            @Option(help: "A name for the dashboard and the alert's text.") var name: String?
            @Option(help: "pagerduty: a file holding the Events API v2 integration (routing) key, kept out of the process list.") var routingKeyFile: String?
            @Option(help: "email: a recipient address, repeatable.") var recipient: [String] = []
            @Flag(help: "Send the app's weekly digest to this hook too (not pagerduty).") var digest = false

            func run() throws {
                let hook: AlertHookRecord
                var routingKey: String?
                if let routingKeyFile {
                    routingKey = try String(contentsOfFile: routingKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                }
                do {
                    hook = try HookKind.hook(kind: kind, name: name, url: url, routingKey: routingKey, recipients: recipient.isEmpty ? nil : recipient,
                                             digest: digest, app: app, createdAt: WatchdogServer.systemClock(), createdBy: "watchdogd alerts")
                } catch {
                    throw ValidationError(error.message)
                }
                let store = try common.openStore()
                defer { try? store.close() }
                guard try store.appExists(app) else { throw CLIError("no app \(app)") }
                guard try store.alertHooks(app: app).count < AlertRules.maximumHooks else { throw CLIError("\(app) has \(AlertRules.maximumHooks) hooks already") }
                try audited(store, "alert.hook.add", app: app,
                            after: "{\"hook\": \"\(hook.id)\", \"kind\": \"\(hook.kind)\", \"url\": \(jsonQuoted(hook.url)), \"digest\": \(hook.digest)}") {
                    try store.createAlertHook(hook)
                }
                say("created \(hook.kind) hook \(hook.id) for \(app)")
                // A pagerduty hook's secret is the routing key it was given: not printed.
                emit(hook.kind == "pagerduty" ? hook.id : hook.secret)
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List an app's hooks (id, kind, name, URL or recipients), one a line.")
            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String

            func run() throws {
                let store = try common.openStore()
                defer { try? store.close() }
                for hook in try store.alertHooks(app: app) {
                    emit("\(hook.id)\t\(hook.kind)\t\(hook.name)\t\(hook.kind == "email" ? hook.recipients.joined(separator: ",") : hook.url)")
                }
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete a webhook no rule sends to.")
            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String
            @Argument(help: "The hook's id (wh…).") var id: String

            func run() throws {
                let store = try common.openStore()
                defer { try? store.close() }
                switch try audited(store, "alert.hook.delete", app: app, after: "{\"hook\": \(jsonQuoted(id))}", { try store.deleteAlertHook(app: app, id: id) }) {
                case .deleted: say("deleted hook \(id)")
                case .notFound: throw CLIError("\(app) has no hook \(id)")
                case .inUse(let rules): throw CLIError("rules \(rules.joined(separator: ", ")) send to hook \(id); remove them first")
                }
            }
        }
    }

    struct Rules: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Alert rules.", subcommands: [Add.self, List.self, Remove.self])

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Create an alert rule and print its id alone on stdout.")
            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String
            @Option(help: "release_regressed, new_issue, test_crashes, glitch_free_rate_below, rollout_rolled_back, rollout_completed or rollout_paused.") var condition: String
            @Option(help: "The id of the hook to post to (wh…).") var hook: String
            @Option(help: "A name for the alert's text.") var name: String?
            @Option(help: "release_regressed: one report kind instead of all.") var kind: String?
            @Option(help: "release_regressed, glitch_free_rate_below: sessions a release needs (default 100).") var minimumSessions: Int?
            @Option(help: "new_issue: affected sessions a new issue needs (default 5).") var minimumAffectedSessions: Int?
            @Option(help: "release_regressed, new_issue, glitch_free_rate_below: distinct installs with sessions a release needs (default 20).")
            var minimumInstalls: Int?
            @Option(help: "glitch_free_rate_below: the rate, above 0 and at most 1 (0.99 is 99 %).") var threshold: Double?
            @Option(help: "release_regressed, glitch_free_rate_below: all (default) or attested — only the sessions of installs with an App Attest key.")
            var installs: String?

            func run() throws {
                let draft = AlertRuleDraft(name: name, condition: condition, hook: hook, kind: kind, minimumSessions: minimumSessions,
                                           minimumAffectedSessions: minimumAffectedSessions, minimumInstalls: minimumInstalls, threshold: threshold,
                                           installs: installs)
                let rule: AlertRuleRecord
                do { rule = try AlertRules.rule(draft, app: app, createdAt: WatchdogServer.systemClock(), createdBy: "watchdogd alerts") } catch {
                    throw ValidationError(error.message)
                }
                let store = try common.openStore()
                defer { try? store.close() }
                guard try store.alertHooks(app: app).contains(where: { $0.id == hook }) else { throw CLIError("\(app) has no hook \(hook)") }
                guard try store.alertRules(app: app).count < AlertRules.maximumRules else { throw CLIError("\(app) has \(AlertRules.maximumRules) rules already") }
                try audited(store, "alert.rule.add", app: app, after: "{\"rule\": \"\(rule.id)\", \"condition\": \"\(rule.condition)\"}") { try store.createAlertRule(rule) }
                say("created rule \(rule.id) (\(rule.condition)) for \(app)")
                emit(rule.id)
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List an app's alert rules (id, condition, hook, name), one a line.")
            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String

            func run() throws {
                let store = try common.openStore()
                defer { try? store.close() }
                for rule in try store.alertRules(app: app) { emit("\(rule.id)\t\(rule.condition)\t\(rule.hookID)\t\(rule.name)") }
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete an alert rule.")
            @OptionGroup var common: CommonOptions
            @Argument(help: "The app's bundle id.") var app: String
            @Argument(help: "The rule's id (ar…).") var id: String

            func run() throws {
                let store = try common.openStore()
                defer { try? store.close() }
                guard try audited(store, "alert.rule.delete", app: app, after: "{\"rule\": \(jsonQuoted(id))}", { try store.deleteAlertRule(app: app, id: id) }) else { throw CLIError("\(app) has no alert rule \(id)") }
                say("deleted rule \(id)")
            }
        }
    }
}
