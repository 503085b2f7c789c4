public import MarqueeCore

extension LocalDate {
    /// The days from `from` to `to` (default: `from`), both `YYYY-MM-DD`, `step` days apart; at most ten years of
    /// them.
    ///
    /// - Throws: An ``OperationsError`` for a day it cannot read, `to` before `from`, or more than ten years.
    public static func range(from: String, to: String?, step: Int) throws(OperationsError) -> [LocalDate] {
        guard let first = LocalDate(parsing: from), let last = LocalDate(parsing: to ?? from) else {
            throw OperationsError(.enqueue, "--from and --to must be days as YYYY-MM-DD")
        }
        guard first <= last else { throw OperationsError(.enqueue, "--to is before --from") }
        var days: [LocalDate] = []
        var day = first
        while day <= last {
            guard days.count < 3660 / step else { throw OperationsError(.enqueue, "at most ten years of days at once") }
            days.append(day)
            day = day.adding(days: Int64(step))
        }
        return days
    }
}
