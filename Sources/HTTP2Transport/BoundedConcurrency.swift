/// `body` for every index below `count`, at most `limit` at once, the results in index order: a
/// send's requests, as many in flight as the client allows and no more.
@inlinable
package func boundedConcurrentMap<Result: Sendable>(
    count: Int, limit: Int, _ body: @escaping @Sendable (Int) async -> Result
) async -> [Result] {
    var results = [Result?](repeating: nil, count: count)
    await withTaskGroup(of: (Int, Result).self) { group in
        var next = 0
        while next < min(max(limit, 1), count) {
            let index = next
            group.addTask { (index, await body(index)) }
            next += 1
        }
        for await (index, result) in group {
            results[index] = result
            if next < count {
                let index = next
                group.addTask { (index, await body(index)) }
                next += 1
            }
        }
    }
    return results.map { $0! }
}
