import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The verifier's two requests to the gateway: a JWKS, and a revocation check.
struct GatewayClient: Sendable {
    /// The most a JWKS or error answer may weigh.
    static let maximumBodySize = 1 << 20

    let configuration: VerifierConfiguration

    /// A fetched JWKS and how long it may be cached.
    struct FetchedKeys: Sendable {
        let keySet: KeySet
        let lifetime: Duration
    }

    /// Fetches and parses the JWKS at `url`.
    ///
    /// `unknownTenant` when a tenant's JWKS answers 404; `jwksUnavailable` for any other
    /// failure (transport, status, body).
    func fetchJWKS(_ url: String, tenant: String?, generation: Int) async -> Result<FetchedKeys, TokenVerificationError> {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        do {
            let response = try await configuration.httpClient.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: Self.maximumBodySize)
            switch response.status.code {
            case 200: break
            case 404 where tenant != nil: return .failure(.unknownTenant)
            default: return .failure(.jwksUnavailable(reason: "the gateway answered \(response.status.code)"))
            }
            guard let keySet = try? await KeySet.parse(Data(buffer: body), generation: generation) else {
                return .failure(.jwksUnavailable(reason: "the answer is not a JWKS"))
            }
            return .success(FetchedKeys(keySet: keySet, lifetime: lifetime(of: response.headers)))
        } catch {
            return .failure(.jwksUnavailable(reason: Self.describe(error)))
        }
    }

    /// Asks the gateway whether the session of an (already verified) token is still valid.
    ///
    /// 200 is valid; 401 is `revoked` with the gateway's code; anything else `gatewayUnavailable`.
    func checkRevoked(_ token: String, tenant: String?) async throws(TokenVerificationError) {
        var request = HTTPClientRequest(url: configuration.revocationCheckURL)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "X-Tenant-Id", value: tenant ?? "")
        let status: UInt
        let body: ByteBuffer
        do {
            let response = try await configuration.httpClient.execute(request, timeout: timeout)
            body = try await response.body.collect(upTo: Self.maximumBodySize)
            status = response.status.code
        } catch {
            throw .gatewayUnavailable(reason: Self.describe(error))
        }
        switch status {
        case 200: return
        case 401: throw .revoked(detail: Self.errorDetail(body))
        default: throw .gatewayUnavailable(reason: "the gateway answered \(status)")
        }
    }

    private var timeout: TimeAmount {
        let (seconds, attoseconds) = configuration.requestTimeout.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// How long a JWKS answer may be cached: `Cache-Control: max-age` less `Age`, at most a
    /// day; nothing for `no-store`/`no-cache`; ``VerifierConfiguration/defaultCacheDuration``
    /// without a `max-age`.
    func lifetime(of headers: HTTPHeaders) -> Duration {
        let directives = headers["Cache-Control"].flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        if directives.contains("no-store") || directives.contains("no-cache") { return .zero }
        guard let maxAge = directives.lazy.compactMap({ $0.hasPrefix("max-age=") ? Int($0.dropFirst(8)) : nil }).first else {
            return configuration.defaultCacheDuration
        }
        let age = headers.first(name: "Age").flatMap { Int($0) } ?? 0
        return .seconds(min(max(maxAge - max(age, 0), 0), 86_400))
    }

    /// The detail of a Google error envelope's message (`UNAUTHENTICATED : TOKEN_EXPIRED` →
    /// `TOKEN_EXPIRED`), sanitised; `UNAUTHENTICATED` when the body says nothing readable.
    static func errorDetail(_ body: ByteBuffer) -> String {
        struct Envelope: Decodable {
            struct Body: Decodable { let message: String? }
            let error: Body
        }
        guard let message = (try? JSONDecoder().decode(Envelope.self, from: body))?.error.message, !message.isEmpty else {
            return "UNAUTHENTICATED"
        }
        let detail = message.range(of: " : ").map { message[$0.upperBound...] } ?? message[...]
        return TokenVerificationError.sanitised(detail, limit: 128)
    }

    /// A transport failure in words, without the URL's query or anything the token held.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError: TokenVerificationError.sanitised(String(describing: error), limit: 128)
        default: TokenVerificationError.sanitised(String(describing: type(of: error)), limit: 128)
        }
    }
}
