public import Logging
import PortcullisStore
public import ServiceLifecycle

/// Scheduled key rotation: every hour, rotates each tenant whose active key is
/// older than the rotation period. Several instances may run it: the rotation
/// takes an advisory lock, and a key rotated by one instance is no longer due
/// for the others.
public struct KeyRotationService: Service {
    let keys: SigningKeyRepository
    let keyrings: KeyringService
    let period: Duration
    let checkInterval: Duration
    let logger: Logger

    /// Rotates keys older than `period`, checking every `checkInterval`.
    public init(
        keys: SigningKeyRepository, keyrings: KeyringService, period: Duration, checkInterval: Duration = .seconds(3600),
        logger: Logger
    ) {
        self.keys = keys
        self.keyrings = keyrings
        self.period = period
        self.checkInterval = checkInterval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // The first pass waits a minute: start-up migrations run meanwhile.
            var pause = min(checkInterval, .seconds(60))
            while !Task.isCancelled {
                do { try await Task.sleep(for: pause) } catch { return }
                await rotateDueKeys()
                pause = checkInterval
            }
        }
    }

    /// One pass: rotates every due tenant; failures are logged and retried next pass.
    func rotateDueKeys() async {
        do {
            for tenantId in try await keys.tenantsDueForRotation(maximumAge: Int(period.components.seconds)) {
                do {
                    _ = try await keyrings.rotate(tenantId: tenantId, actor: "system")
                    logger.notice("rotated signing key", metadata: ["tenant": "\(tenantId ?? "(project)")"])
                } catch {
                    logger.error("scheduled key rotation failed", metadata: ["tenant": "\(tenantId ?? "(project)")"])
                }
            }
        } catch {
            logger.warning("scheduled key rotation could not list keys")
        }
    }
}
