public import Hummingbird

/// Counts successful requests by the tenant they acted for
/// (`portcullis_tenant_requests_total{tenant}`).
///
/// The tenant is the path's `{tenant}` on admin routes; on the others, the route records it
/// in the context as it learns it (the body's `tenantId`, read by ``LenientRequestDecoder``;
/// the refresh token's or ID token's tenant on `/v1/token` and `/v1/verify`). Only a success
/// proves the tenant exists, so failures are not counted by tenant (the per-route counters
/// have them).
public struct TenantMetricsMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    let metrics: HTTPMetrics

    /// Counts into `metrics`.
    public init(metrics: HTTPMetrics) {
        self.metrics = metrics
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let tenant = context.parameters.get("tenant") { context.tenant.set(tenant) }
        let response = try await next(request, context)
        if (200..<300).contains(response.status.code), let tenant = context.tenant.id {
            metrics.recordTenantRequest(tenant)
        }
        return response
    }
}
