// What hashing one credential costs a request: the SHA-256 of an ingest key as
// `Authenticator` computes it on a cache miss (the token's UTF-8 bytes, then the hash).
//
//   swift build --product hash-benchmark && "$(swift build --show-bin-path)/hash-benchmark"
//
// Prints the median over 7 rounds of nanoseconds per hash. A program that prints a figure,
// not a timed test: compare runs of the same build mode on the same machine.
import Foundation
import WatchdogServer

let token = "wdi_k3f9a0c1d_" + String(repeating: "5e", count: 32)
let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 200_000
var sink: UInt8 = 0
var rounds: [Double] = []
for _ in 0..<7 {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<iterations {
        sink ^= CredentialHash.sha256(Array(token.utf8))[0]
    }
    rounds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations))
}
rounds.sort()
print(String(format: "credential hash (%d-byte token): median %.0f ns, min %.0f ns, max %.0f ns per hash (%d per round, 7 rounds; sink %d)",
             token.utf8.count, rounds[3], rounds[0], rounds[6], iterations, sink))
