import HTTPTypes
import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `accounts:sendOobCode`, from end users and (with `returnOobLink`) admins.
struct SendOobCodeRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let requestType: String?
    let email: String?
    let newEmail: String?
    let idToken: String?
    let continueUrl: String?
    /// Admins only: answer with the link instead of sending it.
    let returnOobLink: Bool?

    /// `MISSING_REQ_TYPE`, `INVALID_REQ_TYPE`, or the kind.
    var kind: EmailActionKind {
        get throws(AuthError) {
            guard let requestType, !requestType.isEmpty else { throw AuthError(.missingRequestType) }
            guard let kind = EmailActionKind(rawValue: requestType) else { throw AuthError(.invalidRequestType) }
            return kind
        }
    }

    /// The service's request; `locale` from `X-Firebase-Locale`, `apiKey` from the request.
    func sendRequest(locale: String?, apiKey: String?) throws(AuthError) -> EmailActionService.SendRequest {
        EmailActionService.SendRequest(
            kind: try kind, email: email, newEmail: newEmail, idToken: idToken, continueURL: continueUrl,
            locale: locale, apiKey: apiKey)
    }
}

/// `accounts:sendOobCode`'s answer: the account's email, and the link only for admins who asked.
struct SendOobCodeResponse: ResponseEncodable {
    var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
    let email: String
    var oobLink: String? = nil
}

/// `accounts:resetPassword`: with `oobCode` alone it reports what the code is for; with
/// `newPassword` it resets.
struct ResetPasswordRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let oobCode: String?
    let newPassword: String?
}

/// `accounts:resetPassword`'s answer (also `checkActionCode`'s).
struct ResetPasswordResponse: ResponseEncodable {
    var kind = "identitytoolkit#ResetPasswordResponse"
    /// The account's email (its address before an email change).
    let email: String
    let requestType: String
    /// The address an email change moves to.
    var newEmail: String? = nil
}

extension HTTPField.Name {
    /// The language Firebase clients ask messages to be written in.
    static let firebaseLocale = HTTPField.Name("X-Firebase-Locale")!  // safe: constant, valid
}

extension Request {
    /// `X-Firebase-Locale` when it looks like a language tag (`en`, `pt-BR`); it ends up in links.
    var firebaseLocale: String? {
        guard let tag = headers[.firebaseLocale], !tag.isEmpty, tag.utf8.count <= 35,
            tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        return tag
    }
}
