import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The gateway's end-user HTTP API, and nothing else: every request carries the API key
/// and, for a tenant, its `tenantId`; every failure becomes an ``AuthClientError``.
struct IdentityToolkitClient: Sendable {
    let configuration: AuthConfiguration

    /// A JSON request field.
    enum Field: Encodable, Sendable {
        case string(String)
        case bool(Bool)
        case strings([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .strings(let value): try container.encode(value)
            }
        }
    }

    /// `POST /v1/<operation>` with `fields` (plus `tenantId`), decoded as `Answer`.
    func post<Answer: Decodable>(_ operation: String, _ fields: [String: Field], as: Answer.Type = Answer.self) async throws -> Answer {
        var body = fields
        if let tenantId = configuration.tenantId { body["tenantId"] = .string(tenantId) }
        let data = try JSONEncoder().encode(body)
        return try await send(path: "/v1/\(operation)", body: data, contentType: "application/json")
    }

    /// `POST /v1/token`: a refresh token for a new ID token and the next refresh token.
    func refresh(_ refreshToken: String) async throws -> TokenResponse {
        var form = URLComponents()
        form.queryItems = [
            URLQueryItem(name: "grant_type", value: "refresh_token"), URLQueryItem(name: "refresh_token", value: refreshToken),
        ]
        // URLComponents leaves `+` alone in a query; a form body must not.
        let encoded = (form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return try await send(path: "/v1/token", body: Data(encoded.utf8), contentType: "application/x-www-form-urlencoded")
    }

    private func send<Answer: Decodable>(path: String, body: Data, contentType: String) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(configuration.baseURL)\(path)?key=\(Self.queryEscaped(configuration.apiKey))")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(data: body))
        let status: Int
        let data: Data
        do {
            let response = try await configuration.httpClient.execute(
                request, timeout: .nanoseconds(configuration.requestTimeout.nanoseconds))
            status = Int(response.status.code)
            // Identity Toolkit's answers are small; a body past this is not one.
            data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        } catch let error as AuthClientError {
            throw error
        } catch {
            throw AuthClientError(.networkRequestFailed, detail: String(describing: error))
        }
        guard (200..<300).contains(status) else {
            if let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: data) {
                throw AuthClientError(wireMessage: envelope.error.message, status: status)
            }
            throw AuthClientError(
                (500...599).contains(status) ? .networkRequestFailed : .internalError, detail: "HTTP \(status) without an error envelope",
                httpStatus: status)
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw AuthClientError(.internalError, detail: "unexpected answer to \(path): \(error)", httpStatus: status)
        }
    }

    private static func queryEscaped(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

extension Duration {
    /// The duration in whole nanoseconds (for NIO's `TimeAmount`).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
