import WatchdogStore
import WatchdogWire

/// One line of the mapping from what the identity provider says about a person to a role:
/// `group:NAME=ROLE` (NAME is in the ID token's groups claim) or `domain:example.com=ROLE` (the
/// person's verified e-mail is at that domain), optionally `:APP+APP` to limit the role to apps.
public struct OIDCRoleRule: Sendable, Equatable, CustomStringConvertible {
    public enum Match: Sendable, Equatable {
        case group(String)
        case domain(String)
    }

    public var match: Match
    public var role: CredentialRole
    /// `nil`: every app.
    public var apps: [String]?

    /// Parses `group:NAME=ROLE[:APP+APP]` or `domain:DOMAIN=ROLE[:APP+APP]`; `nil` if malformed.
    public init?(_ text: String) {
        guard text.utf8.count <= 1_024, let equals = text.lastIndex(of: "=") else { return nil }
        let subject = text[..<equals]
        let grant = text[text.index(after: equals)...].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let roleText = grant.first, let role = CredentialRole(rawValue: String(roleText)), role != .ingest else { return nil }
        if subject.hasPrefix("group:"), subject.count > 6 {
            match = .group(String(subject.dropFirst(6)))
        } else if subject.hasPrefix("domain:"), subject.count > 7, !subject.contains("@") {
            match = .domain(subject.dropFirst(7).lowercased())
        } else {
            return nil
        }
        self.role = role
        if grant.count == 2 {
            let apps = grant[1].split(separator: "+").map(String.init)
            guard !apps.isEmpty, apps.allSatisfy({ (try? AppName.validate($0)) != nil }) else { return nil }
            self.apps = Array(Set(apps)).sorted()
        }
    }

    public var description: String {
        let subject: String
        switch match {
        case .group(let name): subject = "group:\(name)"
        case .domain(let domain): subject = "domain:\(domain)"
        }
        return "\(subject)=\(role.rawValue)" + (apps.map { ":" + $0.joined(separator: "+") } ?? "")
    }
}

/// What a person signed in with OpenID Connect may do, from the rules that match them.
enum OIDCRoleMapping {
    /// The highest role of the rules matching `groups` or the domain of `email` (only when the
    /// provider says the address is verified), with the apps of the matching rules of that role
    /// (every app when one of them has no list); `nil` when no rule matches: refused.
    static func grant(rules: [OIDCRoleRule], groups: [String], email: String?, emailVerified: Bool) -> (role: CredentialRole, apps: [String]?)? {
        let domain = emailVerified ? email.flatMap { address -> String? in
            guard let at = address.lastIndex(of: "@") else { return nil }
            return address[address.index(after: at)...].lowercased()
        } : nil
        let groupSet = Set(groups)
        let matching = rules.filter { rule in
            switch rule.match {
            case .group(let name): return groupSet.contains(name)
            case .domain(let wanted): return domain == wanted
            }
        }
        let order: [CredentialRole] = [.admin, .operator, .viewer]
        guard let role = order.first(where: { role in matching.contains { $0.role == role } }) else { return nil }
        let ofRole = matching.filter { $0.role == role }
        if ofRole.contains(where: { $0.apps == nil }) { return (role, nil) }
        return (role, Array(Set(ofRole.flatMap { $0.apps ?? [] })).sorted())
    }
}
