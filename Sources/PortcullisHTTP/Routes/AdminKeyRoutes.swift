import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v2/projects/{project}/adminKeys[/{key}]`: project-scoped admin keys.
struct AdminKeyRoutes {
    let service: AdminKeyService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("adminKeys") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let body = try await JSONValue.Reader(request.jsonBody(context: context).camelCasedKeys())
            let scope: AdminScope = try body.string("tenantId").map(AdminScope.tenant) ?? .project
            let (key, secret) = try await service.create(
                displayName: body.string("displayName") ?? "", scope: scope, actor: admin.actor)
            var json = resource(key)
            json.setValue(.string(secret), at: ["secret"])
            return JSONResponse.make(json)
        }
        group.get("adminKeys") { request, context in
            _ = try context.requireAdmin(for: .project)
            let keys = try await service.list(tenantId: request.query("tenantId"))
            return JSONResponse.make(.object(["adminKeys": .array(keys.map(resource))]))
        }
        group.delete("adminKeys/{key}") { _, context in
            let admin = try context.requireAdmin(for: .project)
            try await service.revoke(keyId: context.parameters.require("key"), actor: admin.actor)
            return JSONResponse.make(.object([:]))
        }
    }

    func resource(_ key: AdminKey) -> JSONValue {
        var json: [String: JSONValue] = [
            "name": .string("projects/\(projectId)/adminKeys/\(key.keyId)"),
            "keyId": .string(key.keyId),
            "displayName": .string(key.displayName),
            "createTime": .string(RFC3339.format(key.createTime)),
        ]
        if let tenantId = key.scope.tenantId { json["tenantId"] = .string(tenantId) }
        if let lastUsed = key.lastUsedTime { json["lastUsedTime"] = .string(RFC3339.format(lastUsed)) }
        return .object(json)
    }
}

/// Google's timestamp format (`2026-11-22T18:34:07.123Z`).
enum RFC3339 {
    static func format(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
