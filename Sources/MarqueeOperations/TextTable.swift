/// A table for a terminal: columns aligned by *display width*, so Korean, Japanese and Chinese text (two
/// columns per character) lines up with Latin text.
///
/// Every cell is made one line (``DisplayWidth/printable(_:)``) and cut to its column's ``Column/maxWidth``.
public struct TextTable: Sendable {
    /// Where a cell sits in its column.
    public enum Alignment: Sendable { case left, right }

    /// A column: its header, alignment and widest cell.
    public struct Column: Sendable {
        /// The header line's text (empty for a table printed without header).
        public var header: String
        /// Default: `.left`.
        public var alignment: Alignment
        /// Longer cells are cut with `…` to this many terminal columns. Default: 40.
        public var maxWidth: Int

        /// A column titled `header`.
        public init(header: String, alignment: Alignment = .left, maxWidth: Int = 40) {
            self.header = header
            self.alignment = alignment
            self.maxWidth = maxWidth
        }
    }

    /// The columns, left to right.
    public var columns: [Column]
    /// The rows added so far; a short row is padded with empty cells.
    public var rows: [[String]] = []

    /// An empty table of `columns`.
    public init(_ columns: [Column]) { self.columns = columns }

    /// Adds a row below the others.
    public mutating func append(_ row: [String]) { self.rows.append(row) }

    /// The header (unless `showingHeader` is false) and the rows, two spaces between columns, no trailing spaces.
    public func render(showingHeader: Bool = true) -> String {
        let cells = self.rows.map { row in
            self.columns.indices.map { index in
                DisplayWidth.truncate(
                    DisplayWidth.printable(index < row.count ? row[index] : ""),
                    to: self.columns[index].maxWidth
                )
            }
        }
        let widths = self.columns.indices.map { index in
            ([DisplayWidth.of(self.columns[index].header)] + cells.map { DisplayWidth.of($0[index]) }).max() ?? 0
        }
        func line(_ values: [String]) -> String {
            var text = ""
            for (index, value) in values.enumerated() {
                if index > 0 { text += "  " }
                let padding = String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(value)))
                text += self.columns[index].alignment == .left ? value + padding : padding + value
            }
            while text.last == " " { text.removeLast() }
            return text
        }
        return ((showingHeader ? [line(self.columns.map(\.header))] : []) + cells.map(line)).joined(separator: "\n")
    }
}
