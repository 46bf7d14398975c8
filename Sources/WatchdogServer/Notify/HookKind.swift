import Foundation
import WatchdogStore

/// Where a hook delivers (README, "Alerts"): the generic signed webhook, PagerDuty's Events
/// API v2, a Microsoft Teams workflow webhook (an Adaptive Card), or e-mail over SMTP.
public enum HookKind: String, CaseIterable, Sendable {
    case webhook, pagerduty, teams, email

    /// PagerDuty's Events API v2 endpoint, used when a `pagerduty` hook names no `url`.
    static let pagerDutyEvents = "https://events.pagerduty.com/v2/enqueue"
    /// Recipients an `email` hook may have.
    static let maximumRecipients = 20

    /// Whether the weekly digest can go to this kind (PagerDuty pages people: not for a digest).
    var takesDigest: Bool { self != .pagerduty }

    /// The hook `POST …/alerts/hooks` makes of its fields, validated. A `pagerduty` hook's
    /// routing key is kept where a webhook's signing secret is (never listed, redacted from the
    /// audit log as `routing_key`); the other kinds get a signing secret as the webhook does.
    public static func hook(kind: String?, name: String?, url: String?, routingKey: String?, recipients: [String]?, digest: Bool?,
                     app: String, createdAt: Int64, createdBy: String) throws(APIError) -> AlertHookRecord {
        let kindText = kind ?? "webhook"
        guard let kind = HookKind(rawValue: kindText) else {
            throw .badRequest("invalid_field", "kind must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), got \(kindText.prefix(40))")
        }
        func refuse(_ field: String, _ present: Bool) throws(APIError) {
            if present { throw .badRequest("invalid_field", "\(field) is not a field of a \(kind.rawValue) hook") }
        }
        if digest == true, !kind.takesDigest { throw .badRequest("invalid_field", "a pagerduty hook cannot take the weekly digest; use an email, teams or webhook hook") }
        var hook: AlertHookRecord
        switch kind {
        case .webhook, .teams:
            try refuse("routing_key", routingKey != nil)
            try refuse("recipients", recipients != nil)
            guard let url else { throw .badRequest("invalid_shape", "a \(kind.rawValue) hook needs a url: {\"url\": \"https://…\", \"name\": \"…\"}") }
            hook = try AlertRules.hook(name: name, url: url, app: app, createdAt: createdAt, createdBy: createdBy)
        case .pagerduty:
            try refuse("recipients", recipients != nil)
            guard let routingKey else { throw .badRequest("invalid_shape", "a pagerduty hook needs routing_key, its Events API v2 integration key (32 characters)") }
            guard routingKey.count == 32, routingKey.unicodeScalars.allSatisfy({ $0.isASCII && CharacterSet.alphanumerics.contains($0) }) else {
                throw .badRequest("invalid_field", "routing_key must be the 32 letters and digits of a PagerDuty Events API v2 integration key")
            }
            hook = try AlertRules.hook(name: name, url: url ?? pagerDutyEvents, app: app, createdAt: createdAt, createdBy: createdBy)
            hook.secret = routingKey
        case .email:
            try refuse("routing_key", routingKey != nil)
            try refuse("url", url != nil)
            guard let recipients, !recipients.isEmpty, recipients.count <= maximumRecipients else {
                throw .badRequest("invalid_shape", "an email hook needs recipients: 1 to \(maximumRecipients) addresses, e.g. {\"kind\": \"email\", \"recipients\": [\"oncall@example.com\"]}")
            }
            for address in recipients where !EmailAddress.isValid(address) {
                throw .badRequest("invalid_field", "recipients must be plain addresses such as oncall@example.com (no names, no spaces), got \"\(address.prefix(80))\"")
            }
            hook = try AlertRules.hook(name: name, url: "https://smtp.invalid/", app: app, createdAt: createdAt, createdBy: createdBy)
            hook.url = ""
            hook.recipients = recipients
        }
        hook.kind = kind.rawValue
        hook.digest = digest ?? false
        return hook
    }
}

/// A bare e-mail address (`local@domain`): what a recipient and `--smtp-from` may be. Nothing
/// that could end a header or an SMTP command (no spaces, brackets, quotes, commas, control
/// characters), at most 254 characters.
enum EmailAddress {
    static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 254, let at = text.firstIndex(of: "@") else { return false }
        let local = text[..<at], domain = text[text.index(after: at)...]
        let localCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-")
        let domainCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
        return !local.isEmpty && local.utf8.count <= 64 && !domain.isEmpty && !domain.hasPrefix(".") && !domain.hasSuffix(".")
            && local.unicodeScalars.allSatisfy(localCharacters.contains) && domain.unicodeScalars.allSatisfy(domainCharacters.contains)
    }
}

/// The SMTP server e-mail hooks send through, from `--smtp-url`, `--smtp-from`,
/// `--smtp-credentials-file` and `--smtp-ca-file`; the credentials are read once, at start.
struct SMTPSettings: Sendable {
    var url: String
    var sender: String
    var username: String?
    var password: String?
    var caFile: String?

    static func validURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "smtp" || scheme == "smtps",
              let host = url.host, !host.isEmpty, url.user == nil else { return false }
        return text.utf8.count <= 2048
    }

    /// `nil` without `--smtp-url`; a credentials file that cannot be read is logged by the caller.
    static func of(_ settings: ServerSettings) throws -> SMTPSettings? {
        guard let url = settings.smtpURL else { return nil }
        var smtp = SMTPSettings(url: url, sender: settings.smtpSender, caFile: settings.smtpCAFile)
        if let file = settings.smtpCredentialsFile {
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\r")) }
            smtp.username = lines.first
            smtp.password = lines.count > 1 ? lines[1] : nil
        }
        return smtp
    }
}
