import Hummingbird

/// `GET /v1/projects` (v3's `getProjectConfig`): what a client app may know of the project
/// before anyone signs in. Old JavaScript SDKs read `authorizedDomains` at start-up to check
/// the page's origin before a popup or redirect sign-in.
struct PublicProjectConfigResponse: ResponseEncodable {
    let projectId: String
    /// Hosts an app page or continue URL may be served from (with their subdomains).
    let authorizedDomains: [String]
    /// Whether email and password sign-up and sign-in are on.
    let allowPasswordUser: Bool
    /// Whether anonymous sign-up is on.
    let enableAnonymousUser: Bool
}
