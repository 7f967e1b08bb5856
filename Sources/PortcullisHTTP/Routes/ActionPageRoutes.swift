import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON

/// `GET`/`POST /__/auth/action`: the page action links open, so the flows work without any
/// frontend of the tenant's.
///
/// Opening a link applies nothing, whatever its mode: mail scanners and link previews
/// fetch links, and a prefetched verification would let a squatter's unproven address
/// pass for verified. The `GET` shows what the link will do and one button (a reset asks
/// for the new password); only that form's `POST`, carrying a token bound to the code
/// (``ActionFormTokens``), applies it. No script is needed. On success the page follows
/// the code's `continueUrl` (checked against the tenant's authorised domains and stored
/// normalised when the code was issued; the link's own parameter is ignored).
struct ActionPageRoutes {
    let emailActions: EmailActionService
    let apiKeys: APIKeyMiddleware
    let formTokens: ActionFormTokens

    /// The fields of a link, or of the form posted back.
    struct Parameters {
        let mode: String?
        let oobCode: String?
        let apiKey: String?
        let tenantId: String?
        let lang: String?
        let newPassword: String?
        let formToken: String?

        var tenant: String? { tenantId?.isEmpty == false ? tenantId : nil }
    }

    func register(on router: Router<PortcullisRequestContext>) {
        router.get(RouterPath(ActionLink.path)) { request, _ in
            let parameters = Parameters(
                mode: request.query("mode"), oobCode: request.query("oobCode"), apiKey: request.query("apiKey"),
                tenantId: request.query("tenantId"), lang: request.query("lang"), newPassword: nil, formToken: nil)
            return await open(parameters)
        }
        router.post(RouterPath(ActionLink.path)) { request, context in
            let bytes = try await request.bodyBytes(context: context)
            guard let form = URLEncodedForm.fields(bytes) else { return Self.invalidLink }
            return await submit(
                Parameters(
                    mode: form["mode"], oobCode: form["oobCode"], apiKey: form["apiKey"], tenantId: form["tenantId"],
                    lang: form["lang"], newPassword: form["newPassword"], formToken: form["token"]))
        }
    }

    /// A link opened: shows what it will do, with the form that does it. Nothing is applied.
    private func open(_ parameters: Parameters) async -> Response {
        guard let (kind, code, apiKey) = validated(parameters) else { return Self.invalidLink }
        let state = ActionPage.FormState(
            mode: kind.mode, oobCode: code, apiKey: apiKey, tenantId: parameters.tenant, languageCode: parameters.lang,
            token: formTokens.token(code: code, tenantId: parameters.tenant))
        do {
            let (found, email) = try await emailActions.inspect(code: code, tenant: TenantScope(parameters.tenant))
            switch kind {
            case .passwordReset:
                return ActionPage.resetForm(email: email ?? found.email, state: state)
            case .verifyEmail:
                return ActionPage.confirmForm(
                    title: "Verify your email", text: "Confirm that \(found.email) is your email address.",
                    button: "Verify my email", state: state)
            case .verifyAndChangeEmail:
                return ActionPage.confirmForm(
                    title: "Change your email",
                    text: "Make \(found.email) the email of your account\(email.map { " (now \($0))" } ?? "").",
                    button: "Change my email", state: state)
            }
        } catch {
            return Self.failure(error)
        }
    }

    /// The page's form posted: applies the code, or shows the reset form again with the reason.
    private func submit(_ form: Parameters) async -> Response {
        guard let (kind, code, apiKey) = validated(form),
            formTokens.accepts(form.formToken, code: code, tenantId: form.tenant)
        else { return Self.invalidLink }
        do {
            switch kind {
            case .passwordReset:
                let (applied, user) = try await emailActions.resetPassword(
                    code: code, newPassword: form.newPassword ?? "", tenant: TenantScope(form.tenant))
                return Self.done(
                    title: "Your password has changed", text: "You can now sign in to \(user.email ?? applied.email) with it.",
                    continueURL: applied.continueURL)
            case .verifyEmail, .verifyAndChangeEmail:
                let (applied, user) = try await emailActions.apply(code: code, tenant: TenantScope(form.tenant))
                return Self.done(
                    title: kind == .verifyEmail ? "Your email is verified" : "Your email has changed",
                    text: kind == .verifyEmail
                        ? "You can now sign in with \(user.email ?? applied.email)."
                        : "Your account now uses \(applied.email). Sign in with it from now on.",
                    continueURL: applied.continueURL)
            }
        } catch let error as AuthError
            where kind == .passwordReset && [.weakPassword, .passwordDoesNotMeetRequirements].contains(error.code)
        {
            let email = (try? await emailActions.inspect(code: code, tenant: TenantScope(form.tenant)))?.currentEmail ?? ""
            return ActionPage.resetForm(
                email: email,
                state: .init(
                    mode: kind.mode, oobCode: code, apiKey: apiKey, tenantId: form.tenant, languageCode: form.lang,
                    token: formTokens.token(code: code, tenantId: form.tenant)),
                error: "Choose a stronger password: \(error.detail ?? error.code.explanation)")
        } catch {
            return Self.failure(error)
        }
    }

    /// The kind, code and API key of a well-formed link from a known app.
    private func validated(_ parameters: Parameters) -> (EmailActionKind, String, String)? {
        guard let mode = parameters.mode, let kind = EmailActionKind(mode: mode), let code = parameters.oobCode,
            !code.isEmpty, code.utf8.count <= 128, let apiKey = parameters.apiKey, apiKeys.accepts(apiKey)
        else { return nil }
        return (kind, code, apiKey)
    }

    /// Success: onwards to the continue URL when there is one, else a page saying so.
    private static func done(title: String, text: String, continueURL: String?) -> Response {
        guard let continueURL else { return ActionPage.message(title: title, text: text) }
        var response = Response(status: .seeOther, headers: ActionPage.headers)
        response.headers[.location] = continueURL
        return response
    }

    private static var invalidLink: Response {
        ActionPage.message(
            title: "This link is not valid", text: "Check that you opened the whole link from the email, or ask for a new one.",
            status: .badRequest)
    }

    private static func failure(_ error: any Error) -> Response {
        guard let error = (error as? Conflict).map(AuthError.init) ?? error as? AuthError else {
            return ActionPage.message(
                title: "Something went wrong", text: "Try the link again in a moment.", status: .serviceUnavailable)
        }
        let text =
            switch error.code {
            case .invalidOobCode: "This link is not valid, or it was used already. Ask for a new one."
            case .expiredOobCode: "This link has expired. Ask for a new one."
            case .userDisabled: "This account is disabled."
            case .emailExists: "Another account already uses this email address."
            case .tenantNotFound, .projectDisabled: "This link's app does not accept it any more."
            default: "Try the link again in a moment."
            }
        return ActionPage.message(
            title: "This link did not work", text: text,
            status: error.httpStatus >= 500 ? .serviceUnavailable : .badRequest)
    }
}
