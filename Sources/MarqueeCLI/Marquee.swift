import ArgumentParser

/// `marquee`: the operator CLI.
@main
struct Marquee: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee",
        abstract: "Operate the Marquee ingestion pipeline.",
        discussion: """
            Settings come from flags, then environment variables (MARQUEE_BROKERS, MARQUEE_STORE, …), then defaults.
            The local stack (broker and PostgreSQL) is started by `make up` (scripts/stack.sh).
            """,
        subcommands: [Enqueue.self, Topics.self, Status.self, Query.self, RoundTrip.self]
    )
}
