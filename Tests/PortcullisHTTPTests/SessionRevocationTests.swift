import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Synchronization
import Testing

/// Revocation under concurrency: what a credential change or an admin action
/// ends stays ended, whatever races it.
@Suite("Session revocation")
struct SessionRevocationTests {
    static func passwordTenant(_ gateway: TestGateway) async throws -> String {
        try await gateway.createTenant(#"{"displayName":"rev","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
    }

    @Test("signUp with an idToken upgrades only an anonymous user: a password user's token cannot set a new email and password")
    func upgradeOnlyAnonymous() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await Self.passwordTenant(gateway)
            let victim = try await gateway.signUp("victim@example.com", tenant: tenant)
            let takeover = try await gateway.endUser(
                "accounts:signUp",
                ["idToken": .string(victim.idToken), "email": "thief@example.com", "password": "thief's password"],
                tenant: tenant)
            takeover.expectEnvelope(.badRequest, "EMAIL_EXISTS")
            // Nothing changed: the victim's password still works, the thief's does not.
            #expect(try await gateway.signIn("victim@example.com", tenant: tenant).uid == victim.uid)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "thief@example.com", "password": "thief's password"], tenant: tenant
            ).expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")

            // The anonymous upgrade still works and keeps the uid.
            let anonymous = try Session(try await gateway.endUser("accounts:signUp", [:], tenant: tenant).json())
            let upgraded = try Session(
                try await gateway.endUser(
                    "accounts:signUp",
                    ["idToken": .string(anonymous.idToken), "email": "anon@example.com", "password": "correct horse"],
                    tenant: tenant
                ).json())
            #expect(upgraded.uid == anonymous.uid)
            // Once upgraded, the account is no longer anonymous: a second upgrade is refused.
            try await gateway.endUser(
                "accounts:signUp", ["idToken": .string(upgraded.idToken), "email": "again@example.com", "password": "another one"],
                tenant: tenant
            ).expectEnvelope(.badRequest, "EMAIL_EXISTS")
        }
    }

    @Test("a session rotating continuously dies with a password change: no rotation that starts after the change succeeds")
    func rotationRacesPasswordChange() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await Self.passwordTenant(gateway)
            let session = try await gateway.signUp("spinner@example.com", tenant: tenant)
            let changed = Changed()
            let rotated = Changed()
            // The rotating client: each refresh presents the latest token it holds.
            let outcomes = try await withThrowingTaskGroup(of: [(afterChange: Bool, message: String?)].self) { group in
                group.addTask {
                    var token = session.refreshToken
                    var outcomes: [(afterChange: Bool, message: String?)] = []
                    var attemptsAfterChange = 0
                    while attemptsAfterChange < 20 {
                        let afterChange = changed.isSet
                        let response = try await gateway.refresh(token)
                        if response.status == .ok, case .string(let next)? = try response.json().value(at: ["refresh_token"]) {
                            token = next
                            outcomes.append((afterChange, nil))
                            rotated.set()
                        } else {
                            outcomes.append((afterChange, response.errorMessage))
                        }
                        if afterChange { attemptsAfterChange += 1 }
                    }
                    return outcomes
                }
                group.addTask {
                    // The change lands once the session has rotated, however slow the machine.
                    let deadline = ContinuousClock.now + .seconds(30)
                    while !rotated.isSet && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
                    let response = try await gateway.endUser(
                        "accounts:update", ["idToken": .string(session.idToken), "password": "a new secret"], tenant: tenant)
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    changed.set()
                    return []
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let after = outcomes.filter(\.afterChange)
            #expect(after.count == 20)
            #expect(outcomes.contains { !$0.afterChange && $0.message == nil }, "the session rotated before the change")
            #expect(after.allSatisfy { $0.message == "TOKEN_EXPIRED" }, "\(after.map { $0.message ?? "ok" })")
        }
    }

    @Test("sign-ins with the old password racing a password change never leave a live session behind")
    func oldPasswordSignInsRacePasswordChange() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await Self.passwordTenant(gateway)
            for round in 0..<3 {
                let email = "changer\(round)@example.com"
                let owner = try await gateway.signUp(email, tenant: tenant)
                let refreshTokens = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let response = try await gateway.endUser(
                                "accounts:signInWithPassword", ["email": .string(email), "password": "correct horse"], tenant: tenant)
                            guard case .string(let token)? = try? response.json().value(at: ["refreshToken"]) else { return nil }
                            return token
                        }
                    }
                    group.addTask {
                        let response = try await gateway.endUser(
                            "accounts:update", ["idToken": .string(owner.idToken), "password": "a new secret"], tenant: tenant)
                        #expect(response.status == .ok, "\(String(buffer: response.body))")
                        return nil
                    }
                    return try await group.reduce(into: [String]()) { if let token = $1 { $0.append(token) } }
                }
                for token in refreshTokens + [owner.refreshToken] {
                    try await gateway.refresh(token).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
                }
            }
        }
    }

    @Test("concurrent sign-ins that each rehash the password (new scrypt parameters) all succeed")
    func concurrentRehashingSignIns() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"rehash","allowPasswordSignup":true,"scryptParameters":{"logN":10,"r":4,"p":1}}"#)
            let session = try await gateway.signUp("rehash@example.com", tenant: tenant)
            try await gateway.patchTenant(tenant, mask: "scryptParameters", #"{"scryptParameters":{"logN":11}}"#)
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        let response = try await gateway.endUser(
                            "accounts:signInWithPassword", ["email": "rehash@example.com", "password": "correct horse"], tenant: tenant)
                        return response.errorMessage ?? "ok"
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == "ok" }, "\(statuses)")
            #expect(try await gateway.signIn("rehash@example.com", tenant: tenant).uid == session.uid)
        }
    }

    @Test("a password change racing 50 profile updates keeps its revocation, every time")
    func passwordChangeRacesProfileUpdates() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await Self.passwordTenant(gateway)
            for round in 0..<5 {
                let email = "racer\(round)@example.com"
                let session = try await gateway.signUp(email, tenant: tenant)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<50 {
                        group.addTask {
                            _ = try await gateway.endUser(
                                "accounts:update", ["idToken": .string(session.idToken), "displayName": .string("name \(index)")],
                                tenant: tenant)
                        }
                    }
                    group.addTask {
                        let response = try await gateway.endUser(
                            "accounts:update", ["idToken": .string(session.idToken), "password": "a new secret"], tenant: tenant)
                        #expect(response.status == .ok, "\(String(buffer: response.body))")
                    }
                    try await group.waitForAll()
                }
                // The session is dead. (Its ID token, issued in the same second as the change, is
                // judged in whole seconds and may live out its hour: DESIGN.md §1.)
                try await gateway.refresh(session.refreshToken).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
                #expect(try await gateway.signIn(email, "a new secret", tenant: tenant).uid == session.uid)
            }
        }
    }

    @Test("an admin disable racing 50 admin profile updates stays: the user is disabled and its sessions are dead, every time")
    func disableRacesAdminUpdates() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await Self.passwordTenant(gateway)
            let accounts = "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts"
            for round in 0..<5 {
                let session = try await gateway.signUp("disabled\(round)@example.com", tenant: tenant)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<50 {
                        group.addTask {
                            try await gateway.send(
                                .post, "\(accounts):update", json: #"{"localId":"\#(session.uid)","displayName":"n\#(index)"}"#)
                        }
                    }
                    group.addTask {
                        let response = try await gateway.send(
                            .post, "\(accounts):update", json: #"{"localId":"\#(session.uid)","disableUser":true}"#)
                        #expect(response.status == .ok, "\(String(buffer: response.body))")
                    }
                    try await group.waitForAll()
                }
                let looked = try await gateway.send(.post, "\(accounts):lookup", json: #"{"localId":["\#(session.uid)"]}"#).json()
                #expect(
                    looked.value(at: ["users"]).flatMap { if case .array(let u) = $0 { u.first } else { nil } }?
                        .value(at: ["disabled"]) == .bool(true))
                let refreshed = try await gateway.refresh(session.refreshToken)
                #expect(refreshed.status == .badRequest)
                #expect(["TOKEN_EXPIRED", "USER_DISABLED"].contains(refreshed.errorMessage ?? ""), "\(refreshed.errorMessage ?? "ok")")
            }
        }
    }
}

/// A flag one task sets and another reads.
final class Changed: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
