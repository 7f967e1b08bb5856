import ArgumentParser

/// The `portcullis` command: the daemon and its operator tools.
@main
struct Portcullis: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portcullis",
        abstract: "A multi-tenant authentication gateway speaking the Firebase Auth REST API.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, DevCommand.self, AdminKeysCommand.self, TenantsCommand.self,
            UsersCommand.self,
        ]
    )
}
