import PortcullisCore
import PortcullisJSON
import Testing

@testable import PortcullisHTTP

@Suite("Update masks")
struct FieldMaskTests {
    let current: JSONValue = .object([
        "displayName": .string("old"),
        "allowPasswordSignup": .bool(true),
        "client": .object([
            "permissions": .object([
                "disabledUserSignup": .bool(false), "disabledUserDeletion": .bool(true),
            ])
        ]),
    ])

    @Test("only the masked paths change")
    func masked() throws {
        let mask = try FieldMask(parsing: "client.permissions.disabledUserSignup", schema: TenantResource.schema(for: .tenant))
        let patch: JSONValue = .object([
            "displayName": .string("new"),
            "client": .object(["permissions": .object(["disabledUserSignup": .bool(true)])]),
        ])
        let merged = mask.apply(patch, to: current)
        #expect(merged.value(at: ["displayName"]) == .string("old"))
        #expect(merged.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(true))
        #expect(merged.value(at: ["client", "permissions", "disabledUserDeletion"]) == .bool(true))
        #expect(merged.value(at: ["allowPasswordSignup"]) == .bool(true))
    }

    @Test("a masked object is replaced whole; a masked field absent from the body is reset")
    func objectReplacement() throws {
        let mask = try FieldMask(parsing: "client.permissions,allowPasswordSignup", schema: TenantResource.schema(for: .tenant))
        let patch: JSONValue = .object(["client": .object(["permissions": .object(["disabledUserSignup": .bool(true)])])])
        let settings = try JSONValueDecoder().decode(TenantSettings.self, from: mask.apply(patch, to: current))
        #expect(settings.permissions == .init(disabledUserSignup: true, disabledUserDeletion: false))
        #expect(!settings.allowPasswordSignup)
        #expect(settings.displayName == "old")
    }

    @Test("an empty mask replaces the whole resource")
    func empty() throws {
        let mask = try FieldMask(parsing: "", schema: TenantResource.schema(for: .tenant))
        #expect(mask.isEmpty)
        let settings = try JSONValueDecoder().decode(
            TenantSettings.self, from: mask.apply(.object(["enableAnonymousUser": .bool(true)]), to: current))
        #expect(settings.enableAnonymousUser)
        #expect(!settings.allowPasswordSignup)
        #expect(settings.displayName == nil)
    }

    @Test(
        "snake_case paths are accepted; unknown paths are INVALID_ARGUMENT",
        arguments: [
            ("client.permissions.disabled_user_signup", true), ("allow_password_signup,display_name", true),
            ("client.nope", false), ("name", false), ("tenantId", false), ("client..permissions", false),
        ])
    func validation(path: String, valid: Bool) {
        if valid {
            #expect(throws: Never.self) { try FieldMask(parsing: path, schema: TenantResource.schema(for: .tenant)) }
        } else {
            let error = #expect(throws: AuthError.self) { try FieldMask(parsing: path, schema: TenantResource.schema(for: .tenant)) }
            #expect(error?.code == .invalidArgument)
        }
    }
}
