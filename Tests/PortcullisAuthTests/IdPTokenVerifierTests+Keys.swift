import PortcullisAuth
import PortcullisCore
import PortcullisOutbound
import PortcullisTestSupport
import Testing

/// The JWKS cache's rules: unknown kids, rotation, single flight, and how long a key set is kept.
extension IdPTokenVerifierTests {
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
}
