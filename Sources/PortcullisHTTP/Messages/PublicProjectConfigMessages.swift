import Hummingbird

/// `GET /v1/projects` (v3's `getProjectConfig`): what a client app may know of the project
/// before anyone signs in, as Google answers an app (the switches it lists only for a
/// developer's credentials are not here). The JavaScript SDK reads `authorizedDomains` to
/// check the page's origin before a popup or redirect sign-in.
struct PublicProjectConfigResponse: ResponseEncodable {
    let projectId: String
    /// Hosts an app page or continue URL may be served from (with their subdomains).
    let authorizedDomains: [String]
}
