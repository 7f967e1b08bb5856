public import PortcullisCore
import PortcullisStore

extension AdminAccountService {
    /// `accounts:lookup` (admin): the accounts any identifier names, each once, ordered by uid.
    /// Phone numbers match nobody (Portcullis has none). `INVALID_ARGUMENT` over
    /// `AdminUserPolicy.lookupLimit` identifiers.
    public func lookup(
        tenant: TenantScope, uids: [String], emails: [String], phoneNumbers: [String],
        federatedIds: [FederatedUserId]
    ) async throws -> [User] {
        _ = try await tenants.settings(tenant: tenant)
        let count = uids.count + emails.count + phoneNumbers.count + federatedIds.count
        guard count <= AdminUserPolicy.lookupLimit else {
            throw AuthError(.invalidArgument, detail: "at most \(AdminUserPolicy.lookupLimit) identifiers per lookup")
        }
        guard uids.count + emails.count + federatedIds.count > 0 else { return [] }
        return try await users.lookup(tenant: tenant, uids: uids, emails: emails, federatedIds: federatedIds)
    }

    /// One page of `accounts:batchGet`: up to `maxResults` (1–1000, default 20) accounts in
    /// uid order after the page `pageToken` ends, and the next page's token when there are
    /// more. A token this gateway did not issue is `INVALID_PAGE_SELECTION`.
    public func page(
        tenant: TenantScope, maxResults: Int?, pageToken: String?
    ) async throws -> (users: [User], nextPageToken: String?) {
        _ = try await tenants.settings(tenant: tenant)
        let size = maxResults ?? AdminUserPolicy.defaultPageSize
        guard AdminUserPolicy.pageSizes.contains(size) else {
            throw AuthError(.invalidArgument, detail: "maxResults must be between 1 and \(AdminUserPolicy.pageSizes.upperBound)")
        }
        var after: String?
        if let pageToken, !pageToken.isEmpty {
            guard let uid = PageToken.decode(pageToken), !uid.isEmpty else { throw AuthError(.invalidPageSelection) }
            after = uid
        }
        // One more than asked: whether a next page exists, without an empty last page.
        let found = try await users.page(tenant: tenant, after: after, limit: size + 1)
        let page = Array(found.prefix(size))
        let next = found.count > size ? page.last.map { PageToken.encode($0.uid) } : nil
        return (page, next)
    }

    /// `accounts:query`: with `returnUserInfo`, the slice of matching accounts and its size;
    /// without, only how many accounts match.
    public func query(
        tenant: TenantScope, _ query: UserQuery, returnUserInfo: Bool
    ) async throws -> (recordsCount: Int64, users: [User]?) {
        _ = try await tenants.settings(tenant: tenant)
        guard returnUserInfo else { return (try await users.count(tenant: tenant, query.filter), nil) }
        let found = try await users.search(tenant: tenant, query)
        return (Int64(found.count), found)
    }

    /// One refusal of `accounts:batchDelete`: the id's position in the request, the id, why.
    public struct BatchDeleteError: Sendable, Equatable {
        /// Position of the id in the request (its first occurrence).
        public let index: Int
        /// The id.
        public let localId: String
        /// The error, as Identity Toolkit words it (`NOT_DISABLED : …`).
        public let message: String
    }

    /// `accounts:batchDelete`: deletes the named accounts that are disabled, or all of them
    /// with `force` (what the Admin SDKs' `delete_users` sends), in one transaction with an
    /// audit row each. Ids of no account, and repeated ids, are ignored, as Identity Toolkit
    /// does; a live account without `force` is kept and reported. 1–1000 ids, else
    /// `LOCAL_ID_LIST_EXCEEDS_LIMIT`.
    public func batchDelete(tenant: TenantScope, uids: [String], force: Bool, actor: String) async throws -> [BatchDeleteError] {
        _ = try await tenants.settings(tenant: tenant)
        guard (1...AdminUserPolicy.batchDeleteLimit).contains(uids.count) else { throw AuthError(.localIdListExceedsLimit) }
        let result = try await users.delete(tenant: tenant, uids: uids, force: force, actor: actor)
        var reported: Set<String> = []
        var errors: [BatchDeleteError] = []
        for (index, uid) in uids.enumerated() where result.notDisabled.contains(uid) && reported.insert(uid).inserted {
            errors.append(BatchDeleteError(index: index, localId: uid, message: AdminUserPolicy.notDisabled.message))
        }
        return errors
    }
}
