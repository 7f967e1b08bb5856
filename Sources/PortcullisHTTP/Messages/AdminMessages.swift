import Foundation
import Hummingbird
import PortcullisCore
import PortcullisJSON

/// An Identity Platform resource whose fields a Core type renders (a tenant's or the
/// project's settings, a provider configuration): `name` plus that document.
///
/// Requests carry the same document, decoded as a ``JSONValue``: an update mask names
/// paths in it, so the Core type reads it (one schema, in Core) rather than a request
/// type restating every field.
struct NamedResource: ResponseEncodable {
    let document: JSONValue

    init(name: String, fields: JSONValue) {
        var document = fields
        document.setValue(.string(name), at: ["name"])
        self.document = document
    }

    func encode(to encoder: any Encoder) throws { try document.encode(to: encoder) }
}

/// A page of tenants.
struct TenantList: ResponseEncodable {
    let tenants: [NamedResource]
    let nextPageToken: String?
}

/// An answer with nothing to say (`{}`): deletions.
struct EmptyResponse: ResponseEncodable {}

/// `POST …/adminKeys`: a new admin key, for the project or one tenant.
struct CreateAdminKeyRequest: AdminResourceBody {
    let displayName: String?
    let tenantId: String?
}

/// An admin key as the API shows it: never its hash; the secret only once, on creation.
struct AdminKeyResource: ResponseEncodable {
    let name: String
    let keyId: String
    let displayName: String
    let createTime: String
    let tenantId: String?
    let lastUsedTime: String?
    let secret: String?

    init(_ key: AdminKey, projectId: String, secret: String? = nil) {
        name = "projects/\(projectId)/adminKeys/\(key.keyId)"
        keyId = key.keyId
        displayName = key.displayName
        createTime = RFC3339.format(key.createTime)
        tenantId = key.scope.tenantId
        lastUsedTime = key.lastUsedTime.map(RFC3339.format)
        self.secret = secret
    }
}

/// The admin keys.
struct AdminKeyList: ResponseEncodable {
    let adminKeys: [AdminKeyResource]
}

/// One audit-log entry, with the change's before and after.
struct AuditEventResource: ResponseEncodable {
    let id: String
    let actor: String
    let action: String
    let target: String
    let time: String
    let tenantId: String?
    let before: JSONValue?
    let after: JSONValue?

    init(_ event: AuditEvent) {
        id = String(event.id)
        actor = event.actor
        action = event.action
        target = event.target
        time = RFC3339.format(event.time)
        tenantId = event.tenantId
        before = event.before
        after = event.after
    }
}

/// A page of audit events, newest first.
struct AuditEventList: ResponseEncodable {
    let auditEvents: [AuditEventResource]
    let nextPageToken: String?
}

/// Google's timestamp format (`2026-11-22T18:34:07.123Z`).
enum RFC3339 {
    static func format(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
