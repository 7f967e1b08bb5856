public import Logging
import PortcullisCore
public import PortcullisStore
public import ServiceLifecycle

/// Scheduled key rotation: every hour, each tenant whose signing key is older than
/// the rotation period gets its next key published, to sign once verifiers' cached
/// JWKS have had time to pick it up (``KeyringService/scheduleRotation(tenant:dueAfterSeconds:)``).
/// Several instances may run it: the rotation takes an advisory lock and checks
/// again under it that the key is still due.
public struct KeyRotationService: Service {
    let keys: SigningKeyRepository
    let keyrings: KeyringService
    let period: Duration
    let checkInterval: Duration
    let schema: SchemaGate
    let logger: Logger

    /// Rotates keys older than `period`, checking every `checkInterval`.
    public init(
        keys: SigningKeyRepository, keyrings: KeyringService, period: Duration, checkInterval: Duration = .seconds(3600),
        schema: SchemaGate, logger: Logger
    ) {
        self.keys = keys
        self.keyrings = keyrings
        self.period = period
        self.checkInterval = checkInterval
        self.schema = schema
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // The first pass runs as soon as the schema is current, then every `checkInterval`.
            await schema.wait()
            while !Task.isCancelled {
                await rotateDueKeys()
                do { try await Task.sleep(for: checkInterval) } catch { return }
            }
        }
    }

    /// One pass: rotates every due tenant; failures are logged and retried next pass.
    func rotateDueKeys() async {
        do {
            let due = try await keys.tenantsDueForRotation(
                maximumAge: Int(period.components.seconds), at: keyrings.clock.now().date)
            for tenantId in due {
                do {
                    let period = Int(period.components.seconds)
                    if try await keyrings.scheduleRotation(tenant: TenantScope(tenantId), dueAfterSeconds: period) {
                        logger.notice(
                            "published the next signing key",
                            metadata: [
                                "tenant": "\(tenantId ?? "(project)")", "signs_in_seconds": "\(keyrings.rotationLeadSeconds)",
                            ])
                    }
                } catch {
                    logger.error("scheduled key rotation failed", metadata: ["tenant": "\(tenantId ?? "(project)")"])
                }
            }
        } catch {
            logger.warning("scheduled key rotation could not list keys")
        }
    }
}
