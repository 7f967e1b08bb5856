import PortcullisAuth
import PortcullisCore
import PortcullisJSON
import PortcullisOutbound
import PortcullisTestSupport
import Testing

/// The nonce, Microsoft's per-directory issuers, and misconfigured providers.
extension IdPTokenVerifierTests {
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
}
