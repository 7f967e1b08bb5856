import Foundation
import PortcullisCore
import PortcullisJSON
import Testing

@Suite("Email action policies")
struct EmailActionPolicyTests {
    static let now = Timestamp(seconds: 1_800_000_000)

    static func user(
        email: String? = "ann@example.com", disabled: Bool = false, validSince: Timestamp = Timestamp(seconds: 1_700_000_000)
    ) -> User {
        User(
            tenantId: "t", uid: "u1", email: email, disabled: disabled, hasPassword: true, createdAt: Date(),
            validSince: validSince)
    }

    static func code(
        _ kind: EmailActionKind, for address: String = "ann@example.com", account: String? = "ann@example.com",
        issuedAt: Timestamp = Timestamp(seconds: 1_799_999_000)
    ) -> ActionCode {
        ActionCode(
            tenantId: "t", uid: "u1", kind: kind, email: address, continueURL: nil, expiresAt: now.adding(seconds: 3600),
            issuedAt: issuedAt, accountEmail: account)
    }

    @Test("verification marks the email verified and revokes nothing; only for the address it was sent to")
    func verify() throws {
        let update = try EmailActionPolicy.change(
            applying: Self.code(.verifyEmail), to: Self.user(), passwordHash: nil, now: Self.now)
        #expect(update == UserUpdate(emailVerified: true))
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.change(
                applying: Self.code(.verifyEmail, for: "old@example.com", account: "old@example.com"), to: Self.user(),
                passwordHash: nil, now: Self.now)
        }
    }

    @Test("a reset sets the hash, verifies the email and revokes every session; a changed address voids it")
    func reset() throws {
        let update = try EmailActionPolicy.change(
            applying: Self.code(.passwordReset), to: Self.user(), passwordHash: "$scrypt$…", now: Self.now)
        #expect(update.passwordHash == "$scrypt$…")
        #expect(update.emailVerified == true)
        #expect(update.revocation == .now(Self.now))
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.change(
                applying: Self.code(.passwordReset), to: Self.user(email: "new@example.com"), passwordHash: "h", now: Self.now)
        }
    }

    @Test("an email change sets the new address, verified, and revokes every session")
    func change() throws {
        let update = try EmailActionPolicy.change(
            applying: Self.code(.verifyAndChangeEmail, for: "ann@new.example"), to: Self.user(), passwordHash: nil,
            now: Self.now)
        #expect(update.email == .some("ann@new.example"))
        #expect(update.emailVerified == true)
        #expect(update.revocation == .now(Self.now))
    }

    @Test("no code applies to a disabled user", arguments: EmailActionKind.allCases)
    func disabled(kind: EmailActionKind) {
        #expect(throws: AuthError(.userDisabled)) {
            try EmailActionPolicy.change(
                applying: Self.code(kind), to: Self.user(disabled: true), passwordHash: "h", now: Self.now)
        }
    }

    @Test(
        "a revocation after a code was issued kills it, whatever its kind; one before it spares it",
        arguments: EmailActionKind.allCases)
    func revoked(kind: EmailActionKind) throws {
        let issued = Timestamp(seconds: 1_799_999_000)
        let code = Self.code(kind, for: kind == .verifyAndChangeEmail ? "ann@new.example" : "ann@example.com", issuedAt: issued)
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.requireLive(code, for: Self.user(validSince: issued.adding(seconds: 1)))
        }
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.change(
                applying: code, to: Self.user(validSince: Timestamp(microseconds: issued.microseconds + 1)),
                passwordHash: "h", now: Self.now)
        }
        try EmailActionPolicy.requireLive(code, for: Self.user(validSince: issued))
        try EmailActionPolicy.requireLive(code, for: Self.user(validSince: issued.adding(seconds: -1)))
    }

    @Test("an email change works only while the account keeps the email it had when the code was issued")
    func changeNeedsTheOldAddress() throws {
        let code = Self.code(.verifyAndChangeEmail, for: "squatter@evil.example", account: "victim@gmail.com")
        try EmailActionPolicy.requireLive(code, for: Self.user(email: "victim@gmail.com"))
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.requireLive(code, for: Self.user(email: "other@gmail.com"))
        }
        #expect(throws: AuthError(.invalidOobCode)) {
            try EmailActionPolicy.requireLive(
                Self.code(.verifyAndChangeEmail, for: "x@new.example", account: nil), for: Self.user())
        }
    }

    @Test("floods of resets answer RESET_PASSWORD_EXCEED_LIMIT, of other kinds TOO_MANY_ATTEMPTS_TRY_LATER")
    func floods() {
        #expect(EmailActionPolicy.floodError(.passwordReset).code == .resetPasswordExceedLimit)
        #expect(EmailActionPolicy.floodError(.verifyEmail).code == .tooManyAttemptsTryLater)
        #expect(EmailActionPolicy.floodError(.verifyAndChangeEmail).code == .tooManyAttemptsTryLater)
    }
}

