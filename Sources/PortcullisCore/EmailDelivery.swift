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

/// `emailDelivery`: templates keyed by the link's mode (`resetPassword`), localized ones by
/// language tag first; anything wrong is INVALID_ARGUMENT naming the field.
extension EmailDelivery: Codable {
    private enum Field: String, CodingKey { case channel, webhookUri, webhookSecretVersion, from, templates, localizedTemplates }

    /// A member named at run time: a link's mode, a language tag.
    private struct Name: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private enum TemplateField: String, CodingKey { case subject, body }

    public init(from decoder: any Decoder) throws {
        let delivery = try decoder.container(keyedBy: Field.self)
        guard let name = try delivery.decodeIfPresent(String.self, forKey: .channel),
            let channel = Channel(rawValue: name.uppercased())
        else {
            throw AuthError(.invalidArgument, detail: "emailDelivery.channel must be one of WEBHOOK, SENDMAIL, LOG")
        }
        self.init(channel: channel)
        if let uri = try delivery.decodeIfPresent(String.self, forKey: .webhookUri) {
            guard uri.utf8.count <= 2048, uri.hasPrefix("https://") || uri.hasPrefix("http://") else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.webhookUri must be an http(s) URL")
            }
            webhookURI = uri
        }
        guard channel != .webhook || webhookURI != nil else {
            throw AuthError(.invalidArgument, detail: "emailDelivery.webhookUri is required for the WEBHOOK channel")
        }
        if let version = try delivery.decodeIfPresent(Int.self, forKey: .webhookSecretVersion) {
            guard (1...1_000_000).contains(version) else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.webhookSecretVersion must be between 1 and 1000000")
            }
            webhookSecretVersion = version
        }
        if let from = try delivery.decodeIfPresent(String.self, forKey: .from) {
            // A header value: a line break would let a tenant add headers of its own.
            guard !from.isEmpty, from.utf8.count <= 320, !from.contains(where: \.isNewline) else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.from must be one line")
            }
            self.from = from
        }
        if let set = try delivery.nestedContainerIfPresent(keyedBy: Name.self, forKey: .templates) {
            templates = try Self.templates(set, path: "emailDelivery.templates")
        }
        if let languages = try delivery.nestedContainerIfPresent(keyedBy: Name.self, forKey: .localizedTemplates) {
            guard languages.allKeys.count <= 100 else {
                throw AuthError(.invalidArgument, detail: "emailDelivery.localizedTemplates takes at most 100 languages")
            }
            for language in languages.allKeys {
                let tag = language.stringValue
                let path = "emailDelivery.localizedTemplates.\(tag)"
                guard (1...35).contains(tag.utf8.count), tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
                else { throw AuthError(.invalidArgument, detail: "\(path): a language tag such as fr or pt-BR") }
                let set = try languages.nestedContainer(keyedBy: Name.self, forKey: language)
                localizedTemplates[tag.lowercased()] = try Self.templates(set, path: path)
            }
        }
    }

    /// One set of templates, keyed by the link's mode.
    private static func templates(
        _ set: KeyedDecodingContainer<Name>, path: String
    ) throws -> [EmailActionKind: EmailTemplate] {
        var templates: [EmailActionKind: EmailTemplate] = [:]
        for kind in EmailActionKind.allCases {
            guard let template = try set.nestedContainerIfPresent(keyedBy: TemplateField.self, forKey: Name(kind.mode))
            else { continue }
            let subject = try template.decodeIfPresent(String.self, forKey: .subject) ?? kind.defaultTemplate.subject
            let body = try template.decodeIfPresent(String.self, forKey: .body) ?? kind.defaultTemplate.body
            guard subject.utf8.count <= 998, !subject.contains(where: \.isNewline), body.utf8.count <= 65_536 else {
                throw AuthError(.invalidArgument, detail: "\(path).\(kind.mode) needs a one-line subject and a body under 64 KiB")
            }
            templates[kind] = EmailTemplate(subject: subject, body: body)
        }
        return templates
    }

    public func encode(to encoder: any Encoder) throws {
        var delivery = encoder.container(keyedBy: Field.self)
        try delivery.encode(channel.rawValue, forKey: .channel)
        try delivery.encode(webhookSecretVersion, forKey: .webhookSecretVersion)
        try delivery.encodeIfPresent(webhookURI, forKey: .webhookUri)
        try delivery.encodeIfPresent(from, forKey: .from)
        if !templates.isEmpty {
            var set = delivery.nestedContainer(keyedBy: Name.self, forKey: .templates)
            try Self.encode(templates, into: &set)
        }
        if !localizedTemplates.isEmpty {
            var languages = delivery.nestedContainer(keyedBy: Name.self, forKey: .localizedTemplates)
            for (tag, templates) in localizedTemplates {
                var set = languages.nestedContainer(keyedBy: Name.self, forKey: Name(tag))
                try Self.encode(templates, into: &set)
            }
        }
    }

    private static func encode(
        _ templates: [EmailActionKind: EmailTemplate], into set: inout KeyedEncodingContainer<Name>
    ) throws {
        for (kind, template) in templates {
            var fields = set.nestedContainer(keyedBy: TemplateField.self, forKey: Name(kind.mode))
            try fields.encode(template.subject, forKey: .subject)
            try fields.encode(template.body, forKey: .body)
        }
    }
}
