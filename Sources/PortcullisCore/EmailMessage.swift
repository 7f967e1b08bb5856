public import Foundation
public import PortcullisJSON

/// One email action message, as every delivery channel renders it: the JSON of a
/// webhook, the RFC 5322 text handed to `sendmail`, a log line.
///
/// It carries the action link, a secret: it is sealed while it waits in the outbox and
/// never logged outside the development `LOG` channel.
public struct EmailMessage: Sendable, Equatable, TenantOwned {
    /// The outbox id, stable across retries (receivers de-duplicate on it).
    public var id: String
    /// The tenant, `nil` for project users.
    public var tenantId: String?
    /// What the message is for.
    public var kind: EmailActionKind
    /// The user the action is about.
    public var uid: String
    /// The address the message goes to (the new address of an email change).
    public var recipient: String
    /// The account's current email (differs from ``recipient`` for an email change).
    public var email: String
    /// The action link.
    public var link: String
    /// The language the client asked for (`X-Firebase-Locale`), if any.
    public var locale: String?
    /// The user's display name, if any.
    public var displayName: String?
    /// The product name messages show (`%APP_NAME%`): the tenant's display name, else the project id.
    public var appName: String

    /// A message.
    public init(
        id: String, tenantId: String?, kind: EmailActionKind, uid: String, recipient: String, email: String, link: String,
        locale: String?, displayName: String?, appName: String
    ) {
        self.id = id
        self.tenantId = tenantId
        self.kind = kind
        self.uid = uid
        self.recipient = recipient
        self.email = email
        self.link = link
        self.locale = locale
        self.displayName = displayName
        self.appName = appName
    }

    /// Everything but the routing columns, as stored (sealed) in the outbox.
    public var content: JSONValue {
        var members: [String: JSONValue] = [
            "email": .string(email), "link": .string(link), "appName": .string(appName),
        ]
        if let locale { members["locale"] = .string(locale) }
        if let displayName { members["displayName"] = .string(displayName) }
        return .object(members)
    }

    /// Rebuilds a message from its outbox row and its opened ``content``.
    public init(
        id: String, tenantId: String?, kind: EmailActionKind, uid: String, recipient: String, content: JSONValue
    ) throws(AuthError) {
        self = try AuthError.reading {
            let reader = try JSONValue.Reader(content)
            guard let email = try reader.string("email"), let link = try reader.string("link"),
                let appName = try reader.string("appName")
            else { throw AuthError(.internalError, detail: "outbox message \(id) is incomplete") }
            return EmailMessage(
                id: id, tenantId: tenantId, kind: kind, uid: uid, recipient: recipient, email: email, link: link,
                locale: try reader.string("locale"), displayName: try reader.string("displayName"), appName: appName)
        }
    }

    /// The webhook's JSON body: `{id, tenantId, type, email, newEmail?, uid, link, locale, displayName?}`.
    public var webhookBody: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id), "type": .string(kind.rawValue), "email": .string(recipient), "uid": .string(uid),
            "link": .string(link), "tenantId": tenantId.map(JSONValue.string) ?? .null,
            "locale": locale.map(JSONValue.string) ?? .null, "appName": .string(appName),
        ]
        if kind == .verifyAndChangeEmail {
            members["email"] = .string(email)
            members["newEmail"] = .string(recipient)
        }
        if let displayName { members["displayName"] = .string(displayName) }
        return .object(members)
    }

    /// The subject and body of `template` filled in for this message.
    public func rendered(_ template: EmailTemplate) -> EmailTemplate {
        template.rendered([
            "LINK": link, "EMAIL": email, "NEW_EMAIL": recipient, "APP_NAME": appName, "DISPLAY_NAME": displayName ?? "",
        ])
    }

    /// The message as RFC 5322 text (CRLF line ends) for `sendmail -t`: one plain-text UTF-8
    /// part. Every header value is one line whatever the template or profile holds, so
    /// nothing a user or tenant writes can add a recipient.
    public func rfc5322(from sender: String, template: EmailTemplate, date: Date, messageDomain: String) -> String {
        let filled = rendered(template)
        let headers = [
            "From: \(Self.oneLine(sender))",
            "To: \(recipient)",
            "Subject: \(Self.encodedWord(Self.oneLine(filled.subject)))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(id)@\(Self.oneLine(messageDomain))>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
            "Auto-Submitted: auto-generated",
        ]
        let body = filled.body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + body + "\r\n"
    }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// RFC 2047 for a non-ASCII subject; ASCII stays readable.
    static func encodedWord(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(\.isASCII) else { return text }
        return "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
