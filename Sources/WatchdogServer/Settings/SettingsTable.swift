import WatchdogHTTP
import WatchdogStore

/// One setting of `watchdogd serve`: its flag, its `WATCHDOG_*` variable (also the key in a
/// settings file), its help, and how a value is checked and stored. The default is never
/// written here: it is read from `ServerSettings()` for `--help`.
public struct Setting: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `--name VALUE`.
        case value(placeholder: String)
        /// `--name` alone; in the environment or a file 1/true/yes/on or 0/false/no/off.
        case toggle
        /// `--name VALUE`, repeatable; in the environment or a file comma-separated.
        case list(placeholder: String)
    }

    /// The flag without its dashes, e.g. `rate-per-key`.
    public let name: String
    public let kind: Kind
    public let help: String
    /// Left out of `--help` (test knobs).
    public let hidden: Bool
    let shown: @Sendable (ServerSettings) -> String?
    let apply: @Sendable (inout ServerSettings, [String]) throws(Setting.Invalid) -> Void

    /// `WATCHDOG_RATE_PER_KEY` for `rate-per-key`.
    public var variable: String { Setting.variable(for: name) }

    public static func variable(for name: String) -> String {
        "WATCHDOG_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// What is wrong with a value: completes "<where it came from> must …".
    public struct Invalid: Error, Sendable {
        public var mustBe: String
    }

    /// The default, as `--help` shows it.
    public var defaultText: String? { shown(ServerSettings()) }
}

extension Setting {
    static func integer(_ name: String, _ range: ClosedRange<Int>, _ help: String, hidden: Bool = false,
                        _ keyPath: WritableKeyPath<ServerSettings, Int> & Sendable) -> Setting {
        Setting(name: name, kind: .value(placeholder: "n"), help: help, hidden: hidden, shown: { String($0[keyPath: keyPath]) }) { settings, values throws(Invalid) in
            settings[keyPath: keyPath] = try whole(values, range)
        }
    }

    static func text(_ name: String, _ help: String, _ keyPath: WritableKeyPath<ServerSettings, String?> & Sendable) -> Setting {
        Setting(name: name, kind: .value(placeholder: name.hasSuffix("dir") ? "path" : "text"), help: help, hidden: false,
                shown: { $0[keyPath: keyPath] }) { settings, values throws(Invalid) in
            settings[keyPath: keyPath] = values.last
        }
    }

    static func toggle(_ name: String, _ help: String, _ keyPath: WritableKeyPath<ServerSettings, Bool> & Sendable) -> Setting {
        Setting(name: name, kind: .toggle, help: help, hidden: false, shown: { $0[keyPath: keyPath] ? "on" : nil }) { settings, values throws(Invalid) in
            switch values.last?.lowercased() {
            case "1", "true", "yes", "on": settings[keyPath: keyPath] = true
            case "0", "false", "no", "off": settings[keyPath: keyPath] = false
            // A typo must not quietly turn a protection off.
            default: throw Invalid(mustBe: "be 1, true, yes, on, 0, false, no or off, got \((values.last ?? "").debugDescription)")
            }
        }
    }

    /// An ingest rate: requests a second, with bursts of `burst` times that.
    static func rate(_ name: String, burst: Double, _ help: String,
                     _ rate: WritableKeyPath<ServerSettings, Double> & Sendable, _ burstPath: WritableKeyPath<ServerSettings, Double> & Sendable) -> Setting {
        Setting(name: name, kind: .value(placeholder: "n"), help: help, hidden: false, shown: { String(Int($0[keyPath: rate])) }) { settings, values throws(Invalid) in
            let value = Double(try whole(values, 0...1_000_000))
            settings[keyPath: rate] = value
            settings[keyPath: burstPath] = value * burst
        }
    }

    static func whole(_ values: [String], _ range: ClosedRange<Int>) throws(Invalid) -> Int {
        guard let text = values.last, let value = Int(text), range.contains(value) else {
            throw Invalid(mustBe: "be a whole number within \(range.lowerBound)…\(range.upperBound), got \(values.last ?? "")")
        }
        return value
    }
}

