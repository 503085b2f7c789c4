import Testing
@Suite struct Placeholder { @Test func x() {} }
