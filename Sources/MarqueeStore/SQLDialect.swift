import Foundation

/// What differs between the two engines' SQL. Everything else is written once.
///
/// Rows travel to the server as **one JSON array per statement** (`[{"movie_id": 550, …}, …]`), which the
/// server unpacks itself (`json_to_recordset` on PostgreSQL, `json_each` on SQLite): one round trip and one
/// parameter per table and batch, whatever the batch size, and no per-row statements.
enum SQLDialect: Sendable {
    case postgres
    case sqlite

    /// The migration SQL with its type placeholders filled in.
    func ddl(_ sql: String) -> String {
        var sql = sql
        for type in [ColumnType.int, .real, .text, .bool, .date, .json] {
            sql = sql.replacingOccurrences(of: "{\(type)}", with: self == .postgres ? type.postgres : type.sqlite)
        }
        return sql
    }

    /// Turns `?` placeholders into PostgreSQL's `$1, $2 …` (the queries here have no `?` in literals).
    func placeholders(_ sql: String) -> String {
        guard self == .postgres else { return sql }
        var result = ""
        var index = 0
        for character in sql {
            if character == "?" {
                index += 1
                result += "$\(index)"
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// `SELECT <columns> FROM <the JSON array parameter>`, typed.
    private func select(_ columns: [Column]) -> String {
        switch self {
        case .postgres:
            let names = columns.map(\.name).joined(separator: ", ")
            let types = columns.map { "\($0.name) \($0.type.postgres)" }.joined(separator: ", ")
            return "SELECT \(names) FROM json_to_recordset($1::json) AS r(\(types))"
        case .sqlite:
            let values = columns.map { "json_extract(value, '$.\($0.name)')" }.joined(separator: ", ")
            // `WHERE true` keeps SQLite from reading the upsert's ON CONFLICT as a join constraint.
            return "SELECT \(values) FROM json_each(?1) WHERE true"
        }
    }

    /// The natural key as text joined by U+001F, as ``RowWrite/key`` builds it.
    private func keyText(_ columns: [Column]) -> String {
        let parts = columns.map { self == .postgres ? "\($0.name)::text" : "CAST(\($0.name) AS TEXT)" }
        return parts.joined(separator: self == .postgres ? " || chr(31) || " : " || char(31) || ")
    }

    /// Inserts the rows, or replaces an existing row only when the new `fetched_at` is newer (merging the
    /// table's accumulating columns); returns the keys of the rows written (inserted or replaced), the batch's
    /// winners.
    func upsert(_ table: Table) -> String {
        let columns = table.columns
        let names = columns.map(\.name).joined(separator: ", ")
        let keys = table.key.map(\.name).joined(separator: ", ")
        let updates = (table.values + [Column(name: "fetched_at", type: .int)])
            .map { column in
                let value =
                    table.accumulating[column.name]?.sql(column.name, dialect: self) ?? "excluded.\(column.name)"
                return "\(column.name) = \(value)"
            }
            .joined(separator: ", ")
        let finished =
            table.keepsFinishedOutcomes
            ? " AND NOT (excluded.outcome = 'retried' AND t.outcome <> 'retried')" : ""
        return """
            INSERT INTO \(table.name) AS t (\(names)) \(self.select(columns)) \
            ON CONFLICT (\(keys)) DO UPDATE SET \(updates) WHERE t.fetched_at < excluded.fetched_at\(finished) \
            RETURNING \(self.keyText(table.key))
            """
    }

    /// Deletes the children of the parents whose keys are in the JSON parameter.
    ///
    /// On PostgreSQL a one-column key is matched with `= ANY (ARRAY(…))`, which the planner answers with the
    /// child's key index whatever it knows of the table. With `IN (SELECT …)` it guesses the join's selectivity,
    /// and on a table not yet analyzed (a first crawl or backfill into an empty store) it scanned the whole
    /// child table for every batch, a cost growing with the table.
    func deleteChildren(_ child: Table, parentKey: [Column]) -> String {
        if self == .postgres, parentKey.count == 1, let key = parentKey.first {
            return "DELETE FROM \(child.name) WHERE \(key.name) = ANY (ARRAY(\(self.select(parentKey))))"
        }
        let names = parentKey.map(\.name).joined(separator: ", ")
        return "DELETE FROM \(child.name) WHERE (\(names)) IN (\(self.select(parentKey)))"
    }

    /// Inserts child rows (a duplicate within the rows is skipped).
    func insertChildren(_ child: Table) -> String {
        let names = child.columns.map(\.name).joined(separator: ", ")
        let keys = child.key.map(\.name).joined(separator: ", ")
        return "INSERT INTO \(child.name) (\(names)) \(self.select(child.columns)) ON CONFLICT (\(keys)) DO NOTHING"
    }

    /// Links KOFIC movies to TMDB movies (``TitleMatching``) for the KOFIC codes and TMDB ids in the two JSON
    /// parameters (the rows a batch wrote), stamped with the third; returns a row per new link.
    ///
    /// Only the selects a batch needs are sent: those driven by its KOFIC codes when it wrote KOFIC movies, those
    /// driven by its TMDB ids when it wrote TMDB movies. Planning the four joins took longer than running them, on
    /// every batch.
    func linkMovies(byCodes: Bool, byMovieIDs: Bool) -> String {
        let codes: String
        let ids: String
        switch self {
        case .postgres:
            codes = "SELECT value FROM json_array_elements_text($1::json)"
            ids = "SELECT value::bigint FROM json_array_elements_text($2::json)"
        case .sqlite:
            codes = "SELECT value FROM json_each(?1)"
            ids = "SELECT value FROM json_each(?2)"
        }
        let stamp = self == .postgres ? "$3::bigint" : "?3"
        // The two matchings (title and year, original title and year), each limited by a filter on the batch's
        // keys, so that the keys drive it through an index (no OR across tables).
        func matchings(title: String, originalTitle: String) -> [String] {
            [
                """
                SELECT k.movie_cd, tr.movie_id, 'title+year', \(stamp)
                  FROM kofic_movies k
                  JOIN movie_translations tr ON tr.title_norm = k.title_norm
                  JOIN movies m ON m.movie_id = tr.movie_id
                 WHERE \(title) AND m.release_year BETWEEN k.year - 1 AND k.year + 1
                """,
                """
                SELECT k.movie_cd, m.movie_id, 'original-title+year', \(stamp)
                  FROM kofic_movies k
                  JOIN movies m ON m.original_title_norm = k.title_en_norm
                 WHERE \(originalTitle) AND m.release_year BETWEEN k.year - 1 AND k.year + 1
                """,
            ]
        }
        var selects: [String] = []
        if byCodes {
            selects += matchings(title: "k.movie_cd IN (\(codes))", originalTitle: "k.movie_cd IN (\(codes))")
        }
        if byMovieIDs {
            selects += matchings(title: "tr.movie_id IN (\(ids))", originalTitle: "m.movie_id IN (\(ids))")
        }
        return """
            INSERT INTO movie_links (movie_cd, movie_id, method, linked_at)
            \(selects.joined(separator: "\nUNION\n"))
            ON CONFLICT (movie_cd, movie_id) DO NOTHING
            RETURNING movie_cd
            """
    }

    /// Whether the store holds any KOFIC movie: a batch of TMDB movies alone has nothing to link to otherwise.
    static let anyKOFICMovie = "SELECT 1 FROM kofic_movies LIMIT 1"
}
