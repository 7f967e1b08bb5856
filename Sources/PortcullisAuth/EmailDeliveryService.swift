public import Logging
public import PortcullisCore
public import PortcullisCrypto
import PortcullisJSON
public import PortcullisStore
public import ServiceLifecycle

/// Delivers the email outbox: claims due messages (`EmailOutboxRepository`), hands each
/// to its tenant's channel, and records the outcome. Failed attempts are retried with
/// exponential backoff and jitter, and given up on (dead-lettered, audited) after
/// ``Configuration/maxAttempts``.
///
/// It wakes when this instance writes a message (``wake()``) and otherwise every
/// ``Configuration/pollInterval``, which is how messages written by another instance, or
/// left by one that died, are found.
public struct EmailDeliveryService: Service {
    /// The daemon-level settings of delivery.
    public struct Configuration: Sendable, Equatable {
        /// The channel of tenants (and project users) whose settings name none;
        /// `nil`: such tenants cannot send email actions.
        public var defaultDelivery: EmailDelivery?
        /// The `sendmail` program.
        public var sendmailPath = "/usr/sbin/sendmail"
        /// `From:` of sendmail messages for tenants that set none.
        public var defaultFrom = "noreply@localhost"
        /// The domains a tenant's `emailDelivery.from` may use with `SENDMAIL`
        /// (`email.allowed_from_domains`); empty: only the default `From:`.
        public var allowedFromDomains: [String] = []
        /// Attempts before a message is given up on.
        public var maxAttempts = 8
        /// The delay after the first failure; each further failure doubles it.
        public var retryBaseDelay: Duration = .seconds(10)
        /// The longest delay between attempts.
        public var retryMaxDelay: Duration = .seconds(3600)
        /// How often the outbox is scanned when nothing wakes the service.
        public var pollInterval: Duration = .seconds(5)
        /// How long one attempt holds a message before another instance may claim it: longer
        /// than the slowest attempt (`sendmail`'s 30 s, a webhook's 8 s, and the database's
        /// calls), and no longer, since a message whose attempt died with its daemon, or whose
        /// claim committed unacknowledged through a failover, waits this long for its next.
        public var lease: Duration = .seconds(60)
        /// Messages claimed (and delivered concurrently) at once.
        public var batchSize = 16

        /// The defaults.
        public init() {}
    }

    let configuration: Configuration
    let outbox: EmailOutboxRepository
    let tenants: TenantSettingsCache
    let masterKey: MasterKey
    let channels: [EmailDelivery.Channel: any EmailChannel]
    let webhookKeys: WebhookSigningKeys
    let audit: AuditLogRepository
    let schema: SchemaGate
    let logger: Logger
    private let doorbell = Doorbell()

    /// A delivery service over `outbox`, with one implementation per channel.
    public init(
        configuration: Configuration, outbox: EmailOutboxRepository, tenants: TenantSettingsCache, masterKey: MasterKey,
        channels: [EmailDelivery.Channel: any EmailChannel], webhookKeys: WebhookSigningKeys, audit: AuditLogRepository,
        schema: SchemaGate, logger: Logger
    ) {
        self.configuration = configuration
        self.outbox = outbox
        self.tenants = tenants
        self.masterKey = masterKey
        self.channels = channels
        self.webhookKeys = webhookKeys
        self.audit = audit
        self.schema = schema
        self.logger = logger
    }

    /// How messages of the tenant with `settings` are delivered: its own `emailDelivery`,
    /// else the project's, else the daemon's default; `nil` when none is configured.
    public func delivery(for settings: TenantSettings, tenant: TenantScope) async throws -> EmailDelivery? {
        if let own = settings.emailDelivery { return own }
        if tenant != .project, let project = try await tenants.settings(tenant: .project).emailDelivery { return project }
        return configuration.defaultDelivery
    }

    /// The secret the tenant's webhooks are signed with now (its `webhookSecretVersion`),
    /// for the receiver to configure; reading it is audited.
    public func webhookSecret(tenant: TenantScope, actor: String) async throws -> (secret: String, version: Int) {
        let settings = try await tenants.settings(tenant: tenant)
        let version = try await delivery(for: settings, tenant: tenant)?.webhookSecretVersion ?? 1
        try await audit.record(
            AuditEntry(
                tenantId: tenant.tenantId, actor: actor, action: "email.webhook_secret_read",
                target: tenant.tenantId.map { "tenants/\($0)" } ?? "config", after: .object(["version": .integer(Int64(version))])))
        return (webhookKeys.secret(tenantId: tenant.tenantId, version: version), version)
    }

    /// The context outbox contents are sealed under: a row moved to another tenant does not open.
    static func sealingContext(tenant: TenantScope) -> String {
        "portcullis email outbox v1:\(tenant.key)"
    }

    /// Asks the running service to look at the outbox now.
    public func wake() {
        doorbell.ring()
    }

