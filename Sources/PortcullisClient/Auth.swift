import Foundation

/// The client's view of one tenant of a Portcullis gateway: who is signed in, and
/// listeners that hear when that changes.
///
/// ```swift
/// let auth = Auth(configuration: AuthConfiguration(
///     baseURL: "https://auth.example.com", apiKey: "…", projectId: "my-project", tenantId: "acme"))
/// Task { for await user in await auth.authStateChanges { showSignedIn(user) } }
/// let result = try await auth.signIn(email: "ada@example.com", password: "…")
/// ```
///
/// An `Auth` restores the user a previous run left signed in (``AuthConfiguration/persistence``)
/// before it reports anything: the first state every listener hears is that user, or `nil`.
public actor Auth {
    /// Where this instance signs in.
    public nonisolated let configuration: AuthConfiguration
    let api: IdentityToolkitClient

    private var current: User?
    private var initialized = false
    private var waitingForInitialization: [CheckedContinuation<Void, Never>] = []
    private var listeners = Listeners()
    /// The uid the auth-state listeners last heard (`.some(nil)`: signed out).
    private var lastNotifiedUid: String??
    private var proactiveRefresh: Task<Void, Never>?
    private var lastWrite: Task<Void, Never>?

    /// An instance for `configuration`; it restores the persisted user in the background.
    public init(configuration: AuthConfiguration) {
        self.configuration = configuration
        api = IdentityToolkitClient(configuration: configuration)
        Task { await self.restore() }
    }

    /// The signed-in user, once the persisted one (if any) is restored.
    public var currentUser: User? {
        get async {
            await untilInitialized()
            return current
        }
    }

    /// The signed-in user on every sign-in of another user and every sign-out; a new
    /// subscriber hears the current state first (after initialisation).
    public var authStateChanges: AsyncStream<User?> { subscribe(.authState) }

    /// Like ``authStateChanges``, and also on every new ID token of the current user: a
    /// refresh (proactive, or when a token nears expiry), a reauthentication, a password
    /// or email change that issued new tokens.
    public var idTokenChanges: AsyncStream<User?> { subscribe(.idToken) }

    // MARK: Signing in and out

    /// Creates an account with an email and password and signs it in.
    @discardableResult
    public func createUser(email: String, password: String) async throws -> AuthResult {
        let answer: SignInResponse = try await api.post(
            "accounts:signUp", ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)])
        return try await signIn(answer, providerId: "password", isNewUser: true)
    }

    /// Signs in with an email and password.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> AuthResult {
        try await signIn(with: .emailPassword(email: email, password: password))
    }

    /// Signs in with a credential: an email and password, or a federated identity
    /// provider's token (which may create the account, or answer
    /// ``AuthClientError/Code/accountExistsWithDifferentCredential``).
    @discardableResult
    public func signIn(with credential: AuthCredential) async throws -> AuthResult {
        let answer = try await api.signIn(with: credential)
        return try await signIn(answer, providerId: credential.providerId, isNewUser: answer.isNewUser ?? false)
    }

    /// Signs in as a new anonymous user.
    @discardableResult
    public func signInAnonymously() async throws -> AuthResult {
        let answer: SignInResponse = try await api.post("accounts:signUp", ["returnSecureToken": .bool(true)])
        return try await signIn(answer, providerId: "anonymous", isNewUser: true, isAnonymous: true)
    }

    /// Signs in with a custom token your backend minted with a service account.
    @discardableResult
    public func signIn(withCustomToken token: String) async throws -> AuthResult {
        let answer: SignInResponse = try await api.post(
            "accounts:signInWithCustomToken", ["token": .string(token), "returnSecureToken": .bool(true)])
        return try await signIn(answer, providerId: "custom", isNewUser: answer.isNewUser ?? false)
    }

    /// Signs the current user out of this instance and forgets the persisted one. The
    /// `User` stays usable on its own.
    public func signOut() async {
        await untilInitialized()
        await setCurrent(nil)
    }

    // MARK: Email actions

    /// Sends a password-reset link to `email` (under the tenant's email privacy, the
    /// answer does not tell whether the account exists).
    public func sendPasswordReset(email: String) async throws {
        let _: EmailActionResponse = try await api.post(
            "accounts:sendOobCode", ["requestType": .string("PASSWORD_RESET"), "email": .string(email)])
    }

    /// Sets a new password with the code of a reset link; every session of the user ends.
    public func confirmPasswordReset(code: String, newPassword: String) async throws {
        let _: EmailActionResponse = try await api.post(
            "accounts:resetPassword", ["oobCode": .string(code), "newPassword": .string(newPassword)])
    }

    /// Applies the code of an email-verification or email-change link.
    public func applyActionCode(_ code: String) async throws {
        let _: EmptyResponse = try await api.post("accounts:update", ["oobCode": .string(code)])
    }

    // MARK: The current user

    private func signIn(
        _ answer: SignInResponse, providerId: String, isNewUser: Bool, isAnonymous: Bool = false
    ) async throws
        -> AuthResult
    {
        guard let idToken = answer.idToken, let refreshToken = answer.refreshToken, let expiresIn = answer.expiresIn else {
            throw AuthClientError(.internalError, detail: "the sign-in answer carries no tokens")
        }
        var tokens = User.Tokens(
            idToken: idToken, refreshToken: refreshToken, expirationDate: Date().addingTimeInterval(TimeInterval(expiresIn.value)),
            receivedDate: Date())
        // The sign-in answers carry a part of the profile; the account resource all of it.
        let record: UserRecord
        do {
            record = try await api.lookup(idToken: idToken)
        } catch let error as AuthClientError where error.code == .userTokenExpired {
            // The token was minted when the request started: a tenant with a very short
            // lifetime and a slow password hash can see it expire on the way. Refresh once.
            let fresh = try await api.refresh(refreshToken)
            tokens = User.Tokens(
                idToken: fresh.idToken, refreshToken: fresh.refreshToken,
                expirationDate: Date().addingTimeInterval(TimeInterval(fresh.expiresIn.value)), receivedDate: Date())
            record = try await api.lookup(idToken: fresh.idToken)
        }
        let user = User(tokens: tokens, profile: record.profile(isAnonymous: isAnonymous), api: api)
        await untilInitialized()
        await setCurrent(user)
        return AuthResult(user: user, isNewUser: isNewUser, providerId: providerId, rawUserInfo: answer.rawUserInfo)
    }

    /// Takes up what another process (or another `Auth` on the same store) kept since this
    /// instance last read or wrote it: a sign-out there signs this instance out, another
    /// user or newer tokens there become its own, and the listeners hear it. Firebase's web
    /// SDK does the same between tabs on `storage` events; a store has no such events, so a
    /// caller that runs for long (`portcullis-client watch`) calls this now and then.
    public func syncWithPersistence() async {
        await untilInitialized()
        await lastWrite?.value
        let persisted = try? await configuration.persistence.load(key: configuration.persistenceKey)
        guard persisted != current?.persisted else { return }
        current?.owner = nil
        current = persisted.map(user(from:))
        notify(tokenChanged: true)
    }

    private func restore() async {
        if let persisted = try? await configuration.persistence.load(key: configuration.persistenceKey) {
            current = user(from: persisted)
        }
        initialized = true
        for waiting in waitingForInitialization { waiting.resume() }
        waitingForInitialization = []
        notify(tokenChanged: true)
    }

    /// A user from what a store kept, owned by this instance.
    private func user(from persisted: PersistedUser) -> User {
        let tokens = User.Tokens(
            idToken: persisted.idToken, refreshToken: persisted.refreshToken, expirationDate: persisted.expirationDate,
            // The lifetime is not persisted; the token's own claims say it.
            receivedDate: (try? IDTokenResult(token: persisted.idToken).issuedAtDate) ?? persisted.expirationDate)
        let user = User(tokens: tokens, profile: persisted.profile, api: api)
        user.owner = self
        return user
    }

    private func untilInitialized() async {
        if initialized { return }
        await withCheckedContinuation { waitingForInitialization.append($0) }
    }

    private func setCurrent(_ user: User?) async {
        current?.owner = nil
        current = user
        user?.owner = self
        await persist()
        notify(tokenChanged: true)
    }

    /// Writes the current user (or its absence) to the store, after every earlier write,
    /// reading the state when its turn comes: the store never ends on an older refresh
    /// token than the newest (which a restart would present as a replay).
    private func persist() async {
        let previous = lastWrite
        let write = Task {
            await previous?.value
            let user = self.current?.persisted
            let (store, key) = (configuration.persistence, configuration.persistenceKey)
            // A store that cannot be written leaves the session in memory: the sign-in
            // worked, only the next run will not find it.
            if let user { try? await store.save(user, key: key) } else { try? await store.remove(key: key) }
        }
        lastWrite = write
        await write.value
    }

    // MARK: What users report

    func userTokensChanged(_ user: User) async {
        guard user === current else { return }
        await persist()
        notify(tokenChanged: true)
    }

    func userProfileChanged(_ user: User) async {
        guard user === current else { return }
        await persist()
    }

    func userSessionEnded(_ user: User) async {
        guard user === current else { return }
        await setCurrent(nil)
    }

    // MARK: Listeners

    private enum Kind {
        case authState, idToken
    }

    private struct Listeners {
        var authState: [UUID: AsyncStream<User?>.Continuation] = [:]
        var idToken: [UUID: AsyncStream<User?>.Continuation] = [:]
        var isEmpty: Bool { authState.isEmpty && idToken.isEmpty }
    }

    private func subscribe(_ kind: Kind) -> AsyncStream<User?> {
        let (stream, continuation) = AsyncStream.makeStream(of: User?.self, bufferingPolicy: .unbounded)
        let id = UUID()
        switch kind {
        case .authState: listeners.authState[id] = continuation
        case .idToken: listeners.idToken[id] = continuation
        }
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        // Before initialisation the first state is not known yet: `restore` reports it.
        if initialized { continuation.yield(current) }
        scheduleProactiveRefresh()
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        listeners.authState[id] = nil
        listeners.idToken[id] = nil
        scheduleProactiveRefresh()
    }

    /// Tells the ID-token listeners (when `tokenChanged`), and the auth-state listeners
    /// when the signed-in uid differs from the one they last heard.
    private func notify(tokenChanged: Bool) {
        if tokenChanged { for listener in listeners.idToken.values { listener.yield(current) } }
        let uid = current?.uid
        if lastNotifiedUid != .some(uid) {
            lastNotifiedUid = .some(uid)
            for listener in listeners.authState.values { listener.yield(current) }
        }
        scheduleProactiveRefresh()
    }

    /// While anyone listens and a user is signed in, refreshes its token before it
    /// expires, so listeners hear of every new token and the app always holds a valid one.
    private func scheduleProactiveRefresh() {
        proactiveRefresh?.cancel()
        proactiveRefresh = nil
        guard let user = current, !listeners.isEmpty else { return }
        proactiveRefresh = Task {
            var failures = 0
            while !Task.isCancelled {
                let pause = failures == 0 ? user.timeUntilRefresh() : .seconds(min(30, 1 << min(failures, 5)))
                do { try await Task.sleep(for: pause) } catch { return }
                do {
                    _ = try await user.tokens(forceRefresh: false)
                    failures = 0
                } catch let error as AuthClientError where error.endsSession {
                    // The user reported it and was signed out, which ended this task.
                    return
                } catch {
                    failures += 1
                }
            }
        }
    }
}
