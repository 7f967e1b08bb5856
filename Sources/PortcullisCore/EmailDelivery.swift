import Foundation

/// How a tenant's email actions reach its users (`emailDelivery`, a Portcullis extension
/// of the tenant and project-config resources).
///
/// Nothing here is secret: a webhook's signing secret is derived from the daemon's
/// master key and the tenant (``webhookSecretVersion`` rotates it), so it is never stored
/// in the settings document, its audit entries, or an answer that renders them.
public struct EmailDelivery: Sendable, Equatable {
    /// The delivery channels.
    public enum Channel: String, Sendable, CaseIterable {
        /// An HTTPS POST of the message as JSON, signed with HMAC-SHA256.
        case webhook = "WEBHOOK"
        /// The local `sendmail` program, with a plain-text RFC 5322 message.
        case sendmail = "SENDMAIL"
        /// The daemon's log, link included: for development only.
        case log = "LOG"
    }

    /// The channel.
    public var channel: Channel
    /// The webhook's URL (``Channel/webhook``): https, or http to a network the operator allows.
    public var webhookURI: String?
    /// Bumped to rotate the webhook signing secret.
    public var webhookSecretVersion = 1
    /// The `From:` of sendmail messages; the daemon's default when absent.
    public var from: String?
    /// The tenant's own subjects and bodies, by kind (keyed by the link's mode in JSON:
    /// `verifyEmail`, `resetPassword`, `verifyAndChangeEmail`); the built-in ones otherwise.
    public var templates: [EmailActionKind: EmailTemplate] = [:]
    /// The tenant's templates in other languages, by lower-case language tag (`fr`, `pt-br`),
    /// chosen by the request's `X-Firebase-Locale` (`localizedTemplates` in JSON).
    public var localizedTemplates: [String: [EmailActionKind: EmailTemplate]] = [:]

    /// A delivery over `channel`.
    public init(channel: Channel, webhookURI: String? = nil, from: String? = nil) {
        self.channel = channel
        self.webhookURI = webhookURI
        self.from = from
    }

    /// The template a message of `kind` asked for in `locale` is rendered from: the tenant's
    /// template in that language (the exact tag, then its language alone: `pt-BR`, then `pt`),
    /// else its default one, else the built-in one.
    public func template(for kind: EmailActionKind, locale: String? = nil) -> EmailTemplate {
        for tag in Self.languageTags(locale) {
            if let localized = localizedTemplates[tag]?[kind] { return localized }
        }
        return templates[kind] ?? kind.defaultTemplate
    }

    /// The tags a locale is looked up by, most specific first: `pt_BR` → `pt-br`, `pt`.
    static func languageTags(_ locale: String?) -> [String] {
        guard let locale, !locale.isEmpty else { return [] }
        let tag = locale.lowercased().replacingOccurrences(of: "_", with: "-")
        guard let dash = tag.firstIndex(of: "-") else { return [tag] }
        return [tag, String(tag[..<dash])]
    }
}

/// A message's subject and plain-text body, with Firebase's placeholders: `%LINK%`,
/// `%EMAIL%`, `%NEW_EMAIL%`, `%APP_NAME%`, `%DISPLAY_NAME%`.
public struct EmailTemplate: Sendable, Equatable {
    /// The subject (one line).
    public var subject: String
    /// The plain-text body.
    public var body: String

    /// A template.
    public init(subject: String, body: String) {
        self.subject = subject
        self.body = body
    }

    /// The template with each placeholder replaced by its value (absent values by nothing).
    public func rendered(_ values: [String: String]) -> EmailTemplate {
        func fill(_ text: String) -> String {
            var text = text
            for name in ["LINK", "EMAIL", "NEW_EMAIL", "APP_NAME", "DISPLAY_NAME"] {
                text = text.replacingOccurrences(of: "%\(name)%", with: values[name] ?? "")
            }
            return text
        }
        return EmailTemplate(subject: fill(subject), body: fill(body))
    }
}

