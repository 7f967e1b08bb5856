import PortcullisCore
import PortcullisJSON

/// The settings document as the gateway reads and writes it: the tenant resource (HTTP) and
/// the `settings` column (Store) both go through `TenantSettings`' `Codable` conformance with
/// these coders.
extension TenantSettings {
    init(json: JSONValue) throws(AuthError) {
        do {
            self = try JSONValueDecoder().decode(TenantSettings.self, from: json)
        } catch let error as AuthError {
            throw error
        } catch let error as JSONInputError {
            throw AuthError(error)
        } catch {
            throw AuthError(.internalError, detail: "\(error)")
        }
    }

    var json: JSONValue {
        get throws { try JSONValueEncoder().encode(self) }
    }
}
