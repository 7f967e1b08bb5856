public import Foundation
import Synchronization

/// A signed-in user: its profile and its own session (ID token and refresh token).
///
/// A `User` does not need its ``Auth``: it refreshes its tokens and calls the gateway on
/// its own, stays usable after ``Auth/signOut()``, and several can be held at once (a
/// user of another tenant's `Auth`, or the same person signed in on two instances).
/// While it is an `Auth`'s ``Auth/currentUser``, its token changes are persisted and
/// reported to that `Auth`'s listeners, and the gateway ending its session signs it out.
public final class User: Sendable, CustomStringConvertible {
    /// The uid.
    public let uid: String
    let api: IdentityToolkitClient
    private let state: Mutex<State>

    /// The session's tokens.
    struct Tokens: Sendable {
        var idToken: String
        var refreshToken: String
        /// When the ID token expires.
        var expirationDate: Date
        /// When this client received it: with the expiry, the token's lifetime.
        var receivedDate: Date
    }

    private struct State {
        var tokens: Tokens
        var profile: UserProfile
        /// The refresh in flight: every caller awaits this one (single-flight).
        var refreshing: Task<Tokens, any Error>?
        weak var owner: Auth?
    }

    init(tokens: Tokens, profile: UserProfile, api: IdentityToolkitClient) {
        uid = profile.uid
        self.api = api
        state = Mutex(State(tokens: tokens, profile: profile))
    }

    /// The profile as of the last sign-in, update or ``reload()``.
    public var profile: UserProfile { state.withLock { $0.profile } }
    /// The email.
    public var email: String? { profile.email }
    /// Whether the email is verified.
    public var isEmailVerified: Bool { profile.emailVerified }
    /// The display name.
    public var displayName: String? { profile.displayName }
    /// The photo URL.
    public var photoURL: String? { profile.photoURL }
    /// Whether the user signed in anonymously and has linked nothing since.
    public var isAnonymous: Bool { profile.isAnonymous }
    /// The tenant, or `nil` for a project user.
    public var tenantId: String? { api.configuration.tenantId }
    /// The linked providers.
    public var providerData: [ProviderInfo] { profile.providerData }
    /// When the current ID token expires.
    public var tokenExpirationDate: Date { state.withLock { $0.tokens.expirationDate } }

    /// `User(<uid>)`: never a token.
    public var description: String { "User(\(uid))" }

    var owner: Auth? {
        get { state.withLock { $0.owner } }
        set { state.withLock { $0.owner = newValue } }
    }

    var persisted: PersistedUser {
        state.withLock { state in
            PersistedUser(
                uid: uid, refreshToken: state.tokens.refreshToken, idToken: state.tokens.idToken,
                expirationDate: state.tokens.expirationDate, profile: state.profile)
        }
    }

    // MARK: Tokens

    /// An ID token for the gateway's APIs and your backend: the current one while it is
    /// more than ``AuthConfiguration/refreshAhead`` (at most half its lifetime) from
    /// expiry, else a new one. Concurrent callers share one refresh.
    ///
    /// A refresh the gateway answers `TOKEN_EXPIRED` (revoked: a password change on
    /// another device, an administrator), `USER_DISABLED` or `USER_NOT_FOUND` throws, and
    /// signs the user out of its `Auth`.
    public func idToken(forceRefresh: Bool = false) async throws -> String {
        try await tokens(forceRefresh: forceRefresh).idToken
    }

    /// The ID token with its decoded claims.
    public func idTokenResult(forceRefresh: Bool = false) async throws -> IDTokenResult {
        try IDTokenResult(token: try await idToken(forceRefresh: forceRefresh))
    }

    /// How long until the token enters its refresh window (zero when it is in it).
    func timeUntilRefresh(now: Date = Date()) -> Duration {
        let tokens = state.withLock { $0.tokens }
        let due = tokens.expirationDate.addingTimeInterval(-refreshAhead(for: tokens))
        return .milliseconds(max(0, Int64(due.timeIntervalSince(now) * 1000)))
    }

    /// The configured lead, capped at half the token's lifetime.
    private func refreshAhead(for tokens: Tokens) -> TimeInterval {
        let lifetime = tokens.expirationDate.timeIntervalSince(tokens.receivedDate)
        let configured = Double(api.configuration.refreshAhead.components.seconds)
        return min(configured, lifetime / 2)
    }

    func tokens(forceRefresh: Bool) async throws -> Tokens {
        enum Next {
            case ready(Tokens)
            case wait(Task<Tokens, any Error>)
        }
        let next: Next = state.withLock { state in
            if let running = state.refreshing { return .wait(running) }
            let tokens = state.tokens
            if !forceRefresh, tokens.expirationDate.timeIntervalSinceNow > refreshAhead(for: tokens) { return .ready(tokens) }
            let refresh = Task { try await self.refresh(using: tokens.refreshToken) }
            state.refreshing = refresh
            return .wait(refresh)
        }
        switch next {
        case .ready(let tokens): return tokens
        case .wait(let refresh): return try await refresh.value
        }
    }

    /// The refresh itself; only ever run as the single ``State/refreshing`` task.
    private func refresh(using refreshToken: String) async throws -> Tokens {
        do {
            let answer = try await api.refresh(refreshToken)
            let tokens = Tokens(
                idToken: answer.idToken, refreshToken: answer.refreshToken,
                expirationDate: Date().addingTimeInterval(TimeInterval(answer.expiresIn.value)), receivedDate: Date())
            state.withLock { state in
                state.tokens = tokens
                state.refreshing = nil
            }
            await owner?.userTokensChanged(self)
            return tokens
        } catch let error as AuthClientError {
            state.withLock { $0.refreshing = nil }
            if error.endsSession { await owner?.userSessionEnded(self) }
            throw error
        } catch {
            state.withLock { $0.refreshing = nil }
            throw error
        }
    }

    /// Takes new tokens from a sign-in, reauthentication or credential change.
    func replaceTokens(from answer: SignInResponse) async throws {
        guard let idToken = answer.idToken, let refreshToken = answer.refreshToken, let expiresIn = answer.expiresIn else {
            throw AuthClientError(.internalError, detail: "the answer carries no tokens")
        }
        let tokens = Tokens(
            idToken: idToken, refreshToken: refreshToken, expirationDate: Date().addingTimeInterval(TimeInterval(expiresIn.value)),
            receivedDate: Date())
        state.withLock { $0.tokens = tokens }
        await owner?.userTokensChanged(self)
    }

    /// Runs `operation` with a valid ID token; a session the gateway says is over signs the
    /// user out of its `Auth`.
    func authorized<Answer: Sendable>(_ operation: (String) async throws -> Answer) async throws -> Answer {
        let idToken = try await tokens(forceRefresh: false).idToken
        do {
            return try await operation(idToken)
        } catch let error as AuthClientError where error.endsSession {
            await owner?.userSessionEnded(self)
            throw error
        }
    }

    func updateProfile(_ change: (inout UserProfile) -> Void) async {
        state.withLock { change(&$0.profile) }
        await owner?.userProfileChanged(self)
    }
}
