import Foundation
import PortcullisCore
import Testing

@Suite("Self-service policy")
struct SelfServicePolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var signUpDisabled = false
        var passwordAllowed = true
        var anonymousAllowed = true
        var authDisabled = false
        let method: SignUpMethod
        let expected: AuthError.Code?
        var testDescription: String { "\(method) → \(expected?.rawValue ?? "allowed")" }
    }

    @Test("sign-up decisions", arguments: [
        Case(method: .password, expected: nil),
        Case(method: .anonymous, expected: nil),
        Case(method: .federated, expected: nil),
        Case(signUpDisabled: true, method: .password, expected: .adminOnlyOperation),
        Case(signUpDisabled: true, method: .anonymous, expected: .adminOnlyOperation),
        Case(signUpDisabled: true, method: .federated, expected: .adminOnlyOperation),
        Case(passwordAllowed: false, method: .password, expected: .operationNotAllowed),
        Case(anonymousAllowed: false, method: .anonymous, expected: .adminOnlyOperation),
        Case(passwordAllowed: false, method: .federated, expected: nil),
        Case(authDisabled: true, method: .password, expected: .projectDisabled),
        Case(signUpDisabled: true, authDisabled: true, method: .anonymous, expected: .projectDisabled),
    ])
    func signUp(_ test: Case) {
        var settings = TenantSettings()
        settings.permissions.disabledUserSignup = test.signUpDisabled
        settings.allowPasswordSignup = test.passwordAllowed
        settings.enableAnonymousUser = test.anonymousAllowed
        settings.disableAuth = test.authDisabled
        let policy = SelfServicePolicy(settings: settings)
        if let expected = test.expected {
            let error = #expect(throws: AuthError.self) { try policy.authorizeSignUp(test.method) }
            #expect(error?.code == expected)
        } else {
            #expect(throws: Never.self) { try policy.authorizeSignUp(test.method) }
        }
    }

    @Test("self-deletion is ADMIN_ONLY_OPERATION only when disabledUserDeletion is on")
    func deletion() {
        var settings = TenantSettings()
        #expect(throws: Never.self) { try SelfServicePolicy(settings: settings).authorizeSelfDeletion() }
        settings.permissions.disabledUserDeletion = true
        let error = #expect(throws: AuthError.self) { try SelfServicePolicy(settings: settings).authorizeSelfDeletion() }
        #expect(error?.code == .adminOnlyOperation)
        #expect(error?.message == "ADMIN_ONLY_OPERATION")
        settings.permissions.disabledUserSignup = false
        #expect(SelfServicePolicy(settings: settings).allowsSelfSignUp)
        #expect(!SelfServicePolicy(settings: settings).allowsSelfDeletion)
    }
}

@Suite("Admin scope")
struct AdminAccessTests {
    @Test("a project key covers everything, a tenant key only its tenant", arguments: [
        (AdminScope.project, AdminTarget.project, true),
        (AdminScope.project, AdminTarget.tenant("a"), true),
        (AdminScope.tenant("a"), AdminTarget.tenant("a"), true),
        (AdminScope.tenant("a"), AdminTarget.tenant("b"), false),
        (AdminScope.tenant("a"), AdminTarget.project, false),
        (AdminScope.tenant("a"), AdminTarget.tenant("A"), false),
    ])
    func authorize(scope: AdminScope, target: AdminTarget, allowed: Bool) {
        let principal = AdminPrincipal(keyId: "k", scope: scope)
        if allowed {
            #expect(throws: Never.self) { try principal.authorize(target) }
        } else {
            let error = #expect(throws: AuthError.self) { try principal.authorize(target) }
            #expect(error?.code == .permissionDenied)
            #expect(error?.code.httpStatus == 403)
        }
    }
}

@Suite("Tenant ids and error messages")
struct TenantIDTests {
    @Test("generated ids are valid, slugged from the display name, and distinct")
    func generate() {
        let ids = (0..<200).map { _ in TenantID.generate(displayName: "Acme Corp!") }
        #expect(ids.allSatisfy { $0.hasPrefix("acme-corp-") && TenantID.isValid($0) })
        #expect(Set(ids).count > 190)
        #expect(TenantID.generate(displayName: nil).hasPrefix("tenant-"))
        #expect(TenantID.generate(displayName: "!!!").hasPrefix("tenant-"))
    }

    @Test("ids with anything but letters, digits and hyphens are invalid", arguments: [
        "", "a b", "a'b", "a;b", "a\u{0}b", "é", String(repeating: "a", count: 129), "../x",
    ])
    func invalid(id: String) {
        #expect(!TenantID.isValid(id))
    }

    @Test("a detail follows the code as CODE : detail")
    func message() {
        #expect(AuthError(.invalidArgument, detail: "x").message == "INVALID_ARGUMENT : x")
        #expect(AuthError(.tenantNotFound).message == "TENANT_NOT_FOUND")
        #expect(AuthError(.tenantNotFound).code.httpStatus == 404)
        #expect(AuthError(.tenantNotFound).code.rpcStatus == "NOT_FOUND")
        #expect(AuthError(.adminOnlyOperation).code.httpStatus == 400)
        #expect(AuthError(.adminOnlyOperation).code.rpcStatus == nil)
    }
}

@Suite("Provider links")
struct ProviderLinkTests {
    @Test("the password link follows email and password; identities list the email and federated ids")
    func links() {
        var user = User(tenantId: nil, uid: "u", createdAt: .distantPast)
        user.syncPasswordLink()
        #expect(user.providers.isEmpty && user.isAnonymous && user.identities.isEmpty)
        user.email = "a@example.com"
        user.syncPasswordLink()
        #expect(user.providers.isEmpty && !user.isAnonymous)  // an email alone links nothing
        user.hasPassword = true
        user.providers.append(ProviderLink(providerId: "google.com", federatedId: "g-1", email: "a@example.com"))
        user.syncPasswordLink()
        #expect(user.providers.map(\.providerId) == ["google.com", "password"])
        #expect(user.providerIds == ["google.com", "password"])
        #expect(user.identities == ["email": ["a@example.com"], "google.com": ["g-1"]])
        user.email = "b@example.com"
        user.syncPasswordLink()
        #expect(user.providers.filter { $0.providerId == "password" }.map(\.federatedId) == ["b@example.com"])
    }
}
