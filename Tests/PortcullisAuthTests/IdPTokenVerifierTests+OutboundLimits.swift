import PortcullisAuth
import PortcullisCore
import PortcullisOutbound
import PortcullisTestSupport
import Testing

/// The outbound limits: the deadline, the network policy, and key endpoints that misbehave.
extension IdPTokenVerifierTests {
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
            #expect(clock.now - start < .seconds(15))
            Self.expectInvalid(error, "oidc.fake's keys could not be fetched: 127.0.0.1 did not answer in time")
        }
    }

    @Test("the network policy: loopback is refused unless allowed, and the refusal never names the address's kind")
    func networkPolicy() async throws {
        try await FakeIdentityProvider.run { idp in
            let refused = await Self.error {
                try await Rig(allowed: []).verifier.verify(Self.credential(idp.idToken()), with: Self.provider(idp))
            }
            Self.expectInvalid(refused, "oidc.fake's keys could not be fetched: 127.0.0.1 is not an allowed destination")
            // A tenant admin must not learn what the host resolved to (internal DNS).
            #expect(refused?.detail?.contains("loopback") == false)
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
