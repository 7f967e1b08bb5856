/// Who may choose how a tenant's email actions leave the gateway (DESIGN.md §5).
///
/// `SENDMAIL` sends through the operator's own mail transfer agent, and `LOG` writes
/// every link to the operator's log: both hand a tenant the operator's resources, so only
/// a project admin key may choose them. A tenant-scoped key may choose the webhook only,
/// which is the tenant's own endpoint. Whoever chooses `SENDMAIL`, its `From:` must be an
/// address at one of the domains the operator lists (`email.allowed_from_domains`), or
/// the operator's MTA becomes a relay for mail claiming to come from anyone.
public enum EmailDeliveryPolicy {
    /// `PERMISSION_DENIED` when a key of `scope` may not make `new` replace `old`, and
    /// `INVALID_ARGUMENT` when `new` sends as an address outside `allowedFromDomains`.
    ///
    /// A change that leaves the delivery as it was is always allowed: a tenant key that
    /// PATCHes another field keeps the channel its operator chose for it.
    /// - Parameters:
    ///   - new: the delivery the change would store (`nil`: the daemon's default).
    ///   - old: the delivery stored now (`nil` for a new tenant, or the daemon's default).
    ///   - scope: the scope of the admin key making the change.
    ///   - allowedFromDomains: the operator's `email.allowed_from_domains`, in lower case.
    public static func authorize(
        _ new: EmailDelivery?, replacing old: EmailDelivery?, scope: AdminScope, allowedFromDomains: [String]
    ) throws(AuthError) {
        guard let new, new != old else { return }
        if new.channel != .webhook, scope != .project {
            throw AuthError(
                .permissionDenied, detail: "only a project admin key may choose the \(new.channel.rawValue) email channel")
        }
        if new.channel == .sendmail, let from = new.from {
            guard let domain = senderDomain(from), allowedFromDomains.contains(domain) else {
                throw AuthError(
                    .invalidArgument,
                    detail: "emailDelivery.from must be an address at one of the operator's email.allowed_from_domains")
            }
        }
    }

    /// The lower-case domain of a `From:` value: `addr@domain` or `Name <addr@domain>`;
    /// `nil` when it holds no single address.
    static func senderDomain(_ from: String) -> String? {
        var address = Substring(from)
        if let open = from.lastIndex(of: "<") {
            guard from.hasSuffix(">") else { return nil }
            address = from[from.index(after: open)..<from.index(before: from.endIndex)]
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[1].contains(where: { $0 == " " || $0 == ">" })
        else { return nil }
        return parts[1].lowercased()
    }
}