    /// Delivers until graceful shutdown, which lets the attempts under way finish and record
    /// their outcome (a message left mid-attempt would stay leased, unsent, for the lease's
    /// length); only a hard cancellation stops them where they are.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await schema.wait() }
        guard schema.isOpen else { return }
        await withGracefulShutdownHandler {
            while !doorbell.isStopped && !Task.isCancelled {
                await deliverDue()
                await doorbell.wait(timeout: configuration.pollInterval)
            }
        } onGracefulShutdown: {
            doorbell.stop()
        }
    }

    /// Claims and delivers due messages until none is left (or the service stops); failures
    /// are recorded per message and a failing database is logged and left for the next pass.
    /// - Returns: how many messages were delivered.
    @discardableResult
    public func deliverDue() async -> Int {
        var delivered = 0
        while !Task.isCancelled && !doorbell.isStopped {
            let batch: [ClaimedMessage]
            do {
                batch = try await outbox.claimDue(limit: configuration.batchSize, lease: configuration.lease)
            } catch {
                logger.warning("email outbox unavailable; retrying at the next pass", metadata: ["error": "\(error)"])
                return delivered
            }
            if batch.isEmpty { return delivered }
            delivered += await withTaskGroup(of: Bool.self) { group in
                for message in batch { group.addTask { await attempt(message) } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        return delivered
    }

    /// One attempt at one message; whether it was delivered.
    private func attempt(_ claimed: ClaimedMessage) async -> Bool {
        let tenant = claimed.entry.scope
        do {
            let message = try open(claimed)
            let settings = try await tenants.settings(tenant: tenant)
            guard let delivery = try await delivery(for: settings, tenant: tenant),
                let channel = channels[delivery.channel]
            else { throw EmailDeliveryFailure(description: "no email delivery is configured") }
            try await channel.deliver(message, delivery: delivery)
            try await outbox.markDelivered(claimed)
            logger.info(
                "email action delivered",
                metadata: [
                    "message": "\(claimed.id)", "type": "\(claimed.entry.kind.rawValue)", "tenant": "\(tenant.key)",
                    "channel": "\(delivery.channel.rawValue)", "attempt": "\(claimed.attempts)",
                ])
            return true
        } catch {
            await recordFailure(claimed, reason: "\(error)")
            return false
        }
    }

    private func open(_ claimed: ClaimedMessage) throws -> EmailMessage {
        let entry = claimed.entry
        let bytes = try masterKey.open(entry.sealedContent, context: Self.sealingContext(tenant: entry.scope))
        return try EmailMessage(
            id: claimed.id, tenantId: entry.tenantId, kind: entry.kind, uid: entry.uid, recipient: entry.recipient,
            content: JSONValue.parse(bytes))
    }

    private func recordFailure(_ claimed: ClaimedMessage, reason: String) async {
        let giveUp = claimed.attempts >= configuration.maxAttempts
        let delay = giveUp ? nil : Self.backoff(attempt: claimed.attempts, configuration: configuration)
        let deadLetter =
            giveUp
            ? AuditEntry(
                tenantId: claimed.entry.tenantId, actor: "system", action: "email.dead_letter", target: "users/\(claimed.entry.uid)",
                after: .object([
                    "type": .string(claimed.entry.kind.rawValue), "message": .string(claimed.id),
                    "attempts": .integer(Int64(claimed.attempts)), "error": .string(String(reason.prefix(500))),
                ])) : nil
        do {
            guard try await outbox.markFailed(claimed, reason: reason, retryAfter: delay, deadLetter: deadLetter) else {
                // The attempt outlived its lease and the message was claimed again: the
                // newer attempt decides what becomes of it.
                logger.warning(
                    "email action delivery failed after its lease ran out; a later attempt owns the message",
                    metadata: ["message": "\(claimed.id)", "attempt": "\(claimed.attempts)", "reason": "\(reason)"])
                return
            }
        } catch {
            logger.warning("could not record an email delivery failure", metadata: ["message": "\(claimed.id)"])
        }
        logger.warning(
            giveUp ? "email action given up on" : "email action delivery failed; retrying",
            metadata: [
                "message": "\(claimed.id)", "type": "\(claimed.entry.kind.rawValue)", "tenant": "\(claimed.entry.scope.key)",
                "attempt": "\(claimed.attempts)", "reason": "\(reason)",
            ])
    }

    /// The wait before the attempt after `attempt` failed ones: the base delay doubled per
    /// failure, capped, then drawn from its upper half (jitter, so messages failing
    /// together do not retry together).
    static func backoff(attempt: Int, configuration: Configuration) -> Duration {
        let doubled = configuration.retryBaseDelay * (1 << min(max(attempt - 1, 0), 20))
        let capped = min(doubled, configuration.retryMaxDelay)
        return capped * Double.random(in: 0.5...1.0)
    }
}
