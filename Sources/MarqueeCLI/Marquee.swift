import ArgumentParser

/// `marquee`: the operator CLI.
@main
struct Marquee: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee",
        abstract: "Operate the Marquee ingestion pipeline.",
        discussion: """
            Settings come from flags, then environment variables (MARQUEE_BROKERS, MARQUEE_STORE, …), then defaults.
            The local stack (broker and PostgreSQL) is started by `make up` (scripts/stack.sh). Every subcommand \
            has its own --help with examples.

            Examples:
              marquee topics create
              marquee enqueue tmdb-list popular --pages 1-5 --language ko-KR,en-US --details --images
              marquee lag --watch
              marquee dlq list --stage fetch --since 1h
              marquee status
              marquee query counts
              marquee sources

            Shell completion: marquee --generate-completion-script bash > /etc/bash_completion.d/marquee (also zsh, \
            fish); `make completions` writes them for every executable into var/completions/.
            """,
        subcommands: [
            Enqueue.self, Topics.self, Lag.self, DLQ.self, Status.self, Drain.self, Dashboard.self, Query.self,
            Groups.self, Job.self, Sources.self, RoundTrip.self, Images.self,
        ]
    )
}
