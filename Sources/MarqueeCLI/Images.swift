import ArgumentParser
import Logging
import MarqueeCore
import MarqueeImageStore
import MarqueeOperations
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

/// `marquee images`: the image store's upkeep (docs/image-store.md, "Replaced images").
struct Images: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upkeep of the image store: remove the images nothing points to any more.",
        subcommands: [Collect.self]
    )
}

extension Images {
    /// `marquee images gc`: ``ImageCollection`` over the store and the image store.
    struct Collect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Remove the images no entity points to (replaced upstream), with their variants.",
            discussion: """
                An image changed upstream is stored under a new hash and its entity points to the new one; the old \
                one stays until this command finds that no entity points to it and no record named it within \
                --grace-hours. For each such image it forgets the validators naming it, removes its manifest, \
                variants and original from the image store (--image-store, else MARQUEE_IMAGE_STORE), then its \
                rows. At most --limit images a run, oldest hash first; --timeout bounds the whole run. Run it again \
                until it removes nothing.

                Examples:
                  marquee images gc --dry-run
                  marquee images gc --grace-hours 1 --json
                """
        )

        @OptionGroup var options: QueryOptions

        @Option(help: ArgumentHelp(Catalogue.imageStore, valueName: "location"))
        var imageStore: String?

        @Option(
            help: "Keep an image a record named within this many hours, referenced or not (a record may be on its way)."
        )
        var graceHours = 24

        @Option(help: "At most this many images a run.")
        var limit = 1_000

        @Flag(help: "List what would be removed; remove nothing.")
        var dryRun = false

        func validate() throws {
            guard self.graceHours >= 0 else { throw ValidationError("--grace-hours must not be negative") }
            guard self.limit >= 1 else { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            let settings = self.options.settings.settings(
                flags: Settings.flags([(Catalogue.imageStore, self.imageStore)])
            )
            let (location, environment) = try ConfigFileOptions.exitingOnSettingError(executable: "marquee") {
                () throws(SettingError) in
                (try settings.value(Catalogue.imageStore), try settings.texts(Catalogue.aws))
            }
            let images: any ImageStore
            do {
                images = try ImageStores.make(
                    location: location,
                    environment: environment,
                    fetcher: nil,
                    logger: Logger(label: "marquee")
                )
            } catch {
                throw fail("\(error) (--image-store or MARQUEE_IMAGE_STORE)", status: .configuration)
            }
            let before = Int64(JobID.nowMilliseconds()) - Int64(self.graceHours) * 3_600_000
            let (limit, dryRun, options) = (self.limit, self.dryRun, self.options)
            try await options.withStore { store in
                // The validators' `content` column (migration 4) may be newer than the store: the workers add it
                // on their first use, and a collection run before them adds it here.
                _ = try await store.migrate()
                let report = try await ImageCollection.collect(
                    store: store,
                    images: images,
                    recordedBefore: before,
                    limit: limit,
                    dryRun: dryRun
                )
                if options.json {
                    return try options.printJSON(
                        CollectionOutput(removed: report.removed, revived: report.revived, dryRun: dryRun)
                    )
                }
                let verb = dryRun ? "would remove" : "removed"
                print("\(verb) \(report.removed.count) images no entity points to")
                for hash in report.removed { print("  \(hash)") }
                if !report.revived.isEmpty {
                    print("kept \(report.revived.count) that an entity pointed to again meanwhile")
                }
            }
        }
    }

    /// `--json`'s document.
    struct CollectionOutput: Encodable {
        var removed: [String]
        var revived: [String]
        var dryRun: Bool

        enum CodingKeys: String, CodingKey {
            case removed, revived
            case dryRun = "dry_run"
        }
    }
}
