import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// `POST …/serviceAccounts`: `displayName` alone generates a key pair; with `publicKey`
/// (PEM) or `publicKeyJwk` it registers a key the customer holds, under `clientEmail`
/// if given.
struct CreateServiceAccountRequest: AdminResourceBody {
    let displayName: String?
    let publicKey: String?
    let publicKeyJwk: JSONValue?
    let clientEmail: String?

    /// The key to register, if any; `INVALID_ARGUMENT` when both forms are sent.
    func publicKeyInput() throws(AuthError) -> ServiceAccountService.PublicKeyInput? {
        switch (publicKey, publicKeyJwk) {
        case (nil, nil), (nil, .null?): return nil
        case (let pem?, nil), (let pem?, .null?): return .pem(pem)
        case (nil, let jwk?): return .jwk(jwk)
        case (.some, .some): throw AuthError(.invalidArgument, detail: "Send publicKey or publicKeyJwk, not both")
        }
    }
}

/// A service account as the API shows it: never private material, except the generated
/// key's service-account file, once, in the answer that created it.
struct ServiceAccountResource: ResponseEncodable {
    let name: String
    let clientEmail: String
    let keyId: String
    let displayName: String?
    let createTime: String
    let serviceAccount: ServiceAccountFile?

    init(_ account: ServiceAccount, projectId: String, privateKeyPEM: String? = nil) {
        let parent = account.tenantId.map { "projects/\(projectId)/tenants/\($0)" } ?? "projects/\(projectId)"
        name = "\(parent)/serviceAccounts/\(account.keyId)"
        clientEmail = account.clientEmail
        keyId = account.keyId
        displayName = account.displayName
        createTime = RFC3339.format(account.createTime)
        serviceAccount = privateKeyPEM.map { ServiceAccountFile(account, projectId: projectId, privateKeyPEM: $0) }
    }
}

/// A Google service-account key file, which google-auth and every Firebase Admin SDK load
/// (`credentials.Certificate(...)`, `cert(...)`) to mint custom tokens offline.
///
/// The URLs are Google's usual values so that every parser accepts the file: minting a
/// custom token calls none of them, and Google does not know these accounts. `client_id`
/// is a number derived from the key id, as stable as the key.
struct ServiceAccountFile: Encodable {
    var type = "service_account"
    let projectId: String
    let privateKeyId: String
    let privateKey: String
    let clientEmail: String
    let clientId: String
    var authUri = "https://accounts.google.com/o/oauth2/auth"
    var tokenUri = "https://oauth2.googleapis.com/token"
    var authProviderX509CertUrl = "https://www.googleapis.com/oauth2/v1/certs"
    let clientX509CertUrl: String
    var universeDomain = "googleapis.com"

    private enum CodingKeys: String, CodingKey {
        case type, projectId = "project_id", privateKeyId = "private_key_id", privateKey = "private_key"
        case clientEmail = "client_email", clientId = "client_id", authUri = "auth_uri", tokenUri = "token_uri"
        case authProviderX509CertUrl = "auth_provider_x509_cert_url", clientX509CertUrl = "client_x509_cert_url"
        case universeDomain = "universe_domain"
    }

    init(_ account: ServiceAccount, projectId: String, privateKeyPEM: String) {
        self.projectId = projectId
        privateKeyId = account.keyId
        privateKey = privateKeyPEM
        clientEmail = account.clientEmail
        // 21 digits like Google's: a 1, then 20 digits of the key id's first 64 bits.
        clientId = "1" + String(String(UInt64(account.keyId.prefix(16), radix: 16) ?? 0).suffix(20)).leftPadded(to: 20)
        let email = account.clientEmail.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? account.clientEmail
        clientX509CertUrl = "https://www.googleapis.com/robot/v1/metadata/x509/\(email)"
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

/// A tenant's service accounts (public parts only).
struct ServiceAccountList: ResponseEncodable {
    let serviceAccounts: [ServiceAccountResource]
}
