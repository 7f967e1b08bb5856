import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import Synchronization

/// The fake provider's endpoints (listed on ``FakeIdentityProvider``).
extension FakeIdentityProvider {
    static func makeRouter(_ state: SharedState) -> Router<BasicRequestContext> {
        let router = Router()
        router.get(".well-known/openid-configuration") { request, _ -> Response in
            let base = "http://\(request.head.authority ?? "127.0.0.1")"
            return json(
                .object([
                    "issuer": .string(base), "jwks_uri": .string(base + "/jwks"),
                    "userinfo_endpoint": .string(base + "/userinfo"),
                    "id_token_signing_alg_values_supported": .array([.string("RS256")]),
                ]))
        }
        router.get("jwks") { _, _ -> Response in
            let (failing, delay, maxAge, keys) = state.values.withLock { values in
                values.jwksFetches += 1
                let keys = values.published.compactMap { kid in values.keys[kid].map { (kid, $0) } }
                return (values.jwksFailing, values.jwksDelay, values.jwksMaxAge, keys)
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            if failing { return Response(status: .serviceUnavailable) }
            let jwks: [JSONValue] = keys.compactMap { kid, key in
                VerificationKey(rsaPEM: key.publicKey.pemRepresentation, kid: kid)?.jwk
            }
            var response = json(.object(["keys": .array(jwks)]))
            if let maxAge { response.headers[.cacheControl] = "public, max-age=\(maxAge)" }
            return response
        }
        router.get("userinfo") { request, _ -> Response in
            let authorization = request.headers[.authorization] ?? ""
            guard authorization.hasPrefix("Bearer "),
                let profile = state.values.withLock({ $0.profiles[String(authorization.dropFirst(7))] })
            else {
                return json(.object(["error": .string("invalid_token")]), status: .unauthorized)
            }
            return json(profile)
        }
        router.post("revoke") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 65_536)
            let form = URLEncodedForm.fields(Array(body.readableBytesView)) ?? [:]
            state.values.withLock { $0.revocations.append(form) }
            return Response(status: .ok)
        }
        router.get("hang") { _, _ -> Response in
            try await Task.sleep(for: .seconds(3600))
            return Response(status: .noContent)
        }
        router.get("drip") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    while !Task.isCancelled {
                        try await writer.write(ByteBuffer(bytes: [UInt8(ascii: " ")]))
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("redirect") { _, _ -> Response in
            var response = Response(status: .found)
            response.headers[.location] = "http://example.com/jwks"
            return response
        }
        router.get("large") { _, _ -> Response in
            Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 2 << 20)))
        }
        router.get("large-stream") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<32 { try await writer.write(ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 << 10)) }
                    try await writer.finish(nil)
                })
        }
        router.get("status/:code") { _, context -> Response in
            let code = context.parameters.get("code").flatMap(Int.init) ?? 500
            return Response(status: HTTPResponse.Status(code: code))
        }
        return router
    }

    private static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }
}
