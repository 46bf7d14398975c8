import Foundation
import Testing
@testable import WatchdogServer

/// docs/configuration.md is what the settings table says (issue 43): a setting added, renamed
/// or given another default without the page fails here.
@Suite struct SettingsReferenceTests {
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/configuration.md")

    @Test func theConfigurationReferenceIsTheSettingsTable() throws {
        let written = try String(contentsOf: Self.page, encoding: .utf8)
        #expect(written == SettingsReference.markdown(), "docs/configuration.md differs from the settings table: run `swift run watchdogd settings > docs/configuration.md`")
    }

    @Test func everyShownSettingHasItsRowWithVariableAndDefault() {
        let page = SettingsReference.markdown()
        for setting in SettingsTable.serve where !setting.hidden {
            let row = page.split(separator: "\n").first { $0.hasPrefix("| `--\(setting.name)") }
            #expect(row?.contains("`\(setting.variable)`") == true, "\(setting.name)")
            if let shown = setting.defaultText, !shown.isEmpty { #expect(row?.contains(shown.replacingOccurrences(of: "|", with: "\\|")) == true, "\(setting.name): \(shown)") }
        }
        #expect(!page.contains("--testing-"), "hidden settings stay out")
    }
}
