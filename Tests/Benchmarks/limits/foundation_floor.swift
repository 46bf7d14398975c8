// The memory floor of a Swift program that links Foundation as watchdogd does (statically, with
// the Swift runtime: `swiftc -O -static-stdlib`) and uses it as watchdogd's start does: it
// encodes and decodes a little JSON with dates and a UUID and reads the environment, then
// waits, so run.sh reads its VmRSS as it reads watchdogd's (1 s after start). Not a limit
// watchdogd could reach with less work: GRDB, swift-crypto and swift-log import Foundation.
//
// It formats no date and touches no locale: those call ICU, whose code and tables cost a
// static program about 7.5 MiB more (13.0-13.6 against 20.7-21.3 MiB measured here), and
// watchdogd calls neither at its start (no ICU function runs before it idles: checked with breakpoints on ICU's
// udat_open, ucal_open and udata_open). The floor measured before 2026-11-26 formatted an
// ISO 8601 date and slept on a Foundation `Thread`, and so stood 11 MiB too high.
//
// Build: swiftc -O -static-stdlib -o foundation_floor foundation_floor.swift
// Run:   ./foundation_floor SECONDS   (prints "ready", then sleeps SECONDS)
import Foundation

struct Sample: Codable { var id: UUID; var at: Date; var values: [Double] }

let encoded = try JSONEncoder().encode(Sample(id: UUID(), at: Date(), values: [1, 2.5]))
let decoded = try JSONDecoder().decode(Sample.self, from: encoded)
print("ready", decoded.at.timeIntervalSince1970 > 0, ProcessInfo.processInfo.environment.count)
fflush(stdout)
// Glibc's sleep, not Foundation's Thread.sleep: a Foundation Thread costs 4 MiB more, and
// watchdogd on SQLite makes none.
sleep(UInt32(CommandLine.arguments.dropFirst().first.flatMap { UInt32($0) } ?? 10))
