import Foundation

/// What `docs/ios-api.md` says about the Apple-only symbols WatchdogKit names, and the check
/// of `#if canImport(UIKit)` / `canImport(SwiftUI)` code against it: code this machine cannot
/// compile must at least name only symbols recorded with their minimum iOS version (checked
/// against Apple's documentation), and use none below it without `#available`.
struct AppleAPILedger {
    /// Minimum iOS version per key: a symbol's last name component (`keyboardFrameEndUserInfoKey`
    /// for `UIResponder.keyboardFrameEndUserInfoKey`, `convert` for `UIView.convert(_:to:)`).
    var minimumOS: [String: Double] = [:]
    /// The symbols as written in the ledger, per key.
    var symbols: [String: [String]] = [:]
    /// Argument labels of the ledger's methods (`forName` of
    /// `NotificationCenter.addObserver(forName:object:queue:using:)`): known through their method.
    var labels: Set<String> = []

    /// Reads the ledger's table rows: `` | `Symbol` | 13.0 | https://developer.apple.com/… | ``.
    init(markdown: String) {
        for line in markdown.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let version = Double(cells[2]), cells[3].contains("https://developer.apple.com/") else { continue }
            let symbol = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let key = Self.key(of: symbol)
            minimumOS[key] = max(minimumOS[key] ?? 0, version)
            symbols[key, default: []].append(symbol)
            if let open = symbol.firstIndex(of: "(") {
                labels.formUnion(symbol[open...].split(whereSeparator: { "():".contains($0) }).map(String.init).filter { $0 != "_" })
            }
        }
    }

    init(minimumOS: [String: Double]) {
        self.minimumOS = minimumOS
    }

    static func key(of symbol: String) -> String {
        let name = symbol.split(separator: "(").first.map(String.init) ?? symbol
        return name.split(separator: ".").last.map(String.init) ?? name
    }

    /// The parts of a file (comments and string text already blanked) inside `#if` blocks whose
    /// condition names `os(iOS)` (UIKit and SwiftUI code), `canImport(UIKit)`,
    /// `canImport(SwiftUI)` or `canImport(DeviceCheck)`, but for `import` lines; the rest blanked.
    static func appleOnlyCode(_ code: String) -> String {
        var out: [Substring] = []
        var stack: [Bool] = []  // per open #if: whether it is Apple-only
        for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#if ") {
                stack.append(["os(iOS)", "canImport(UIKit)", "canImport(SwiftUI)", "canImport(DeviceCheck)"].contains { trimmed.contains($0) })
                out.append("")
            } else if trimmed.hasPrefix("#endif") {
                _ = stack.popLast()
                out.append("")
            } else if trimmed.hasPrefix("#else") || trimmed.hasPrefix("#elseif") {
                if !stack.isEmpty { stack[stack.count - 1] = false }
                out.append("")
            } else {
                // `import UIKit` names a module, not a symbol.
                out.append(stack.contains(true) && !trimmed.hasPrefix("import ") ? line : "")
            }
        }
        return out.joined(separator: "\n")
    }

    /// A problem found in Apple-only code.
    struct Finding: Equatable, CustomStringConvertible {
        var file: String
        var line: Int
        var name: String
        /// `nil`: not in the ledger; else the version it needs.
        var needs: Double?

        var description: String {
            needs.map { "\(file):\(line): \(name) needs iOS \($0) — wrap it in `if #available(iOS \($0), *)`" }
                ?? "\(file):\(line): \(name) is not in docs/ios-api.md"
        }
    }

    /// Names in `code` (Apple-only code of `file`) missing from the ledger — unless `portable`
    /// (compiled on Linux elsewhere in the sources: Swift, Foundation, the project's own) — and
    /// ledger symbols used below `minimumDeployment` outside an availability check.
    func check(file: String, code: String, portable: Set<String>, minimumDeployment: Double) -> [Finding] {
        var findings: [Finding] = []
        let availability = Self.availability(in: code)
        let declared = Self.declaredNames(in: code)
        for token in SwiftSource.tokens(in: code) {
            if let needs = minimumOS[token.name] {
                if needs > minimumDeployment, (availability[token.line] ?? minimumDeployment) < needs {
                    findings.append(Finding(file: file, line: token.line, name: token.name, needs: needs))
                }
            } else if !portable.contains(token.name), !labels.contains(token.name), !Self.language.contains(token.name),
                      !declared.contains(token.name) {
                findings.append(Finding(file: file, line: token.line, name: token.name, needs: nil))
            }
        }
        return findings
    }

    /// Words of the language, which Apple-only code may be the only code to use: Swift's
    /// keywords and the contextual ones (The Swift Programming Language, "Lexical Structure"),
    /// attributes, and a few standard-library names. Listed, not inferred from the portable
    /// code: a server file that stopped saying `[weak self]` once made `weak` an Apple symbol.
    static let language: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func", "import",
        "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup", "protocol",
        "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try",
        "async", "convenience", "didSet", "dynamic", "final", "get", "indirect", "lazy", "mutating", "none", "nonmutating",
        "optional", "override", "package", "required", "set", "some", "unowned", "weak", "willSet", "safe", "unsafe",
        "available", "iOS", "objc", "selector", "escaping", "autoclosure", "discardableResult", "MainActor", "Sendable",
        "unchecked", "describing", "hashValue",
    ]

    /// Names the code declares itself: types, functions and their parameters, constants,
    /// variables, cases, closure parameters, loop variables.
    static func declaredNames(in code: String) -> Set<String> {
        var names: Set<String> = []
        for match in code.matches(of: /\b(?:let|var|func|class|struct|enum|case|protocol|typealias|for)\s+([A-Za-z_][A-Za-z0-9_]*)/) {
            names.insert(String(match.1))
        }
        // Closure parameters: `{ a, b in`, `{ [weak self] notification in`.
        for match in code.matches(of: /\{\s*(?:\[[^\]]*\]\s*)?([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s+in\b/) {
            names.formUnion(match.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        // Function parameters: `func f(_ view: UIView, named name: String)`, `init(agent: …)`.
        for match in code.matches(of: /(?:func\s+[A-Za-z_][A-Za-z0-9_]*|init)\s*(?:<[^>]*>)?\(([^)]*)\)/) {
            for parameter in match.1.split(separator: ",") {
                let words = parameter.split(separator: ":").first?.split(separator: " ").map(String.init) ?? []
                names.formUnion(words.filter { $0 != "_" })
            }
        }
        return names
    }

    /// The iOS version guaranteed on each line (1-based) by enclosing `if #available(iOS N, *)`
    /// blocks, `guard #available(iOS N, *)` (for the rest of the scope) and `@available(iOS N, *)`
    /// declarations; lines without an entry have only the deployment target.
    static func availability(in code: String) -> [Int: Double] {
        var result: [Int: Double] = [:]
        var scopes: [Double] = [0]
        var pending: Double?
        var pendingIsGuard = false
        var line = 1
        let chars = Array(code)
        var index = 0
        while index < chars.count {
            let c = chars[index]
            if c == "#" || c == "@" {
                let rest = String(chars[index..<min(chars.count, index + 40)])
                if let match = rest.firstMatch(of: /^[#@]available\(iOS ([0-9]+(?:\.[0-9]+)?)/), let version = Double(match.1) {
                    pending = version
                    // `guard #available`: the rest of the enclosing scope.
                    let before = String(chars[max(0, index - 12)..<index])
                    pendingIsGuard = before.range(of: #"guard\s*$"#, options: .regularExpression) != nil
                    if pendingIsGuard {
                        scopes[scopes.count - 1] = max(scopes[scopes.count - 1], version)
                        pending = nil
                    }
                }
            }
            if c == "{" {
                scopes.append(max(scopes.last ?? 0, pending ?? 0))
                pending = nil
            } else if c == "}" {
                if scopes.count > 1 { scopes.removeLast() }
            } else if c == "\n" {
                line += 1
            }
            if let current = scopes.last, current > 0 { result[line] = max(result[line] ?? 0, current) }
            index += 1
        }
        return result
    }
}
