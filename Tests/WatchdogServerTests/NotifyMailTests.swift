import Foundation
import Testing
import WatchdogServer
import WatchdogTesting

/// E-mail hooks against a real SMTP server on loopback (`Tests/Notify/smtp_receiver.py`:
/// aiosmtpd, STARTTLS required with a throwaway self-signed certificate, AUTH PLAIN/LOGIN).
@Suite struct NotifyMailTests {
    struct ReceiverFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The receiver: a python process serving until its stdin closes; messages it accepted are
    /// lines of `messages.jsonl` in its directory.
    final class SMTPReceiver {
        let directory: URL
        let port: Int
        private let process = Process()
        private let input = Pipe()

        init(user: String, password: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("watchdog-smtp-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let output = Pipe()
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Notify/smtp_receiver.py")
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path, directory.path, user, password]
            process.standardInput = input
            process.standardOutput = output
            // aiosmtpd's own notes (and python's errors), kept out of the test log.
            let errors = directory.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let port = Int(line) else {
                process.waitUntilExit()
                let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                throw ReceiverFailed(description: "Tests/Notify/smtp_receiver.py did not start (it needs `python3 -m pip install aiosmtpd`, and openssl): \(said.suffix(600))")
            }
            self.port = port
        }

        var caFile: String { directory.appendingPathComponent("cert.pem").path }

        var messages: [[String: Any]] {
            guard let text = try? String(contentsOf: directory.appendingPathComponent("messages.jsonl"), encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        deinit {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func application(_ receiver: SMTPReceiver, password: String) throws -> TestApplication {
        let credentials = receiver.directory.appendingPathComponent("credentials")
        try "alerts\n\(password)\n".write(to: credentials, atomically: true, encoding: .utf8)
        return try TestApplication { settings in
            settings.smtpURL = "smtp://localhost:\(receiver.port)"
            settings.smtpSender = "watchdog@example.com"
            settings.smtpCredentialsFile = credentials.path
            settings.smtpCAFile = receiver.caFile
        }
    }

    /// A message's header lines (unfolded) and its decoded body.
    static func parse(_ raw: String) -> (headers: [(String, String)], body: String) {
        let parts = raw.components(separatedBy: "\r\n\r\n")
        var headers: [(String, String)] = []
        for line in parts[0].components(separatedBy: "\r\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), let last = headers.popLast() {
                headers.append((last.0, last.1 + line.trimmingCharacters(in: .whitespaces)))
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
            }
        }
        let base64 = parts.dropFirst().joined(separator: "\r\n\r\n").components(separatedBy: .whitespacesAndNewlines).joined()
        return (headers, Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    /// RFC 2047 `=?UTF-8?B?…?=` words, decoded and joined.
    static func decodeWords(_ value: String) -> String? {
        var text = ""
        for word in value.split(separator: "=?UTF-8?B?", omittingEmptySubsequences: true) {
            guard word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropLast(2))) else { return nil }
            text += String(decoding: data, as: UTF8.self)
        }
        return text
    }

    @Test func anAlertArrivesByMailOverSTARTTLSWithALoginAsPlainText() throws {
        let receiver = try SMTPReceiver(user: "alerts", password: "s3cret pass")
        let app = try Self.application(receiver, password: "s3cret pass")
        let setup = try NotifyTests.setUp(hook: ["kind": "email", "name": "mail", "recipients": ["oncall@example.com", "dev+alerts@example.org"]], app: app)
        #expect(setup.hook["url"] as? String == "" && setup.hook["recipients"] as? [String] == ["oncall@example.com", "dev+alerts@example.org"])
        try NotifyTests.regress(setup)
        #expect(try AlertTests.pass(setup.app) == (1, 1))
        let log = try NotifyTests.deliveries(setup)
        #expect(log.first?["state"] as? String == "delivered" && log.first?["last_status"] as? Int == 250, "\(log)")
        let message = try #require(receiver.messages.first)
        #expect(message["tls"] as? Bool == true && message["login"] as? String == "alerts", "STARTTLS, then AUTH")
        #expect(message["mail_from"] as? String == "watchdog@example.com")
        #expect(message["rcpt_tos"] as? [String] == ["oncall@example.com", "dev+alerts@example.org"])
        let (headers, body) = Self.parse(message["content"] as? String ?? "")
        func header(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
        #expect(header("From") == ["watchdog@example.com"] && header("To") == ["oncall@example.com, dev+alerts@example.org"])
        #expect(header("Content-Type") == ["text/plain; charset=utf-8"] && header("MIME-Version") == ["1.0"])
        #expect(header("Subject").count == 1 && header("Date").count == 1 && header("Message-ID").count == 1)
        let subject = try #require(header("Subject").first.flatMap(Self.decodeWords), "the subject is encoded words only")
        #expect(subject.contains(NotifyTests.hostileRelease) && subject.contains("release_regressed"), "\(subject)")
        #expect(Set(headers.map { $0.0.lowercased() }).isSubset(of: [
            "from", "to", "subject", "date", "message-id", "mime-version", "content-type", "content-transfer-encoding", "watchdog-event", "watchdog-delivery",
            "received", "x-peer", "x-mailfrom", "x-rcptto",
        ]), "\(headers.map(\.0))")
        #expect(body.contains(NotifyTests.hostileRelease) && !body.contains("&lt;") && !body.contains("`"), "\(body)")
        #expect(header("Watchdog-Delivery").first == log.first?["alert_id"] as? String)
    }

    @Test func aWrongPasswordIsAFailedAttemptRetriedLater() throws {
        let receiver = try SMTPReceiver(user: "alerts", password: "right")
        let app = try Self.application(receiver, password: "wrong")
        let setup = try NotifyTests.setUp(hook: ["kind": "email", "recipients": ["oncall@example.com"]], app: app)
        let test = try setup.app.client.request("POST", "\(AlertTests.alerts)/hooks/\(setup.hookID)/test", token: setup.admin)
        #expect(test.status == 202)
        #expect(try setup.app.application.deliverAlerts() == 1)
        let log = try NotifyTests.deliveries(setup)
        #expect(log.first?["state"] as? String == "pending" && log.first?["next_attempt_at"] is String, "\(log)")
        #expect((log.first?["last_error"] as? String)?.isEmpty == false)
        #expect(receiver.messages.isEmpty)
    }

    @Test func anSMTPServerThatNeverGreetsCostsOneTimeoutAndHoldsUpNoOtherHook() throws {
        // An HTTP server waits for a request while an SMTP client waits for its 220 greeting:
        // a mail server that accepts and says nothing.
        let silent = try WebhookReceiver()
        let other = try WebhookReceiver()
        let app = try TestApplication { settings in
            settings.smtpURL = "smtp://127.0.0.1:\(silent.port)"
            settings.alertTimeoutSeconds = 1
        }
        let setup = try NotifyTests.setUp(hook: ["kind": "email", "recipients": ["oncall@example.com"]], rule: false, app: app)
        let webhook = try app.client.postJSON("\(AlertTests.alerts)/hooks", token: setup.admin, json: ["url": other.url]).json["id"] as? String ?? ""
        for hook in [setup.hookID, webhook] {
            #expect(try app.client.request("POST", "\(AlertTests.alerts)/hooks/\(hook)/test", token: setup.admin).status == 202)
        }
        #expect(try app.application.deliverAlerts() == 2)
        let mail = try NotifyTests.deliveries(setup).first
        #expect(mail?["state"] as? String == "pending" && (mail?["last_error"] as? String)?.contains("within 1000 ms") == true, "\(mail ?? [:])")
        #expect(other.received.count == 1, "the webhook's delivery went on its own worker")
    }
}
