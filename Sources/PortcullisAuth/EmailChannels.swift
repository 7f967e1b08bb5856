import Foundation
public import Logging
public import PortcullisCore
public import PortcullisCrypto
import PortcullisJSON
public import PortcullisOutbound

/// One way of handing an email action message over. A thrown error is a failed attempt,
/// retried with backoff; its description is recorded on the outbox row, so it must never
/// include the link.
public protocol EmailChannel: Sendable {
    /// Delivers `message` as `delivery` (the tenant's settings for this channel) says.
    func deliver(_ message: EmailMessage, delivery: EmailDelivery) async throws
}

/// A failed delivery, described without the message's link.
public struct EmailDeliveryFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}

/// `WEBHOOK`: POSTs `EmailMessage.webhookBody` to the tenant's URL through the outbound
/// client (its timeouts, size cap and network policy), signed as `WebhookSigningKeys`
/// describes. Any 2xx answer is a delivery.
public struct WebhookEmailChannel: EmailChannel {
    let client: OutboundHTTPClient
    let keys: WebhookSigningKeys
    let clock: any WallClock

    /// A channel posting through `client`, signing with `keys`.
    public init(client: OutboundHTTPClient, keys: WebhookSigningKeys, clock: any WallClock) {
        self.client = client
        self.keys = keys
        self.clock = clock
    }

    public func deliver(_ message: EmailMessage, delivery: EmailDelivery) async throws {
        guard let url = delivery.webhookURI else { throw EmailDeliveryFailure(description: "no webhookUri configured") }
        let body = Array(message.webhookBody.serialized().utf8)
        let secret = keys.secret(tenantId: message.tenantId, version: delivery.webhookSecretVersion)
        let signature = WebhookSigningKeys.signature(secret: secret, timestamp: clock.now().seconds, body: body)
        do {
            _ = try await client.post(
                url,
                headers: [
                    ("Content-Type", "application/json"), (WebhookSigningKeys.signatureHeader, signature),
                    ("Portcullis-Message-Id", message.id),
                ], body: body)
        } catch {
            throw EmailDeliveryFailure(description: "webhook: \(error)")
        }
    }
}

/// `SENDMAIL`: pipes an RFC 5322 message to the local `sendmail -t -i` (the recipient is
/// read from the `To:` header; `-i` keeps a lone `.` line from ending the message).
/// A non-zero exit, or no exit within `timeout`, is a failed attempt.
public struct SendmailEmailChannel: EmailChannel {
    let path: String
    let defaultFrom: String
    let messageDomain: String
    let timeout: Duration
    /// Dates the messages (their `Date:` header).
    let clock: any WallClock

    /// A channel running the program at `path`.
    public init(
        path: String, defaultFrom: String, messageDomain: String, timeout: Duration = .seconds(30), clock: any WallClock
    ) {
        self.path = path
        self.defaultFrom = defaultFrom
        self.messageDomain = messageDomain
        self.timeout = timeout
        self.clock = clock
    }

    public func deliver(_ message: EmailMessage, delivery: EmailDelivery) async throws {
        let text = message.rfc5322(
            from: delivery.from ?? defaultFrom, template: delivery.template(for: message.kind, locale: message.locale),
            date: clock.now().date,
            messageDomain: messageDomain)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-t", "-i"]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exited.continuation.yield($0.terminationStatus) }
        do {
            try process.run()
        } catch {
            throw EmailDeliveryFailure(description: "sendmail: cannot run \(path): \(error.localizedDescription)")
        }
        // Messages are far below a pipe's buffer, and the program reads its input first.
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try? input.fileHandleForWriting.close()
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await exited.stream.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let status else {
            process.terminate()
            throw EmailDeliveryFailure(description: "sendmail: no exit within \(timeout)")
        }
        guard status == 0 else {
            let stderr = (try? errors.fileHandleForReading.readToEnd()).flatMap { $0 }.map {
                String(decoding: $0.prefix(300), as: UTF8.self)
            }
            throw EmailDeliveryFailure(description: "sendmail exited with status \(status): \(stderr ?? "")")
        }
    }
}

/// `LOG`: writes the message, link included, to the daemon's log. For development only:
/// anyone who reads the log can use the links.
public struct LogEmailChannel: EmailChannel {
    let logger: Logger

    /// A channel logging through `logger`.
    public init(logger: Logger) {
        self.logger = logger
    }

    public func deliver(_ message: EmailMessage, delivery: EmailDelivery) async throws {
        logger.notice(
            "email action (LOG delivery, development only)",
            metadata: [
                "type": "\(message.kind.rawValue)", "to": "\(message.recipient)", "tenant": "\(message.scope.key)",
                "link": "\(message.link)",
            ])
    }
}
