import CAllocationCounter

#if canImport(Glibc)
// Where Linux's `timespec` comes from once MemberImportVisibility asks.
import CDispatch
import Glibc
#else
import Darwin
#endif

/// One implementation of a workload: `run` processes the whole input once and returns a
/// checksum, so the optimiser cannot drop the work.
struct Implementation {
    let name: String
    let run: () -> Int
}

/// A workload and its implementations; `operations` is how many payloads one `run` processes.
struct Workload {
    let name: String
    /// The corpus folder a `*.corpus` workload ran on.
    var corpus: String? = nil
    let operations: Int
    let bytes: Int
    let implementations: [Implementation]
}

struct Measurement {
    let workload: String
    let corpus: String?
    let implementation: String
    let bytesPerOperation: Int
    let nanoseconds: (median: Double, min: Double, max: Double)
    let allocationsPerOperation: Double?
    /// Baseline median over PushCore's median: how many times faster PushCore is.
    var pushcoreSpeedup: Double?
    /// For `stream.file`: how far resident memory rose while streaming.
    var peakResidentGrowth: Int?
    /// The same row's median in the run given to `--compare`.
    var earlierMedian: Double?
    /// For `apns.send`: each request's latency, median and 99th percentile, in nanoseconds.
    var latency: (p50: Double, p99: Double)?
    /// For `apns.send*`: the process's CPU time (user and system) per operation, median, min and max.
    var cpuPerOperation: (median: Double, min: Double, max: Double)?
    /// The allocations were counted over every thread of the process, not the measuring thread's.
    var allocationsCountProcess = false

    var megabytesPerSecond: Double { Double(bytesPerOperation) / nanoseconds.median * 1e3 }
    var operationsPerSecond: Double { 1e9 / nanoseconds.median }
}

struct BenchOptions {
    var samples = 15
    var sampleNanoseconds = 20_000_000.0
    var warmUpNanoseconds = 100_000_000.0
    static let quick = BenchOptions(samples: 3, sampleNanoseconds: 2_000_000, warmUpNanoseconds: 5_000_000)
}

/// Accumulates checksums; printed at the end so no result is dead.
nonisolated(unsafe) var blackHole = 0

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Times `iterations` runs; returns nanoseconds.
func timed(_ run: () -> Int, iterations: Int) -> Double {
    let start = monotonicNanoseconds()
    var checksum = 0
    for _ in 0..<iterations { checksum &+= run() }
    let end = monotonicNanoseconds()
    blackHole &+= checksum
    return Double(end - start)
}

/// Warms every implementation up, sizes its samples, then takes samples round-robin so that
/// machine noise hits all implementations alike.
func measure(_ workload: Workload, options: BenchOptions) -> [Measurement] {
    var iterations: [Int] = []
    for implementation in workload.implementations {
        var elapsed = 0.0
        var runs = 0
        while elapsed < options.warmUpNanoseconds || runs < 2 {
            elapsed += timed(implementation.run, iterations: 1)
            runs += 1
        }
        let perRun = elapsed / Double(runs)
        iterations.append(max(1, Int(options.sampleNanoseconds / perRun)))
    }
    var samples = [[Double]](repeating: [], count: workload.implementations.count)
    for _ in 0..<options.samples {
        for (index, implementation) in workload.implementations.enumerated() {
            let elapsed = timed(implementation.run, iterations: iterations[index])
            samples[index].append(elapsed / Double(iterations[index] * workload.operations))
        }
    }
    var measurements: [Measurement] = []
    for (index, implementation) in workload.implementations.enumerated() {
        let sorted = samples[index].sorted()
        measurements.append(
            Measurement(
                workload: workload.name, corpus: workload.corpus, implementation: implementation.name,
                bytesPerOperation: workload.bytes / max(workload.operations, 1),
                nanoseconds: (sorted[sorted.count / 2], sorted.first!, sorted.last!),
                allocationsPerOperation: allocations(implementation.run, operations: workload.operations)))
    }
    let ours = measurements.first { $0.implementation == "pushcore" }?.nanoseconds.median
    for index in measurements.indices where measurements[index].implementation != "pushcore" {
        if let ours { measurements[index].pushcoreSpeedup = measurements[index].nanoseconds.median / ours }
    }
    return measurements
}

/// Heap allocations per operation in steady state (after warm-up), counted by wrapping malloc.
func allocations(_ run: () -> Int, operations: Int) -> Double? {
    guard pushcore_allocation_counting_available() else { return nil }
    blackHole &+= run()
    let before = pushcore_thread_allocation_count()
    blackHole &+= run()
    let after = pushcore_thread_allocation_count()
    return Double(after - before) / Double(max(operations, 1))
}
