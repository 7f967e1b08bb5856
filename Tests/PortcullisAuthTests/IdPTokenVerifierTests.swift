import PortcullisAuth
import PortcullisCore
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

    // MARK: Keys

    @Test("an unknown kid refetches the JWKS once, then is refused; another unknown kid within 30 s does not refetch")
    func unknownKid() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            #expect(idp.jwksFetches == 1)
            rig.clock.advance(seconds: 31)
            let forged = idp.idTokenSignedWithUnpublishedKey(kid: "forged-1")
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(forged), with: provider) }, "unknown key")
            #expect(idp.jwksFetches == 2)
            let again = idp.idTokenSignedWithUnpublishedKey(kid: "forged-2")
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(again), with: provider) }, "unknown key")
            #expect(idp.jwksFetches == 2)
            // A known kid with the wrong key is a bad signature, and never a refetch.
            let wrongKey = idp.idTokenSignedWithUnpublishedKey(kid: idp.currentKid)
            Self.expectInvalid(await Self.error { try await rig.verifier.verify(Self.credential(wrongKey), with: provider) }, "signature")
            #expect(idp.jwksFetches == 2)
        }
    }

    @Test("the unknown-kid refetch is rate-limited while the provider fails, too")
    func unknownKidWhileFailing() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            idp.jwksFailing = true
            rig.clock.advance(seconds: 31)
            let forged = idp.idTokenSignedWithUnpublishedKey(kid: "forged-1")
            Self.expectInvalid(
                await Self.error { try await rig.verifier.verify(Self.credential(forged), with: provider) },
                "oidc.fake's keys could not be fetched: 127.0.0.1 answered with status 503")
            #expect(idp.jwksFetches == 2)
            for kid in ["forged-2", "forged-3"] {
                let again = idp.idTokenSignedWithUnpublishedKey(kid: kid)
                Self.expectInvalid(
                    await Self.error { try await rig.verifier.verify(Self.credential(again), with: provider) }, "unknown key")
            }
            #expect(idp.jwksFetches == 2)
            // Tokens with known keys still verify from the cached set.
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            #expect(idp.jwksFetches == 2)
        }
    }

    @Test("a key the provider rotated in is picked up by the refetch its first token prompts")
    func rotation() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            idp.jwksMaxAge = 3600
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            idp.rotateKey(retireOld: true)
            rig.clock.advance(seconds: 31)
            let identity = try await rig.verifier.verify(Self.credential(idp.idToken(sub: "after-rotation")), with: provider)
            #expect(identity.federatedId == "after-rotation")
            #expect(idp.jwksFetches == 2)
        }
    }

    @Test("concurrent verifications against a cold cache share one JWKS fetch")
    func singleFlight() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            idp.jwksDelay = .milliseconds(300)
            let tokens = (0..<12).map { idp.idToken(sub: "user-\($0)") }
            let subjects = try await withThrowingTaskGroup(of: String.self) { group in
                for token in tokens {
                    group.addTask { try await rig.verifier.verify(Self.credential(token), with: provider).federatedId }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(subjects.count == 12)
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test(
        "the key set is kept for its max-age, bounded below by 60 s; 1 h without one",
        arguments: [(120, 120), (5, 60), (nil, 3600)] as [(Int?, Int64)])
    func cacheControl(maxAge: Int?, lifetime: Int64) async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            idp.jwksMaxAge = maxAge
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            rig.clock.advance(seconds: lifetime - 1)
            _ = try await rig.verifier.verify(Self.credential(idp.idToken(issuedAt: rig.clock.now())), with: provider)
            #expect(idp.jwksFetches == 1)
            rig.clock.advance(seconds: 1)
            _ = try await rig.verifier.verify(Self.credential(idp.idToken(issuedAt: rig.clock.now())), with: provider)
            #expect(idp.jwksFetches == 2)
        }
    }

    @Test("a max-age over a day is kept for a day")
    func cacheControlCeiling() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            idp.jwksMaxAge = 30 * 86_400
            _ = try await rig.verifier.verify(Self.credential(idp.idToken()), with: provider)
            rig.clock.advance(seconds: 86_400)
            _ = try await rig.verifier.verify(Self.credential(idp.idToken(issuedAt: rig.clock.now())), with: provider)
            #expect(idp.jwksFetches == 2)
        }
    }

    // MARK: Nonce

    @Test("the nonce: the token must carry the SHA-256 hex of the raw nonce sent; anything else is MISSING_OR_INVALID_NONCE")
    func nonce() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = Self.provider(idp)
            let raw = "n-0S6_WzA2Mj"
            let hashed = idp.idToken(nonce: FakeIdentityProvider.sha256Hex(raw))
            _ = try await rig.verifier.verify(Self.credential(hashed, nonce: raw), with: provider)
            let upperHex = idp.idToken(nonce: FakeIdentityProvider.sha256Hex(raw).uppercased())
            _ = try await rig.verifier.verify(Self.credential(upperHex, nonce: raw), with: provider)
            // A token carrying the nonce itself would pass for anyone who copies its claim back.
            let echoed = await Self.error {
                try await rig.verifier.verify(Self.credential(idp.idToken(nonce: raw), nonce: raw), with: provider)
            }
            #expect(echoed?.code == .missingOrInvalidNonce)
            let mismatch = await Self.error { try await rig.verifier.verify(Self.credential(hashed, nonce: "other"), with: provider) }
            #expect(mismatch?.code == .missingOrInvalidNonce)
            #expect(mismatch?.message.contains("does not match the SHA256 hash") == true)
            // Sending the token's own (hashed) claim back is not knowing the raw nonce.
            let hashAsRaw = await Self.error {
                try await rig.verifier.verify(Self.credential(hashed, nonce: FakeIdentityProvider.sha256Hex(raw)), with: provider)
            }
            #expect(hashAsRaw?.code == .missingOrInvalidNonce)
            let missing = await Self.error { try await rig.verifier.verify(Self.credential(hashed), with: provider) }
            #expect(missing?.code == .missingOrInvalidNonce)
            #expect(missing?.message == "MISSING_OR_INVALID_NONCE : Nonce is missing in the request.")
            let absentInToken = await Self.error {
                try await rig.verifier.verify(Self.credential(idp.idToken(), nonce: raw), with: provider)
            }
            #expect(absentInToken?.code == .missingOrInvalidNonce)
        }
    }

    // MARK: Issuers

    @Test("microsoft.com without a configured issuer accepts its directory's issuer for the token's own tid")
    func microsoftTenantIssuer() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let provider = IdentityProvider(providerId: "microsoft.com", clientId: idp.audience, jwksURI: idp.jwksURL)
            let tid = "9188040d-6c67-4c5b-b112-36a304b66dad"
            let good = idp.idToken(issuer: "https://login.microsoftonline.com/\(tid)/v2.0", extraClaims: ["tid": .string(tid)])
            _ = try await rig.verifier.verify(Self.credential(good, provider: "microsoft.com"), with: provider)
            let otherDirectory = idp.idToken(
                issuer: "https://login.microsoftonline.com/\(tid)/v2.0", extraClaims: ["tid": .string("another-tenant")])
            Self.expectInvalid(
                await Self.error {
                    try await rig.verifier.verify(Self.credential(otherDirectory, provider: "microsoft.com"), with: provider)
                },
                "issuer")
            let noTid = idp.idToken(issuer: "https://login.microsoftonline.com/\(tid)/v2.0")
            Self.expectInvalid(
                await Self.error { try await rig.verifier.verify(Self.credential(noTid, provider: "microsoft.com"), with: provider) }, "tid"
            )
        }
    }

    @Test("a credential for another provider, an empty credential, or a provider without endpoints is INVALID_IDP_RESPONSE")
    func misconfigured() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            let token = idp.idToken()
            Self.expectInvalid(
                await Self.error {
                    try await rig.verifier.verify(Self.credential(token, provider: "google.com"), with: Self.provider(idp))
                },
                "not oidc.fake")
            Self.expectInvalid(
                await Self.error { try await rig.verifier.verify(FederatedCredential(providerId: "oidc.fake"), with: Self.provider(idp)) },
                "neither an id_token nor an access_token")
            let bare = IdentityProvider(providerId: "oidc.bare", clientId: idp.audience, issuer: idp.issuer)
            Self.expectInvalid(
                await Self.error { try await rig.verifier.verify(Self.credential(token, provider: "oidc.bare"), with: bare) },
                "no JWKS URI")
            Self.expectInvalid(
                await Self.error {
                    try await rig.verifier.verify(FederatedCredential(providerId: "oidc.bare", accessToken: "at"), with: bare)
                }, "no user-info URI")
        }
    }

    // MARK: Access tokens

    @Test("an access token is resolved at the user-info endpoint; a rejected one is INVALID_IDP_RESPONSE")
    func accessToken() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            idp.setUserInfo(
                .object([
                    "sub": .string("oidc-9"), "email": .string("Someone@Example.com"), "email_verified": .string("false"),
                    "name": .string("Some One"), "picture": .string("https://example.com/p.png"),
                ]), forAccessToken: "good-token")
            let identity = try await rig.verifier.verify(
                FederatedCredential(providerId: "oidc.fake", accessToken: "good-token"), with: Self.provider(idp))
            #expect(identity.federatedId == "oidc-9" && identity.email == "someone@example.com")
            #expect(identity.emailVerifiedClaim == false && identity.displayName == "Some One")
            #expect(identity.photoURL == "https://example.com/p.png")
            let rejected = await Self.error {
                try await rig.verifier.verify(
                    FederatedCredential(providerId: "oidc.fake", accessToken: "bad-token"), with: Self.provider(idp))
            }
            Self.expectInvalid(rejected, "user info rejected the access token")
            #expect(rejected?.detail?.contains("bad-token") == false)
        }
    }

    @Test("user-info shapes: GitHub's numeric id and avatar_url, Facebook's picture.data.url, Google's verified_email")
    func userInfoShapes() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            idp.setUserInfo(
                .object(["id": .integer(583231), "login": .string("octocat"), "avatar_url": .string("https://a/o.png"), "email": .null]),
                forAccessToken: "gh")
            let github = IdentityProvider(providerId: "github.com", clientId: "gh-client", userInfoURI: idp.userInfoURL)
            let octocat = try await rig.verifier.verify(FederatedCredential(providerId: "github.com", accessToken: "gh"), with: github)
            #expect(octocat.federatedId == "583231" && octocat.photoURL == "https://a/o.png" && octocat.email == nil)

            idp.setUserInfo(
                .object([
                    "id": .string("10158"), "name": .string("F B"),
                    "picture": .object(["data": .object(["url": .string("https://fb/p.jpg")])]),
                ]), forAccessToken: "fb")
            let facebook = IdentityProvider(providerId: "facebook.com", clientId: "fb-client", userInfoURI: idp.userInfoURL)
            let fbUser = try await rig.verifier.verify(FederatedCredential(providerId: "facebook.com", accessToken: "fb"), with: facebook)
            #expect(fbUser.federatedId == "10158" && fbUser.photoURL == "https://fb/p.jpg")

            idp.setUserInfo(.object(["id": .string("g-1"), "verified_email": .bool(true)]), forAccessToken: "g")
            let google = Self.provider(idp, id: "google.com")
            let googleUser = try await rig.verifier.verify(FederatedCredential(providerId: "google.com", accessToken: "g"), with: google)
            #expect(googleUser.emailVerifiedClaim == true)

            idp.setUserInfo(.object(["name": .string("nobody")]), forAccessToken: "anon")
            Self.expectInvalid(
                await Self.error {
                    try await rig.verifier.verify(
                        FederatedCredential(providerId: "oidc.fake", accessToken: "anon"), with: Self.provider(idp))
                }, "no id")
        }
    }

    // MARK: Outbound limits

    @Test("a JWKS endpoint that never answers fails with INVALID_IDP_RESPONSE within the deadline")
    func hangingProvider() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig(deadline: .seconds(5))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Self.error {
                try await rig.verifier.verify(Self.credential(idp.idToken()), with: Self.provider(idp, jwks: idp.baseURL + "/hang"))
            }
            #expect(clock.now - start < .seconds(8))
            Self.expectInvalid(error, "oidc.fake's keys could not be fetched: 127.0.0.1 did not answer in time")
        }
    }

    @Test("the network policy: loopback is refused unless allowed, and the refusal says why")
    func networkPolicy() async throws {
        try await FakeIdentityProvider.run { idp in
            let refused = await Self.error {
                try await Rig(allowed: []).verifier.verify(Self.credential(idp.idToken()), with: Self.provider(idp))
            }
            Self.expectInvalid(refused, "oidc.fake's keys could not be fetched: 127.0.0.1 is not allowed")
            Self.expectInvalid(refused, "loopback")
            #expect(idp.jwksFetches == 0)
            _ = try await Rig().verifier.verify(Self.credential(idp.idToken()), with: Self.provider(idp))
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test("a JWKS endpoint that redirects, answers too much, or answers something else is refused")
    func badKeyEndpoints() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            for (path, fragment) in [
                ("/redirect", "redirect"), ("/large", "more than 1048576 bytes"), ("/status/404", "status 404"),
                ("/userinfo", "status 401"), ("/.well-known/openid-configuration", "did not answer with a JWKS"),
            ] {
                let error = await Self.error {
                    try await rig.verifier.verify(Self.credential(idp.idToken()), with: Self.provider(idp, jwks: idp.baseURL + path))
                }
                Self.expectInvalid(error, fragment)
            }
        }
    }
}
