import Foundation

/// Just enough of Swift's lexical structure to scan sources: comments and the text of string
/// literals blanked out (interpolated code kept), so a name in a doc comment or a log message
/// is not taken for a call.
enum SwiftSource {
    /// `source` with comments and string-literal text replaced by spaces (newlines kept, so
    /// line numbers stay right).
    static func code(of source: String) -> String {
        let chars = Array(source.unicodeScalars)
        var out = String.UnicodeScalarView()
        var index = 0
        // Open interpolations: the parenthesis depth inside each, and whether its string is multi-line.
        var interpolations: [(depth: Int, multiline: Bool)] = []
        var inString: Bool? = nil  // nil: code; false: "…"; true: """…"""
        func peek(_ offset: Int) -> Unicode.Scalar? { index + offset < chars.count ? chars[index + offset] : nil }
        func blank(_ scalar: Unicode.Scalar) { out.append(scalar == "\n" ? "\n" : " ") }
        while index < chars.count {
            let c = chars[index]
            if let multiline = inString {
                if c == "\\", peek(1) == "(" {
                    out.append(contentsOf: "  ".unicodeScalars)
                    index += 2
                    interpolations.append((1, multiline))
                    inString = nil
                    out.append("(")
                    continue
                }
                if c == "\\" { blank(c); if let next = peek(1) { blank(next) }; index += 2; continue }
                if multiline, c == "\"", peek(1) == "\"", peek(2) == "\"" { out.append(contentsOf: "\"\"\"".unicodeScalars); index += 3; inString = nil; continue }
                if !multiline, c == "\"" { out.append(c); index += 1; inString = nil; continue }
                blank(c)
                index += 1
                continue
            }
            if c == "/", peek(1) == "/" {
                while index < chars.count, chars[index] != "\n" { blank(chars[index]); index += 1 }
                continue
            }
            if c == "/", peek(1) == "*" {
                var depth = 0
                repeat {
                    if chars[index] == "/", peek(1) == "*" { depth += 1; blank("/"); blank("*"); index += 2; continue }
                    if chars[index] == "*", peek(1) == "/" { depth -= 1; blank("*"); blank("/"); index += 2; continue }
                    blank(chars[index])
                    index += 1
                } while depth > 0 && index < chars.count
                continue
            }
            if c == "\"" {
                if peek(1) == "\"", peek(2) == "\"" { out.append(contentsOf: "\"\"\"".unicodeScalars); index += 3; inString = true; continue }
                out.append(c); index += 1; inString = false; continue
            }
            if !interpolations.isEmpty {
                if c == "(" { interpolations[interpolations.count - 1].depth += 1 }
                if c == ")" {
                    interpolations[interpolations.count - 1].depth -= 1
                    if interpolations[interpolations.count - 1].depth == 0 {
                        out.append(c)
                        index += 1
                        inString = interpolations.removeLast().multiline
                        continue
                    }
                }
            }
            out.append(c)
            index += 1
        }
        return String(out)
    }

    /// The identifiers in code (as returned by `code(of:)`).
    static func identifiers(in code: String) -> Set<String> {
        Set(tokens(in: code).map(\.name))
    }

    /// Identifier tokens with their line (1-based) and whether a `.` precedes them (a member).
    static func tokens(in code: String) -> [(name: String, line: Int, member: Bool)] {
        var result: [(String, Int, Bool)] = []
        var line = 1
        var current = ""
        var member = false
        var lastNonSpace: Character = " "
        for c in code {
            if c.isLetter || c == "_" || (c.isNumber && !current.isEmpty) {
                if current.isEmpty { member = lastNonSpace == "." }
                current.append(c)
                continue
            }
            if !current.isEmpty {
                result.append((current, line, member))
                lastNonSpace = current.last!
                current = ""
            }
            if c == "\n" { line += 1 }
            if !c.isWhitespace { lastNonSpace = c }
        }
        if !current.isEmpty { result.append((current, line, member)) }
        return result
    }
}