extension EmailDelivery {
    /// The fields `emailDelivery` may carry: templates are keyed by the link's mode
    /// (`resetPassword`), localized ones by language tag first.
    static let schema: ResourceSchema = {
        let templates = ResourceSchema.object(
            Dictionary(
                uniqueKeysWithValues: EmailActionKind.allCases.map {
                    ($0.mode, ResourceSchema.object(["subject": .value, "body": .value]))
                }))
        return .object([
            "channel": .value, "webhookUri": .value, "webhookSecretVersion": .value, "from": .value, "templates": templates,
            "localizedTemplates": .map(templates),
        ])
    }()

    /// Reads `emailDelivery`; `INVALID_ARGUMENT` naming the field for anything wrong.
    init(reader: JSONValue.Reader) throws(AuthError) {
        guard let name = try reader.string("channel"), let channel = Channel(rawValue: name.uppercased()) else {
            throw AuthError(.invalidArgument, detail: "emailDelivery.channel must be one of WEBHOOK, SENDMAIL, LOG")
        }
        self.init(channel: channel)
        if let uri = try reader.string("webhookUri") {
            guard uri.utf8.count <= 2048, uri.hasPrefix("https://") || uri.hasPrefix("http://") else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.webhookUri must be an http(s) URL")
            }
            webhookURI = uri
        }
        guard channel != .webhook || webhookURI != nil else {
            throw AuthError(.invalidArgument, detail: "emailDelivery.webhookUri is required for the WEBHOOK channel")
        }
        if let version = try reader.int("webhookSecretVersion") {
            guard (1...1_000_000).contains(version) else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.webhookSecretVersion must be between 1 and 1000000")
            }
            webhookSecretVersion = version
        }
        if let from = try reader.string("from") {
            // A header value: a line break would let a tenant add headers of its own.
            guard !from.isEmpty, from.utf8.count <= 320, !from.contains(where: \.isNewline) else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.from must be one line")
            }
            self.from = from
        }
        if let templates = try reader.object("templates") {
            self.templates = try Self.templates(templates, path: "emailDelivery.templates")
        }
        if let languages = try reader.object("localizedTemplates") {
            guard languages.members.count <= 100 else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.localizedTemplates takes at most 100 languages")
            }
            for (tag, set) in languages.members {
                let path = "emailDelivery.localizedTemplates.\(tag)"
                guard (1...35).contains(tag.utf8.count), tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
                else { throw AuthError(.invalidArgument, detail: "\(path): a language tag such as fr or pt-BR") }
                localizedTemplates[tag.lowercased()] = try Self.templates(JSONValue.Reader(set, path: path), path: path)
            }
        }
    }

    /// One set of templates, keyed by the link's mode (`resetPassword`: request keys are
    /// camel-cased on the way in).
    private static func templates(_ reader: JSONValue.Reader, path: String) throws(AuthError) -> [EmailActionKind: EmailTemplate] {
        var templates: [EmailActionKind: EmailTemplate] = [:]
        for kind in EmailActionKind.allCases {
            guard let template = try reader.object(kind.mode) else { continue }
            let subject = try template.string("subject") ?? kind.defaultTemplate.subject
            let body = try template.string("body") ?? kind.defaultTemplate.body
            guard subject.utf8.count <= 998, !subject.contains(where: \.isNewline), body.utf8.count <= 65_536 else {
                throw AuthError(.invalidArgument, detail: "\(path).\(kind.mode) needs a one-line subject and a body under 64 KiB")
            }
            templates[kind] = EmailTemplate(subject: subject, body: body)
        }
        return templates
    }

    /// One set of templates as JSON, keyed by the link's mode.
    private static func json(_ templates: [EmailActionKind: EmailTemplate]) -> JSONValue {
        .object(
            Dictionary(
                uniqueKeysWithValues: templates.map {
                    ($0.key.mode, JSONValue.object(["subject": .string($0.value.subject), "body": .string($0.value.body)]))
                }))
    }

    /// The settings as JSON.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "channel": .string(channel.rawValue), "webhookSecretVersion": .integer(Int64(webhookSecretVersion)),
        ]
        if let webhookURI { members["webhookUri"] = .string(webhookURI) }
        if let from { members["from"] = .string(from) }
        if !templates.isEmpty { members["templates"] = Self.json(templates) }
        if !localizedTemplates.isEmpty { members["localizedTemplates"] = .object(localizedTemplates.mapValues(Self.json)) }
        return .object(members)
    }
}
