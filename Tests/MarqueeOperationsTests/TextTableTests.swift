import MarqueeOperations
import Testing

@Suite struct TextTableTests {
    @Test func columnsAlignByDisplayWidthAndLongCellsAreCut() {
        var table = TextTable([
            .init(header: "NAME"), .init(header: "N", alignment: .right), .init(header: "NOTE", maxWidth: 6),
        ])
        table.append(["기생충", "1", "ok"])
        table.append(["Up", "120", "a\tlong note"])
        table.append(["x"])
        #expect(
            table.render() == """
                NAME      N  NOTE
                기생충    1  ok
                Up      120  a lon…
                x
                """
        )
    }

    @Test func withoutHeaderOnlyTheRowsAreRendered() {
        var table = TextTable([.init(header: "WIDE HEADER"), .init(header: "", alignment: .right)])
        table.append(["a", "10"])
        table.append(["bb", "2"])
        #expect(table.render(showingHeader: false) == "a            10\nbb            2")
    }

    @Test func wideCharactersTakeTwoColumnsAndMarksNone() {
        #expect(DisplayWidth.of("日本語") == 6)
        #expect(DisplayWidth.of("ｓｐｉｄｅｒ") == 12)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("👍") == 2)
        #expect(DisplayWidth.of("a\u{200B}b") == 2)
    }

    @Test func truncationNeverSplitsAWideCharacterAndEndsWithAnEllipsis() {
        #expect(DisplayWidth.truncate("기생충 2019", to: 6) == "기생…")
        #expect(DisplayWidth.truncate("short", to: 5) == "short")
        #expect(DisplayWidth.printable("two\nlines\u{7F}") == "two lines ")
    }
}
