import PortcullisAuth
import PortcullisCore
import PortcullisJSON
import PortcullisOutbound
import PortcullisTestSupport
import Testing

/// Federated credentials verified against a real identity provider on loopback (keys,
/// claims, nonce, user-info, the JWKS cache's rules, and the outbound limits).
@Suite("IdP token verifier")
struct IdPTokenVerifierTests {
    static let loopback = [IPNetwork("127.0.0.0/8")].compactMap { $0 }

    /// A verifier with a fresh cache, reaching loopback unless `allowed` says otherwise.
    struct Rig {
        let clock = ManualClock()
        let keys: JWKSCache
        let verifier: IdPTokenVerifier

        /// A generous deadline by default: a parallel debug run on two cores is slow; the
        /// hanging-provider test sets the daemon's own 5 s.
        init(allowed: [IPNetwork] = IdPTokenVerifierTests.loopback, deadline: Duration = .seconds(30)) {
            let client = OutboundHTTPClient(
                configuration: .init(policy: OutboundPolicy(allowedPrivateNetworks: allowed), deadline: deadline))
            keys = JWKSCache(client: client, clock: clock)
            verifier = IdPTokenVerifier(client: client, keys: keys, clock: clock)
        }
    }

    static func provider(_ idp: FakeIdentityProvider, id: String = "oidc.fake", jwks: String? = nil) -> IdentityProvider {
        IdentityProvider(
            providerId: id, clientId: "another-client", clientIds: [idp.audience], issuer: idp.issuer,
            jwksURI: jwks ?? idp.jwksURL, userInfoURI: idp.userInfoURL)
    }

    static func credential(_ idToken: String, nonce: String? = nil, provider: String = "oidc.fake") -> FederatedCredential {
        FederatedCredential(providerId: provider, idToken: idToken, nonce: nonce)
    }

    /// The AuthError `operation` throws.
    static func error(_ operation: () async throws -> FederatedIdentity) async -> AuthError? {
        do {
            let identity = try await operation()
            Issue.record("expected an error, got \(identity.federatedId)")
            return nil
        } catch let error as AuthError {
            return error
        } catch {
            Issue.record("not an AuthError: \(error)")
            return nil
        }
    }

    /// Expects INVALID_IDP_RESPONSE whose detail contains `fragment`.
    static func expectInvalid(_ error: AuthError?, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .invalidIdpResponse, sourceLocation: sourceLocation)
        #expect(error?.detail?.contains(fragment) == true, "\(String(describing: error?.detail))", sourceLocation: sourceLocation)
    }

    // MARK: ID tokens

    @Test("a valid ID token gives the identity: sub, lower-cased email, the email_verified claim, profile, raw claims")
    func validToken() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let token = idp.idToken(
                sub: "idp-user-7", email: "Mixed.Case@Example.COM", emailVerified: .string("true"), name: "Ada",
                picture: "https://example.com/ada.png")
            let identity = try await rig.verifier.verify(Self.credential(token), with: Self.provider(idp))
            #expect(identity.providerId == "oidc.fake")
            #expect(identity.federatedId == "idp-user-7")
            #expect(identity.email == "mixed.case@example.com")
            #expect(identity.emailVerifiedClaim == true)
            #expect(identity.displayName == "Ada")
            #expect(identity.photoURL == "https://example.com/ada.png")
            guard case .object(let raw) = identity.rawUserInfo else {
                Issue.record("rawUserInfo is not an object")
                return
            }
            #expect(raw["sub"] == .string("idp-user-7") && raw["iss"] == .string(idp.issuer))

            let unverified = try await rig.verifier.verify(
                Self.credential(idp.idToken(emailVerified: .bool(false))), with: Self.provider(idp))
            #expect(unverified.emailVerifiedClaim == false)
            let silent = try await rig.verifier.verify(
                Self.credential(idp.idToken(email: nil, emailVerified: nil, name: nil)), with: Self.provider(idp))
            #expect(silent.email == nil && silent.emailVerifiedClaim == nil && silent.displayName == nil)
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test("aud may be an array naming one of the client ids; other audiences are refused")
    func audience() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            let listed = idp.idToken(audience: .array([.string("someone-else"), .string("another-client")]))
            let identity = try await rig.verifier.verify(Self.credential(listed), with: provider)
            #expect(identity.federatedId == "federated-user-1")
            for audience: JSONValue in [.string("someone-else"), .array([.string("x")]), .array([]), .integer(1)] {
                let error = await Self.error {
                    try await rig.verifier.verify(Self.credential(idp.idToken(audience: audience)), with: provider)
                }
                Self.expectInvalid(error, "aud")
            }
        }
    }

    @Test("a token from another issuer is refused")
    func wrongIssuer() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let token = idp.idToken(issuer: "https://accounts.google.com")
            let error = await Self.error { try await rig.verifier.verify(Self.credential(token), with: Self.provider(idp)) }
            Self.expectInvalid(error, "issuer")
        }
    }

    @Test("a bad signature, or claims changed after signing, are refused")
    func badSignature() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let token = idp.idToken(sub: "victim")
            let other = idp.idToken(sub: "attacker")
            // The attacker's claims under the victim's signature.
            let spliced =
                other.split(separator: ".").prefix(2).joined(separator: ".") + "."
                + (token.split(separator: ".").last.map(String.init) ?? "")
            let error = await Self.error { try await rig.verifier.verify(Self.credential(spliced), with: Self.provider(idp)) }
            Self.expectInvalid(error, "signature")
            let garbage = await Self.error { try await rig.verifier.verify(Self.credential("not.a.jwt"), with: Self.provider(idp)) }
            Self.expectInvalid(garbage, "not a compact JWS")
        }
    }

    @Test("expiry and issue time are judged with 60 s of skew")
    func times() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            let now = rig.clock.now()
            let expired = idp.idToken(expiresIn: 3600, issuedAt: now.adding(seconds: -3661))
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(expired), with: provider) }, "expired")
            let justExpired = idp.idToken(expiresIn: 3600, issuedAt: now.adding(seconds: -3630))
            _ = try await rig.verifier.verify(Self.credential(justExpired), with: provider)
            let future = idp.idToken(issuedAt: now.adding(seconds: 120))
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(future), with: provider) }, "future")
            let slightlyAhead = idp.idToken(issuedAt: now.adding(seconds: 50))
            _ = try await rig.verifier.verify(Self.credential(slightlyAhead), with: provider)
            let notYet = idp.idToken(extraClaims: ["nbf": .integer(now.seconds + 300)])
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(notYet), with: provider) }, "nbf")
            let noExpiry = idp.idToken(extraClaims: ["exp": .string("never")])
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(noExpiry), with: provider) }, "exp")
        }
    }

    @Test("alg none and HS256 keyed with the provider's public key are refused")
    func algorithmConfusion() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            let claims = FakeIdentityProvider.claims(of: idp.idToken())
            let none = FakeIdentityProvider.rawToken(
                header: ["alg": .string("none"), "kid": .string(idp.currentKid)], claims: claims, signature: [])
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(none), with: provider) }, "algorithm")
            let hs256 = FakeIdentityProvider.hs256Token(claims: claims, kid: idp.currentKid, secret: idp.publicKeyPEM)
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(hs256), with: provider) }, "algorithm")
            // Neither got as far as fetching keys.
            #expect(idp.jwksFetches == 0)
        }
    }

    @Test("a sub is required")
    func subject() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let token = idp.idToken(sub: "")
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(token), with: Self.provider(idp)) }, "sub")
        }
    }
}
