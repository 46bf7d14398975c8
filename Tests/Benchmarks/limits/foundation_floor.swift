// The memory floor of a Swift program that links Foundation as watchdogd does (statically, with
// the Swift runtime: `swiftc -O -static-stdlib`): it formats a date, encodes and decodes a little
// JSON and reads the environment, then waits, so run.sh reads its VmRSS as it reads watchdogd's
// (1 s after start). Not a limit watchdogd could reach with less work: GRDB, swift-crypto and
// swift-log import Foundation, so a daemon built on them maps and touches at least this much
// (the Swift runtime, Foundation, FoundationInternationalization and ICU's tables).
//
// Build: swiftc -O -static-stdlib -o foundation_floor foundation_floor.swift
// Run:   ./foundation_floor SECONDS   (prints "ready", then sleeps SECONDS)
import Foundation

struct Sample: Codable { var id: String; var at: Date; var values: [Double] }

let formatter = ISO8601DateFormatter()
let encoded = try JSONEncoder().encode(Sample(id: UUID().uuidString, at: Date(), values: [1, 2.5]))
let decoded = try JSONDecoder().decode(Sample.self, from: encoded)
print("ready", formatter.string(from: decoded.at), ProcessInfo.processInfo.environment.count)
fflush(stdout)
Thread.sleep(forTimeInterval: Double(CommandLine.arguments.dropFirst().first ?? "") ?? 10)
