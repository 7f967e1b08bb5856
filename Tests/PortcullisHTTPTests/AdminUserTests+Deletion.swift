import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

/// `accounts:delete` and `accounts:batchDelete`.
extension AdminUserTests {
    @Test("delete and batchDelete: USER_NOT_FOUND, force, per-id NOT_DISABLED errors, LOCAL_ID_LIST_EXCEEDS_LIMIT")
    func deletion() async throws {
        try await Self.forEachScope { gateway, tenant in
            let gone = try await gateway.createUser(#"{"email":"gone@example.com","password":"secret12"}"#, tenant: tenant)
            let session = try await gateway.signIn("gone@example.com", "secret12", tenant: tenant)
            let deleted = try await gateway.admin(":delete", tenant: tenant, #"{"localId":"\#(gone)"}"#)
            #expect(deleted.status == .ok)
            #expect(try deleted.json().string(at: ["kind"]) == "identitytoolkit#DeleteAccountResponse")
            #expect(try await gateway.refresh(session.refreshToken).status == .badRequest, "its sessions are gone")
            try await gateway.admin(":delete", tenant: tenant, #"{"localId":"\#(gone)"}"#).expectEnvelope(.badRequest, "USER_NOT_FOUND")
            try await gateway.admin(":delete", tenant: tenant, "{}").expectEnvelope(.badRequest, "MISSING_LOCAL_ID")

            let live = try await gateway.createUser(#"{"localId":"live","email":"live@example.com","password":"secret12"}"#, tenant: tenant)
            let liveSession = try await gateway.signIn("live@example.com", "secret12", tenant: tenant)
            let off = try await gateway.createUser(#"{"localId":"off","disabled":true}"#, tenant: tenant)
            let other = try await gateway.createUser(#"{"localId":"other"}"#, tenant: tenant)
            let refused = try await gateway.admin(
                ":batchDelete", tenant: tenant, #"{"localIds":["\#(live)","\#(off)","ghost","\#(live)","\#(other)"]}"#)
            #expect(refused.status == .ok, "\(String(buffer: refused.body))")
            let errors = try refused.json().list(at: ["errors"])
            #expect(errors.count == 2)
            #expect(errors.first?.value(at: ["index"]) == 0 && errors.first?.string(at: ["localId"]) == live)
            #expect(errors.last?.value(at: ["index"]) == 4 && errors.last?.string(at: ["localId"]) == other)
            #expect(errors.allSatisfy { $0.string(at: ["message"])?.hasPrefix("NOT_DISABLED") == true })
            #expect(try await gateway.adminUser(off, tenant: tenant) == nil)
            #expect(try await gateway.adminUser(live, tenant: tenant) != nil)
            #expect(try await gateway.adminUser(other, tenant: tenant) != nil)
            #expect(try await gateway.refresh(liveSession.refreshToken).status == .ok, "a kept user keeps its sessions")

            // What firebase-admin's delete_users sends.
            let forced = try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":["\#(live)","\#(other)"],"force":true}"#)
            #expect(forced.status == .ok)
            #expect(try forced.json().value(at: ["errors"]) == nil)
            #expect(try await gateway.adminUser(live, tenant: tenant) == nil)
            #expect(try await gateway.adminUser(other, tenant: tenant) == nil)

            let ids = (0...1000).map { "\"u\($0)\"" }.joined(separator: ",")
            try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":[\#(ids)],"force":true}"#)
                .expectEnvelope(.badRequest, "LOCAL_ID_LIST_EXCEEDS_LIMIT")
            try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":[]}"#)
                .expectEnvelope(.badRequest, "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        }
    }
}