@Suite("Action links and continue URLs")
struct ActionLinkTests {
    @Test("links carry Firebase's parameters, each encoded so &, = and + inside survive")
    func link() {
        let link = ActionLink.make(
            publicURL: "https://auth.example.com/", kind: .passwordReset, code: "abc-_123", apiKey: "key",
            continueURL: "https://app.example.com/a?b=1&c=d+e", languageCode: "pt-BR", tenantId: "acme-x1")
        #expect(
            link
                == "https://auth.example.com/__/auth/action?mode=resetPassword&oobCode=abc-_123&apiKey=key"
                + "&continueUrl=https%3A%2F%2Fapp.example.com%2Fa%3Fb%3D1%26c%3Dd%2Be&lang=pt-BR&tenantId=acme-x1")
        let items = URLComponents(string: link)?.queryItems ?? []
        #expect(items.first { $0.name == "continueUrl" }?.value == "https://app.example.com/a?b=1&c=d+e")
        #expect(EmailActionKind(mode: "resetPassword") == .passwordReset)
        #expect(EmailActionKind(mode: "signIn") == nil)
    }

    @Test(
        "continue URLs: http(s) on localhost, the public host or an authorised domain (and its subdomains) only",
        arguments: [
            ("https://app.example.com/done", true), ("https://deep.app.example.com/x", true), ("http://localhost:3000/", true),
            ("https://auth.example.net/after", true), ("https://example.com/", false), ("https://evilapp.example.com/", false),
            ("https://app.example.com.evil.test/", false), ("javascript:alert(1)", false), ("ftp://app.example.com/", false),
            ("/relative", false), ("", false),
        ])
    func continueURL(url: String, allowed: Bool) {
        let result = Result { () throws(AuthError) in
            try ContinueURLPolicy.validate(url, authorizedDomains: ["app.example.com"], publicURL: "https://auth.example.net")
        }
        switch result {
        case .success(let accepted): #expect(allowed && accepted == url)
        case .failure(let error): #expect(!allowed && [.unauthorizedDomain, .invalidContinueUri].contains(error.code))
        }
    }
}

@Suite("Email messages")
struct EmailMessageTests {
    static let message = EmailMessage(
        id: "6f1c", tenantId: "acme", kind: .passwordReset, uid: "u1", recipient: "ann@example.com", email: "ann@example.com",
        link: "https://auth.example.com/__/auth/action?mode=resetPassword&oobCode=c0de", locale: "en",
        displayName: "Ann\r\nBcc: victim@example.com", appName: "Acme")

    @Test("RFC 5322: CRLF lines, one To, template placeholders filled, no header a profile field can add")
    func rfc5322() {
        let template = EmailTemplate(subject: "Hi %DISPLAY_NAME% from %APP_NAME%", body: "Reset: %LINK%\nfor %EMAIL%")
        let text = Self.message.rfc5322(
            from: "Acme <noreply@acme.example>", template: template, date: Date(timeIntervalSince1970: 0),
            messageDomain: "auth.example.com")
        let (head, body) = (text.components(separatedBy: "\r\n\r\n")[0], text.components(separatedBy: "\r\n\r\n")[1])
        let headers = head.components(separatedBy: "\r\n")
        #expect(headers.contains("To: ann@example.com"))
        #expect(headers.contains("From: Acme <noreply@acme.example>"))
        #expect(headers.contains("Subject: Hi Ann Bcc: victim@example.com from Acme"))
        #expect(headers.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000"))
        #expect(headers.contains("Message-ID: <6f1c@auth.example.com>"))
        #expect(!headers.contains { $0.hasPrefix("Bcc:") })
        #expect(body == "Reset: \(Self.message.link)\r\nfor ann@example.com\r\n")
    }

