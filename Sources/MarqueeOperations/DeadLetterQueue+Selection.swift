public import MarqueeKafka

// MARK: - DeadLetterQueue + letters named by id

extension DeadLetterQueue {
    /// The letters `ids` name, each once, in the order first named, and the ids that name no letter (in the same
    /// order).
    ///
    /// - Throws: A ``KafkaError`` when the broker refuses or does not answer.
    public func letters(
        named ids: [DeadLetterID]
    ) async throws(KafkaError) -> (
        letters: [DeadLetter], missing: [DeadLetterID]
    ) {
        let unique = Self.unique(ids)
        return Self.select(unique, from: try await self.letters(unique))
    }

    /// `ids` without repeats, in the order first named.
    static func unique(_ ids: [DeadLetterID]) -> [DeadLetterID] {
        var seen: Set<DeadLetterID> = []
        return ids.filter { seen.insert($0).inserted }
    }

    /// The letters of `found` that `ids` name, in their order, and the ids `found` lacks.
    static func select(
        _ ids: [DeadLetterID],
        from found: [DeadLetterID: DeadLetter]
    ) -> (letters: [DeadLetter], missing: [DeadLetterID]) {
        (ids.compactMap { found[$0] }, ids.filter { found[$0] == nil })
    }
}
