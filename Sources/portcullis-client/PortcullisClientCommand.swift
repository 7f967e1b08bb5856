import ArgumentParser
import Foundation
import PortcullisClient

/// `portcullis-client`: the client SDK from a terminal. The signed-in user is kept in a
/// file (``FilePersistence``), so it survives a restart: `sign-in`, then `whoami` in a
/// new process.
@main
struct PortcullisClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portcullis-client",
        abstract: "Sign in to a Portcullis gateway and watch the session, with the Swift client SDK.",
        subcommands: [SignIn.self, WhoAmI.self, Watch.self, SignOut.self])
}

/// Where to sign in; each option also from the environment.
struct GatewayOptions: ParsableArguments {
    @Option(help: "The gateway's URL (env PORTCULLIS_CLIENT_URL).")
    var url = ProcessInfo.processInfo.environment["PORTCULLIS_CLIENT_URL"] ?? "http://127.0.0.1:8080"

    @Option(help: "The end-user API key (env PORTCULLIS_CLIENT_API_KEY).")
    var apiKey = ProcessInfo.processInfo.environment["PORTCULLIS_CLIENT_API_KEY"] ?? ""

    @Option(help: "The project id (env PORTCULLIS_CLIENT_PROJECT).")
    var project = ProcessInfo.processInfo.environment["PORTCULLIS_CLIENT_PROJECT"] ?? "demo-project"

    @Option(help: "The tenant; project users when absent (env PORTCULLIS_CLIENT_TENANT).")
    var tenant: String?

    @Option(help: "Where the signed-in user is kept (default: $XDG_STATE_HOME/portcullis or ~/.local/state/portcullis).")
    var stateDirectory: String?

    func auth() -> Auth {
        let persistence = FilePersistence(directory: stateDirectory.map { URL(fileURLWithPath: $0) })
        return Auth(
            configuration: AuthConfiguration(
                baseURL: url, apiKey: apiKey, projectId: project,
                tenantId: (tenant ?? ProcessInfo.processInfo.environment["PORTCULLIS_CLIENT_TENANT"]).flatMap { $0.isEmpty ? nil : $0 },
                persistence: persistence))
    }
}

extension PortcullisClientCommand {
    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in", abstract: "Sign in (or, with --create, sign up) with an email and password; or anonymously.")

        @OptionGroup var gateway: GatewayOptions
        @Option(help: "The email.") var email: String?
        @Option(help: "The password (better: env PORTCULLIS_CLIENT_PASSWORD, out of the process list; never stored).")
        var password: String?
        @Flag(help: "Create the account first.") var create = false
        @Flag(help: "Sign in as a new anonymous user.") var anonymous = false

        func run() async throws {
            let auth = gateway.auth()
            let result: AuthResult
            if anonymous {
                result = try await report { try await auth.signInAnonymously() }
            } else {
                guard let email, let password = password ?? ProcessInfo.processInfo.environment["PORTCULLIS_CLIENT_PASSWORD"] else {
                    throw ValidationError("--email and --password (or --anonymous) are required")
                }
                result =
                    create
                    ? try await report { try await auth.createUser(email: email, password: password) }
                    : try await report { try await auth.signIn(email: email, password: password) }
            }
            print("signed in: \(describe(result.user))\(result.isNewUser ? " (new account)" : "")")
        }
    }

    struct WhoAmI: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "whoami", abstract: "Print the signed-in user, refreshed from the gateway.")

        @OptionGroup var gateway: GatewayOptions

        func run() async throws {
            guard let user = await gateway.auth().currentUser else {
                print("signed out")
                throw ExitCode(1)
            }
            try await report { try await user.reload() }
            let token = try await report { try await user.idTokenResult() }
            print(
                "\(describe(user)); token expires \(token.expirationDate.formatted(.iso8601)); signed in with \(token.signInProvider ?? "?")"
            )
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print auth-state and ID-token events until interrupted (or --count events), other processes' sign-ins and sign-outs included."
        )

        @OptionGroup var gateway: GatewayOptions
        @Option(help: "Stop after this many events.") var count: Int?

        func run() async throws {
            let auth = gateway.auth()
            let events = AsyncStream<String> { continuation in
                let states = Task {
                    for await user in await auth.authStateChanges {
                        continuation.yield("auth-state: \(user.map(describe) ?? "signed out")")
                    }
                }
                let tokens = Task {
                    for await user in await auth.idTokenChanges {
                        let expiry = user?.tokenExpirationDate.formatted(.iso8601) ?? "-"
                        continuation.yield("id-token: \(user.map(describe) ?? "signed out"), expires \(expiry)")
                    }
                }
                // Another process signing out, signing in or refreshing writes the shared
                // file: take it up, so this one neither misses a sign-out nor presents a
                // refresh token the other already rotated.
                let sync = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        await auth.syncWithPersistence()
                    }
                }
                continuation.onTermination = { _ in
                    states.cancel()
                    tokens.cancel()
                    sync.cancel()
                }
            }
            var seen = 0
            for await event in events {
                // Written at once, not buffered: a pipe reading the events sees each as it happens.
                FileHandle.standardOutput.write(Data("\(event)\n".utf8))
                seen += 1
                if let count, seen >= count { return }
            }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-out", abstract: "Sign out and forget the user.")

        @OptionGroup var gateway: GatewayOptions

        func run() async throws {
            await gateway.auth().signOut()
            print("signed out")
        }
    }
}

/// `uid <email> [tenant t] [verified]`.
func describe(_ user: User) -> String {
    var text = user.uid
    if let email = user.email { text += " <\(email)>\(user.isEmailVerified ? " verified" : "")" }
    if user.isAnonymous { text += " (anonymous)" }
    if let tenant = user.tenantId { text += " tenant \(tenant)" }
    return text
}

/// Runs `operation`; an SDK error is printed as Firebase names it, and exits 1.
func report<Value>(_ operation: () async throws -> Value) async throws -> Value {
    do {
        return try await operation()
    } catch let error as AuthClientError {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        throw ExitCode(1)
    }
}
