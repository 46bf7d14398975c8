// A deliberate data race, built and run by run.sh before the real tests: if ThreadSanitizer
// and the report directory do not catch this one, a clean run of the tests proves nothing.
import Foundation

final class Counter: @unchecked Sendable {
    var value = 0
}

let counter = Counter()
let threads = (0..<4).map { _ in
    Thread {
        for _ in 0..<10_000 { counter.value += 1 }  // unguarded on purpose
    }
}
threads.forEach { $0.start() }
Thread.sleep(forTimeInterval: 0.5)
print("planted race ran, counter \(counter.value)")
