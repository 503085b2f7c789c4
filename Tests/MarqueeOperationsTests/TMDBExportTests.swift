import MarqueeCore
import MarqueeGzip
import MarqueeOperations
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.ProcessInfo

/// A file in the temporary folder, removed by ``remove()``.
struct TemporaryFile {
    let path: String

    init(_ bytes: [UInt8], suffix: String = ".json.gz") {
        self.path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("tmdb-export-\(ProcessInfo.processInfo.globallyUniqueString)\(suffix)").path
        _ = FileManager.default.createFile(atPath: self.path, contents: Data(bytes))
    }

    func remove() { try? FileManager.default.removeItem(atPath: self.path) }
}

/// Export lines as TMDB writes them.
func exportLines(_ ids: some Sequence<Int>, popularity: (Int) -> Double = { Double($0 % 10) }) -> [String] {
    ids.map {
        #"{"adult":\#($0 % 50 == 0),"id":\#($0),"original_title":"Movie \#($0)","popularity":\#(popularity($0)),"video":false}"#
    }
}

func gzipped(_ lines: [String]) throws -> [UInt8] {
    try GzipEncoder.compress(Array((lines.joined(separator: "\n") + "\n").utf8))
}

@Suite struct TMDBExportTests {
    @Test func fileNamesAndTheLatestDay() throws {
        let day = try #require(LocalDate(parsing: "2026-03-07"))
        #expect(TMDBExport.fileName(day) == "movie_ids_03_07_2026.json.gz")
        #expect(
            TMDBExport.url(baseURL: "http://files.tmdb.org/p/exports/", day: day)
                == "http://files.tmdb.org/p/exports/movie_ids_03_07_2026.json.gz"
        )
        // 2026-03-07 07:59:59 UTC: today's is not expected yet, so yesterday's first.
        let beforePublishing: Int64 = 1_772_870_399
        #expect(TMDBExport.day(epochSeconds: beforePublishing) == day)
        #expect(
            TMDBExport.latestDays(epochSeconds: beforePublishing) == [
                LocalDate(parsing: "2026-03-06"), LocalDate(parsing: "2026-03-05"),
            ]
        )
        #expect(TMDBExport.latestDays(epochSeconds: beforePublishing + 1) == [day, LocalDate(parsing: "2026-03-06")])
        #expect(TMDBExport.day(epochSeconds: 0) == LocalDate(parsing: "1970-01-01"))
        #expect(TMDBExport.day(epochSeconds: 951_782_400) == LocalDate(parsing: "2000-02-29"))
    }

    @Test func linesAreReadForTheirIdPopularityAndAdultFlag() throws {
        let good = TMDBExportEntry.parse(
            Array(#"{"adult":true,"id":3924,"original_title":"Blondie","popularity":2.9,"video":false}"#.utf8)
        )
        #expect(try good.get() == TMDBExportEntry(id: 3924, popularity: 2.9, isAdult: true))
        #expect(
            try TMDBExportEntry.parse(Array(#"{"id":7}"#.utf8)).get()
                == TMDBExportEntry(id: 7, popularity: 0, isAdult: false)
        )
        for (line, reason) in [
            (#"{"id":"7"}"#, "\"id\" is not a positive integer"), (#"{"id":0}"#, "\"id\" is not a positive integer"),
            (#"{"adult":false}"#, "no \"id\""), (#"[1,2]"#, "not a JSON object"), (#"{"id":7"#, "not a JSON value"),
            (#"{"id":7,"popularity":"high"}"#, "\"popularity\" is not a number"),
            (#"{"id":7,"adult":"no"}"#, "\"adult\" is not a boolean"),
        ] {
            guard case .failure(let error) = TMDBExportEntry.parse(Array(line.utf8)) else {
                Issue.record("\(line) was read as a movie")
                continue
            }
            #expect(error.reason == reason, "\(line)")
        }
    }

    @Test func theFilterKeepsPopularEnoughMoviesAndAdultOnesOnlyWhenAsked() {
        let filter = TMDBExportFilter(minPopularity: 1.5)
        #expect(filter.admits(TMDBExportEntry(id: 1, popularity: 1.5, isAdult: false)))
        #expect(!filter.admits(TMDBExportEntry(id: 1, popularity: 1.4, isAdult: false)))
        #expect(!filter.admits(TMDBExportEntry(id: 1, popularity: 9, isAdult: true)))
        #expect(TMDBExportFilter(includesAdult: true).admits(TMDBExportEntry(id: 1, popularity: 0, isAdult: true)))
    }
}

@Suite struct TMDBExportReaderTests {
    static func lines(of path: String) throws -> [(Int, String)] {
        let reader = try TMDBExportReader(path: path)
        var lines: [(Int, String)] = []
        while let (number, bytes) = try reader.nextLine() {
            lines.append((number, String(decoding: bytes, as: UTF8.self)))
        }
        #expect(reader.bytesRead == reader.size)
        return lines
    }

    @Test func aGzipExportIsReadLineByLineInPieces() throws {
        // 30,000 lines: several 64 KB pieces of the file, many more of text.
        let expected = exportLines(1...30_000)
        let file = TemporaryFile(try gzipped(expected))
        defer { file.remove() }
        let lines = try Self.lines(of: file.path)
        #expect(lines.map(\.1) == expected)
        #expect(lines.map(\.0) == Array(1...30_000))
    }

    @Test func plainLinesWindowsLineBreaksAndNoFinalBreakAreRead() throws {
        let file = TemporaryFile(Array("{\"id\":1}\r\n\n{\"id\":2}".utf8), suffix: ".json")
        defer { file.remove() }
        let lines = try Self.lines(of: file.path)
        #expect(lines.map(\.0) == [1, 2, 3])
        #expect(lines.map(\.1) == ["{\"id\":1}", "", "{\"id\":2}"])
    }

    @Test func anEmptyFileIsRefused() throws {
        let file = TemporaryFile([])
        defer { file.remove() }
        #expect { try TMDBExportReader(path: file.path) } throws: {
            ($0 as? OperationsError)?.reason == "\(file.path) is empty: not a TMDB export"
        }
        #expect { try TMDBExportReader(path: "/nonexistent/movie_ids.json.gz") } throws: {
            ($0 as? OperationsError)?.reason.contains("cannot read /nonexistent/movie_ids.json.gz") == true
        }
    }

    @Test func aCutGzipStopsWithTheLineItReached() throws {
        let compressed = try gzipped(exportLines(1...30_000))
        let file = TemporaryFile(Array(compressed.prefix(compressed.count * 2 / 3)))
        defer { file.remove() }
        let reader = try TMDBExportReader(path: file.path)
        var count = 0
        do {
            while try reader.nextLine() != nil { count += 1 }
            Issue.record("a cut file was read to its end")
        } catch {
            #expect(count > 10_000)
            #expect(error.reason.contains("is cut off after line \(count)"), "\(error.reason)")
        }
    }

    @Test func aLineLongerThanAnyExportsIsRefused() throws {
        let file = TemporaryFile(try GzipEncoder.compress([UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)))
        defer { file.remove() }
        let reader = try TMDBExportReader(path: file.path)
        #expect { _ = try reader.nextLine() } throws: {
            ($0 as? OperationsError)?.reason.contains("line 1 of \(file.path) is longer than") == true
        }
    }
}