/// Every setting of `watchdogd serve`, in `--help` order. Adding one: a field with its default
/// in `ServerSettings`, an entry here; the flag, the environment variable, the settings-file
/// key and the help line follow.
public enum SettingsTable {
    public static let serve: [Setting] = [
        Setting(name: "listen", kind: .value(placeholder: "host:port"),
                help: "Address to listen on, HOST:PORT or [IPv6]:PORT; port 0 picks a free one.", hidden: false,
                shown: { $0.listen.description }) { settings, values throws(Setting.Invalid) in
            guard let text = values.last, let address = ListenAddress(text) else {
                throw Setting.Invalid(mustBe: "be HOST:PORT with an IP address, e.g. 127.0.0.1:8080 or [::1]:8080, got \(values.last ?? "")")
            }
            settings.listen = address
        },
        .toggle("demo", "Create a demo app with two releases of data on first run, and print sign-in tokens.", \.demo),
        Setting(name: "synchronous", kind: .value(placeholder: "mode"),
                help: "SQLite synchronous mode: full (a 202 survives power loss) or normal (survives a crash of watchdogd).", hidden: false,
                shown: { $0.synchronous.rawValue.lowercased() }) { settings, values throws(Setting.Invalid) in
            guard let mode = SQLiteStore.Synchronous(rawValue: (values.last ?? "").uppercased()) else {
                throw Setting.Invalid(mustBe: "be full or normal, got \(values.last ?? "")")
            }
            settings.synchronous = mode
        },
        .integer("http-threads", 1...64, "HTTP worker threads.", \.httpThreads),
        .integer("connection-limit", 1...1_000_000, "Open connections at most.", \.connectionLimit),
        .integer("per-ip-connection-limit", 1...1_000_000, "Open connections per client IP at most.", \.perAddressConnectionLimit),
        .integer("connection-timeout", 1...86_400, "Seconds before an idle connection is closed.", \.connectionTimeoutSeconds),
        .integer("header-timeout", 1...3_600,
                 "Seconds a connection may take to send a request's headers, from opening or from its previous response; 1 while more than 3/4 of the connection limit is open.",
                 \.headerTimeoutSeconds),
        .integer("body-memory", 1...65_536,
                 "MiB that request bodies being received may hold in all; past it requests wait, unread, for earlier ones to complete.",
                 \.bodyMemoryMiB),
        .integer("body-memory-per-client", 1...65_536, "MiB of --body-memory one client address may hold; its requests past it wait while others pass.",
                 \.bodyMemoryPerClientMiB),
        .integer("body-wait", 1...3_600, "Seconds a request may wait for body memory before it gets 503 with Retry-After.", \.bodyWaitSeconds),
        .integer("body-deadline", 1...3_600,
                 "Seconds a body may take once its memory is granted, plus its size at --body-min-rate; past that its connection is closed.",
                 \.bodyDeadlineSeconds),
        .integer("body-min-rate", 1...1_048_576, "KiB/s: the slowest body upload --body-deadline allows for.", \.bodyMinRateKiB),
        .integer("config-max-age", 0...86_400, "Cache-Control max-age of GET /v1/config, seconds: how long clients reuse a remote config.", \.configMaxAgeSeconds),
        .rate("rate-per-key", burst: 2, "Ingest requests a second per ingest key, bursts of twice that; 0: no limit.", \.ingestRatePerKey, \.ingestBurstPerKey),
        .rate("rate-per-address", burst: 5, "Ingest requests a second per client address, bursts of 5×; 0 behind a reverse proxy.",
              \.ingestRatePerAddress, \.ingestBurstPerAddress),
        Setting(name: "failed-auth-per-address", kind: .value(placeholder: "n"),
                help: "Unknown tokens or session cookies a second per client address before it gets 429 for new ones, bursts of 10×; 0: no limit.", hidden: false,
                shown: { String(Int($0.failedAuthPerAddress)) }) { settings, values throws(Setting.Invalid) in
            settings.failedAuthPerAddress = Double(try Setting.whole(values, 0...1_000_000))
        },
        Setting(name: "trusted-proxy", kind: .list(placeholder: "address"),
                help: "Address of a reverse proxy whose X-Forwarded-For names the client, for the per-address limits; repeatable.", hidden: false,
                shown: { $0.trustedProxies.isEmpty ? nil : $0.trustedProxies.sorted().joined(separator: ",") }) { settings, values throws(Setting.Invalid) in
            settings.trustedProxies = Set(values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty })
        },
        .text("metrics-token", "Bearer token for GET /metrics; without it only loopback clients may scrape.", \.metricsToken),
        .toggle("cookie-secure", "Mark the dashboard's session cookie Secure (serve behind HTTPS).", \.cookieSecure),
        .integer("ingest-queue-items", 500...10_000_000,
                 "Reports and session starts that may wait for the writer; past it ingest answers 503 with Retry-After instead of growing memory.",
                 \.ingestQueueCapacity),
        .integer("flood-cap", 0...1_000_000,
                 "Reports of one issue that one session may send before the rest are counted apart as flooded, out of every rate and verdict; 0: no cap.", \.floodCap),
        .integer("retention-days", 0...36_500, "Days raw reports and session starts are kept; release stats stay. 0 keeps everything.", \.retentionDays),
        .integer("audit-retention-days", 0...36_500, "Days rows of the audit log are kept (GET /v1/admin/audit). 0 keeps them forever.", \.auditRetentionDays),
        Setting(name: "retention-interval", kind: .value(placeholder: "seconds"), help: "Seconds between retention runs.", hidden: true,
                shown: { String(Int($0.retentionIntervalSeconds)) }) { settings, values throws(Setting.Invalid) in
            settings.retentionIntervalSeconds = Double(try Setting.whole(values, 1...86_400))
        },
        .integer("rollout-interval", 1...86_400,
                 "Seconds between passes of the guarded-rollout guard (on its own thread, never on ingest's): each pass advances or rolls back active rollouts.",
                 \.rolloutIntervalSeconds),
        Setting(name: "test-clock-file", kind: .value(placeholder: "path"),
                help: "Test only: a file of milliseconds the clock runs ahead; refused unless WATCHDOG_TEST_HOOKS=1.", hidden: true,
                shown: { $0.testClockFile }) { settings, values throws(Setting.Invalid) in
            settings.testClockFile = values.last
        },
        .integer("alert-delay", 0...3_600,
                 "Seconds after new data before alert rules are evaluated (on their own thread, never on ingest's); data arriving meanwhile joins that evaluation.",
                 \.alertDelaySeconds),
        Setting(name: "alert-allowed-hosts", kind: .list(placeholder: "host"),
                help: "Host a webhook may be delivered to, repeatable; deliveries to any other host fail without a connection. Unset: any host.", hidden: false,
                shown: { $0.alertAllowedHosts.isEmpty ? nil : $0.alertAllowedHosts.sorted().joined(separator: ",") }) { settings, values throws(Setting.Invalid) in
            settings.alertAllowedHosts = Set(values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }.filter { !$0.isEmpty })
        },
        Setting(name: "alert-timeout", kind: .value(placeholder: "seconds"),
                help: "Seconds one webhook attempt may take, connection to answer, whatever the receiver does; then it is cut and retried later.", hidden: false,
                shown: { String(Int($0.alertTimeoutSeconds)) }) { settings, values throws(Setting.Invalid) in
            settings.alertTimeoutSeconds = Double(try Setting.whole(values, 1...300))
        },
        Setting(name: "alert-retry-base", kind: .value(placeholder: "seconds"), help: "Seconds before the first retry of a failed webhook delivery.", hidden: true,
                shown: { String(Int($0.alertRetryBaseSeconds)) }) { settings, values throws(Setting.Invalid) in
            settings.alertRetryBaseSeconds = Double(try Setting.whole(values, 1...3_600))
        },
        Setting(name: "smtp-url", kind: .value(placeholder: "url"),
                help: "SMTP server of e-mail alert hooks: smtp://host:587 (STARTTLS required) or smtps://host:465.", hidden: false,
                shown: { $0.smtpURL }) { settings, values throws(Setting.Invalid) in
            guard let value = values.last else { return }
            guard SMTPSettings.validURL(value) else { throw Setting.Invalid(mustBe: "an smtp:// or smtps:// URL with a host, e.g. smtp://mail.example.com:587") }
            settings.smtpURL = value
        },
        Setting(name: "smtp-from", kind: .value(placeholder: "address"), help: "The From address of alert e-mails.", hidden: false,
                shown: { $0.smtpSender }) { settings, values throws(Setting.Invalid) in
            guard let value = values.last else { return }
            guard EmailAddress.isValid(value) else { throw Setting.Invalid(mustBe: "an e-mail address such as watchdog@example.com") }
            settings.smtpSender = value
        },
        Setting(name: "smtp-credentials-file", kind: .value(placeholder: "path"),
                help: "File of two lines, the SMTP user name and password (kept out of argv and the environment).", hidden: false,
                shown: { $0.smtpCredentialsFile }) { settings, values throws(Setting.Invalid) in
            settings.smtpCredentialsFile = values.last
        },
        Setting(name: "smtp-ca-file", kind: .value(placeholder: "path"), help: "CA bundle trusted for the SMTP server instead of the system's.", hidden: false,
                shown: { $0.smtpCAFile }) { settings, values throws(Setting.Invalid) in
            settings.smtpCAFile = values.last
        },
        Setting(name: "chart-js-dir", kind: .value(placeholder: "path"), help: "Debian's Chart.js (libjs-chart.js), served to the dashboard.", hidden: false,
                shown: { $0.chartDirectory }) { settings, values throws(Setting.Invalid) in
            if let value = values.last { settings.chartDirectory = value }
        },
        .text("oidc-issuer", "OpenID Connect sign-in for the dashboard: the issuer URL (its /.well-known/openid-configuration is read).", \.oidcIssuer),
        .text("oidc-client-id", "The client id registered at the OpenID provider.", \.oidcClientID),
        Setting(name: "oidc-client-secret-file", kind: .value(placeholder: "path"), help: "A file holding the OpenID client's secret (confidential clients).",
                hidden: false, shown: { $0.oidcClientSecretFile }) { settings, values throws(Setting.Invalid) in
            settings.oidcClientSecretFile = values.last
        },
        Setting(name: "oidc-role", kind: .list(placeholder: "rule"),
                help: "Who signs in as what: group:NAME=ROLE or domain:example.com=ROLE, ROLE viewer, operator or admin, optionally :APP+APP to limit it to apps; repeatable. No rule matched: refused.",
                hidden: false, shown: { $0.oidcRoles.isEmpty ? nil : $0.oidcRoles.map(\.description).joined(separator: ",") }) { settings, values throws(Setting.Invalid) in
            settings.oidcRoles = try values.flatMap { $0.split(separator: ",") }.map { rule throws(Setting.Invalid) in
                guard let parsed = OIDCRoleRule(rule.trimmingCharacters(in: .whitespaces)) else {
                    throw Setting.Invalid(mustBe: "be group:NAME=ROLE[:APP+APP] or domain:DOMAIN=ROLE[:APP+APP] with ROLE viewer, operator or admin, got \(String(rule).debugDescription)")
                }
                return parsed
            }
        },
        Setting(name: "oidc-groups-claim", kind: .value(placeholder: "claim"), help: "The ID token's claim listing the person's groups.", hidden: false,
                shown: { $0.oidcGroupsClaim }) { settings, values throws(Setting.Invalid) in
            if let value = values.last { settings.oidcGroupsClaim = value }
        },
        .text("oidc-provider-name", "The sign-in button's name: \"Sign in with NAME\" (default: the issuer's host).", \.oidcProviderName),
        .text("oidc-redirect-uri", "The redirect URI registered at the provider (default: http(s)://HOST/auth/oidc/callback from the request).", \.oidcRedirectURI),
        Setting(name: "oidc-scopes", kind: .list(placeholder: "scope"), help: "Scopes asked for besides openid.", hidden: false,
                shown: { $0.oidcScopes.joined(separator: ",") }) { settings, values throws(Setting.Invalid) in
            settings.oidcScopes = values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty && $0 != "openid" }
        },
        .integer("oidc-jwks-refetch", 0...86_400, "Seconds at least between JWKS fetches an unknown key id causes (key rotation).", hidden: true, \.oidcJWKSRefetchSeconds),
        .text("resources-dir", "Directory with openapi.yaml and the dashboard (default ./Resources if present, else /usr/share/watchdogd).", \.resourcesDirectory),
    ]

    /// The variables a settings file may set: the table's and those of the options every verb
    /// shares (`CommonOptions` in watchdogd).
    public static let fileVariables: [String] = serve.map(\.variable) + ["data-dir", "store", "log-level", "log-format"].map(Setting.variable(for:))

    /// The `--help` text of the table: one entry a setting, with its variable and default.
    public static func help(_ settings: [Setting] = serve) -> String {
        settings.filter { !$0.hidden }.map { setting in
            let flag: String
            switch setting.kind {
            case .value(let placeholder), .list(let placeholder): flag = "--\(setting.name) <\(placeholder)>"
            case .toggle: flag = "--\(setting.name)"
            }
            let defaultText = setting.defaultText.map { ", default \($0)" } ?? ""
            return "  \(flag)\n        \(setting.help) (env \(setting.variable)\(defaultText))"
        }.joined(separator: "\n")
    }
}
