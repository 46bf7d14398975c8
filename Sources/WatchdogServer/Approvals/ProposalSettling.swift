import WatchdogStore
import WatchdogWire

/// Settles a proposal a node left `applying`: the approval claimed it, then the node stopped
/// (killed, crashed, lost its database) before it wrote `approved` or `failed`. Whether the change
/// itself was made is in the audit log — its row is written in the same transaction as the
/// change and names the proposal (`approval.proposal`) — so the proposal becomes `approved` when
/// that row exists and `failed` when it does not, and the page stops showing a change forever
/// "applying". Only after `graceMilliseconds`, so a node still applying it is never overtaken.
struct ProposalSettling: Sendable {
    let store: any TelemetryStore
    /// An approval applies in well under a second; two minutes leave room for a slow database.
    static let graceMilliseconds: Int64 = 120_000

    /// The proposals as they are after settling those left `applying` for longer than the grace.
    func settled(_ proposals: [ProposalRecord], now: Int64) -> [ProposalRecord] {
        proposals.map { proposal in
            guard proposal.status == "applying", let claimedAt = proposal.decidedAt, claimedAt < now - Self.graceMilliseconds,
                  let settled = settle(proposal, claimedAt: claimedAt, now: now) else { return proposal }
            return settled
        }
    }

    private func settle(_ proposal: ProposalRecord, claimedAt: Int64, now: Int64) -> ProposalRecord? {
        let filter = AuditFilter(app: proposal.app, action: proposal.action, from: claimedAt)
        guard let rows = try? store.auditEntries(filter, before: nil, limit: 1_000) else { return nil }
        let applied = rows.contains { row in
            guard let text = row.after, case .object(let after)? = JSONValue.parse(Array(text.utf8)),
                  case .object(let approval)? = after["approval"] else { return false }
            return approval["proposal"] == .string(proposal.id)
        }
        let outcome = applied ? "applied (settled from the audit log: the node that applied it stopped before recording it)"
            : "not applied: the node applying it stopped first (no audit row of the change); propose it again"
        let decision = ProposalDecision(from: "applying", to: applied ? "approved" : "failed", decidedBy: proposal.decidedBy ?? "watchdogd", at: now, outcome: outcome)
        // Another node may have settled it meanwhile: then read what it wrote.
        _ = try? store.decideProposal(app: proposal.app, id: proposal.id, decision)
        return (try? store.proposal(app: proposal.app, id: proposal.id)) ?? nil
    }
}
