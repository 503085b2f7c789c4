import MarqueeJSON

import struct Foundation.Data
import struct Foundation.URL

/// How far a run of `marquee enqueue tmdb-export` got: the state file that `--resume` continues from.
///
/// It is written after each batch's delivery is confirmed, never before, so it never claims a job that was not
/// sent. Lines are counted, not ids compared, so it is right whatever the order of the export's lines; the id
/// last sent, with its line, checks on resuming that the file is the same export.
public struct TMDBExportCheckpoint: Sendable, Hashable {
    /// The export's file name (`movie_ids_MM_DD_YYYY.json.gz`, or the name of the file given).
    public var export: String
    /// The file read: the download kept beside the state file, or the file given.
    public var path: String
    /// The file's size in bytes.
    public var size: Int64
    /// The options that decide which jobs a line makes (filters, languages, follow-ups).
    public var options: String
    /// Every line up to this one (from 1) has had all its jobs delivered, or made none.
    public var line: Int
    /// The line of the last movie whose jobs were sent, and its id; `nil` before the first.
    public var lastSent: (line: Int, id: Int64)?
    /// Jobs delivered, movies skipped by the filters, lines that were not movies: over every run so far.
    public var jobs: Int
    public var filtered: Int
    public var bad: Int
    /// Whether the whole export was read and sent.
    public var isComplete: Bool

    public init(export: String, path: String, size: Int64, options: String) {
        self.export = export
        self.path = path
        self.size = size
        self.options = options
        self.line = 0
        self.lastSent = nil
        self.jobs = 0
        self.filtered = 0
        self.bad = 0
        self.isComplete = false
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.json == rhs.json
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.json) }

    var json: JSONValue {
        var object: JSONObject = [
            "v": .integer(1), "export": .string(self.export), "path": .string(self.path),
            "size": .integer(self.size), "options": .string(self.options), "line": .integer(Int64(self.line)),
            "jobs": .integer(Int64(self.jobs)), "filtered": .integer(Int64(self.filtered)),
            "bad": .integer(Int64(self.bad)), "complete": .bool(self.isComplete),
        ]
        if let lastSent = self.lastSent {
            object["lastSentLine"] = .integer(Int64(lastSent.line))
            object["lastSentID"] = .integer(lastSent.id)
        }
        return .object(object)
    }

    /// Writes the state to `path` atomically (a temporary file renamed over it), so a kill leaves the old
    /// state or the new, never half of one.
    ///
    /// - Throws: An ``OperationsError`` when the file cannot be written.
    public func write(to path: String) throws(OperationsError) {
        do {
            try Data(self.json.encoded() + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw OperationsError(.enqueue, "cannot write the state file \(path): \(error.localizedDescription)")
        }
    }

    /// The state in `path`, or `nil` when there is no such file.
    ///
    /// - Throws: An ``OperationsError`` when the file exists but is not a state file.
    public static func read(from path: String) throws(OperationsError) -> TMDBExportCheckpoint? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return nil }
        func refuse(_ why: String) -> OperationsError {
            OperationsError(.enqueue, "\(path) is not a tmdb-export state file (\(why)); remove it to start over")
        }
        guard case .object(let object)? = JSONDocument.parse(Array(data)) else { throw refuse("not a JSON object") }
        func string(_ key: String) throws(OperationsError) -> String {
            guard case .string(let value)? = object[key] else { throw refuse("no \(key)") }
            return value
        }
        func integer(_ key: String) throws(OperationsError) -> Int64 {
            guard case .integer(let value)? = object[key] else { throw refuse("no \(key)") }
            return value
        }
        guard try integer("v") == 1 else { throw refuse("version \(try integer("v"))") }
        var checkpoint = TMDBExportCheckpoint(
            export: try string("export"),
            path: try string("path"),
            size: try integer("size"),
            options: try string("options")
        )
        checkpoint.line = Int(try integer("line"))
        checkpoint.jobs = Int(try integer("jobs"))
        checkpoint.filtered = Int(try integer("filtered"))
        checkpoint.bad = Int(try integer("bad"))
        guard case .bool(let complete)? = object["complete"] else { throw refuse("no complete") }
        checkpoint.isComplete = complete
        if case .integer(let line)? = object["lastSentLine"], case .integer(let id)? = object["lastSentID"] {
            checkpoint.lastSent = (Int(line), id)
        }
        return checkpoint
    }
}
