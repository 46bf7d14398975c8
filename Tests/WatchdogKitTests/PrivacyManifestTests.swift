import Foundation
import Testing
import WatchdogKit

/// `Sources/WatchdogKit/PrivacyInfo.xcprivacy` against what the sources call: App Store
/// Connect refuses a binary (ITMS-91053) that uses a required-reason API its manifest does not
/// declare.
@Suite struct PrivacyManifestTests {
    /// Apple's required-reason APIs ("Describing use of required reason API"), per category,
    /// as the names appear in Swift code.
    static let requiredReasonAPIs: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": [
            "creationDate", "modificationDate", "fileModificationDate", "contentModificationDateKey", "creationDateKey",
            "getattrlist", "getattrlistbulk", "fgetattrlist", "getattrlistat", "stat", "fstat", "fstatat", "lstat",
        ],
        "NSPrivacyAccessedAPICategorySystemBootTime": [
            "systemUptime", "mach_absolute_time",
            // The same clock as mach_absolute_time (Dispatch's documentation says so).
            "uptimeNanoseconds",
        ],
        "NSPrivacyAccessedAPICategoryDiskSpace": [
            "volumeAvailableCapacityKey", "volumeAvailableCapacityForImportantUsageKey", "volumeAvailableCapacityForOpportunisticUsageKey",
            "volumeTotalCapacityKey", "systemFreeSize", "systemSize", "statfs", "statvfs", "fstatfs", "fstatvfs",
        ],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults"],
    ]

    /// The reasons that fit what WatchdogKit does with each category it uses: timestamps of
    /// files in its own container (C617.1), elapsed time between events in the app (35F9.1).
    static let allowedReasons: [String: Set<String>] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": ["C617.1"],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["35F9.1"],
    ]

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("Sources/WatchdogKit/PrivacyInfo.xcprivacy"))
        var format = PropertyListSerialization.PropertyListFormat.binary
        let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
        #expect(format == .xml)
        return try #require(plist as? [String: Any])
    }

    /// Declared categories and their reasons.
    static func declared() throws -> [String: [String]] {
        let entries = try #require(try manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var declared: [String: [String]] = [:]
        for entry in entries {
            let category = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            declared[category] = try #require(entry["NSPrivacyAccessedAPITypeReasons"] as? [String])
        }
        return declared
    }

    /// Every `.swift` file of the target, comments and string literals removed.
    static func sources() throws -> [(name: String, code: String)] {
        let folder = packageRoot.appendingPathComponent("Sources/WatchdogKit")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { ($0.lastPathComponent, SwiftSource.code(of: try String(contentsOf: $0, encoding: .utf8))) }
    }

    @Test func theManifestIsAPropertyListWithTheKeysAppleDefines() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let types = collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }
        // The install id; screen and view names; keyboard geometry and lock durations; logs, device model and locale.
        #expect(Set(types) == ["NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeProductInteraction",
                               "NSPrivacyCollectedDataTypePerformanceData", "NSPrivacyCollectedDataTypeOtherDiagnosticData"])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] is Bool)
            let purposes = try #require(entry["NSPrivacyCollectedDataTypePurposes"] as? [String])
            #expect(!purposes.isEmpty && purposes.allSatisfy { $0.hasPrefix("NSPrivacyCollectedDataTypePurpose") })
        }
        for (category, reasons) in try Self.declared() {
            #expect(Self.requiredReasonAPIs[category] != nil, "unknown category \(category)")
            #expect(!reasons.isEmpty && Set(reasons).isSubset(of: Self.allowedReasons[category] ?? []), "\(category): \(reasons)")
        }
    }

    @Test func everyRequiredReasonAPITheSourcesUseIsDeclared() throws {
        let declared = try Self.declared()
        var used: Set<String> = []
        for (name, code) in try Self.sources() {
            for (category, apis) in Self.requiredReasonAPIs {
                for api in apis where SwiftSource.identifiers(in: code).contains(api) {
                    used.insert(category)
                    #expect(declared[category] != nil, "\(name) uses \(api) (\(category)), not declared in PrivacyInfo.xcprivacy")
                }
            }
        }
        // Nothing declared that the code does not use (a reviewer asks why).
        #expect(Set(declared.keys) == used)
    }

    @Test func theManifestShipsAsAResourceOfTheTarget() throws {
        let url = try #require(PrivacyManifest.url)
        #expect(try Data(contentsOf: url) == Data(contentsOf: Self.packageRoot.appendingPathComponent("Sources/WatchdogKit/PrivacyInfo.xcprivacy")))
    }
}