    @Test("non-ASCII subjects are RFC 2047 encoded words")
    func encodedSubject() {
        let text = Self.message.rfc5322(
            from: "x@example.com", template: EmailTemplate(subject: "Réinitialiser", body: "%LINK%"), date: Date(),
            messageDomain: "example.com")
        #expect(text.contains("Subject: =?UTF-8?B?\(Data("Réinitialiser".utf8).base64EncodedString())?="))
    }

    @Test("the outbox content round-trips; the webhook body names both addresses of an email change")
    func content() throws {
        let reopened = try EmailMessage(
            id: "6f1c", tenantId: "acme", kind: .passwordReset, uid: "u1", recipient: "ann@example.com",
            content: Self.message.content)
        #expect(reopened == Self.message)
        var change = Self.message
        change.kind = .verifyAndChangeEmail
        change.recipient = "ann@new.example"
        #expect(change.webhookBody.value(at: ["email"]) == "ann@example.com")
        #expect(change.webhookBody.value(at: ["newEmail"]) == "ann@new.example")
        #expect(Self.message.webhookBody.value(at: ["newEmail"]) == nil)
    }

    @Test("templates by language: the exact tag, then the language alone, then the default, then the built-in one")
    func localizedTemplates() throws {
        let parsed = try TenantSettings(
            json: try JSONValue.parse(
                Array(
                    #"""
                    {"emailDelivery":{"channel":"WEBHOOK","webhookUri":"https://hooks.example.com/x",
                     "templates":{"resetPassword":{"subject":"Reset","body":"%LINK%"}},
                     "localizedTemplates":{"pt":{"resetPassword":{"subject":"Redefinir","body":"%LINK%"}},
                                           "pt-BR":{"resetPassword":{"subject":"Redefinir (Brasil)","body":"%LINK%"}}}}}
                    """#.utf8)))
        let delivery = try #require(parsed.emailDelivery)
        #expect(delivery.template(for: .passwordReset, locale: "pt-BR").subject == "Redefinir (Brasil)")
        #expect(delivery.template(for: .passwordReset, locale: "pt_br").subject == "Redefinir (Brasil)")
        #expect(delivery.template(for: .passwordReset, locale: "pt-PT").subject == "Redefinir")
        #expect(delivery.template(for: .passwordReset, locale: "fr").subject == "Reset")
        #expect(delivery.template(for: .passwordReset, locale: nil).subject == "Reset")
        #expect(delivery.template(for: .verifyEmail, locale: "pt").subject == "Verify your email for %APP_NAME%")
        #expect(try TenantSettings(json: parsed.json) == parsed)
        #expect(throws: AuthError.self) {
            try TenantSettings(
                json: try JSONValue.parse(
                    Array(#"{"emailDelivery":{"channel":"LOG","localizedTemplates":{"<x>":{}}}}"#.utf8)))
        }
    }

    @Test("emailDelivery settings: validated, keyed templates, round trip")
    func settings() throws {
        let parsed = try TenantSettings(
            json: try JSONValue.parse(
                Array(
                    #"""
                    {"authorizedDomains":["App.Example.com"],"emailDelivery":{"channel":"sendmail","from":"Acme <a@acme.example>",
                     "templates":{"resetPassword":{"subject":"Reset %APP_NAME%","body":"%LINK%"}}}}
                    """#.utf8)))
        #expect(parsed.authorizedDomains == ["app.example.com"])
        let delivery = try #require(parsed.emailDelivery)
        #expect(delivery.channel == .sendmail)
        #expect(delivery.template(for: .passwordReset).subject == "Reset %APP_NAME%")
        #expect(delivery.template(for: .verifyEmail).subject == "Verify your email for %APP_NAME%")
        #expect(try TenantSettings(json: parsed.json) == parsed)
        for bad in [
            #"{"emailDelivery":{"channel":"FAX"}}"#, #"{"emailDelivery":{"channel":"WEBHOOK"}}"#,
            #"{"emailDelivery":{"channel":"WEBHOOK","webhookUri":"ftp://x"}}"#,
            #"{"emailDelivery":{"channel":"LOG","from":"a@b\r\nBcc: c@d"}}"#, #"{"authorizedDomains":["a/b"]}"#,
        ] {
            #expect(throws: AuthError.self, "\(bad)") { try TenantSettings(json: try JSONValue.parse(Array(bad.utf8))) }
        }
    }
}
