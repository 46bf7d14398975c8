import Foundation

/// README's WatchdogKit section and the DocC "Getting started" article against the example app
/// (`Examples/WatchdogExample`): every Swift block there must be lines of the app — the same
/// lines in the same order, with the same indentation relative to each other — so they show
/// only code that the iOS type-check compiles.
struct ReadmeExample {
    /// A Swift block and where it starts in its file (1-based line of its fence).
    struct Block {
        var line: Int
        var lines: [String]
    }

    /// The ```swift blocks between `## In the app: WatchdogKit` and the next `## ` heading.
    static func swiftBlocks(inWatchdogKitSectionOf readme: String) -> [Block] {
        swiftBlocks(in: readme, section: "## In the app: WatchdogKit")
    }

    /// The ```swift blocks of `markdown`; with `section`, only those between the `## ` heading
    /// that starts with it and the next `## ` heading.
    static func swiftBlocks(in markdown: String, section: String? = nil) -> [Block] {
        var blocks: [Block] = []
        var inSection = section == nil
        var current: Block?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = String(line)
            if current == nil, let section, text.hasPrefix("## ") { inSection = text.hasPrefix(section) }
            guard inSection else { continue }
            let fence = text.trimmingCharacters(in: .whitespaces)
            if var block = current {
                if fence == "```" {
                    blocks.append(block)
                    current = nil
                } else {
                    block.lines.append(text)
                    current = block
                }
            } else if fence == "```swift" {
                current = Block(line: index + 1, lines: [])
            }
        }
        return blocks
    }

    /// Whether `block` stands in `file`: its non-blank lines are consecutive non-blank lines of
    /// the file, each indented by the same amount more (or less) than in the README.
    static func contains(_ file: String, _ block: [String]) -> Bool {
        let wanted = block.filter { !isBlank($0) }
        let lines = file.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !isBlank($0) }
        guard let first = wanted.first, wanted.count <= lines.count else { return wanted.isEmpty }
        for start in 0...(lines.count - wanted.count) where lines[start].trimmingCharacters(in: .whitespaces) == first.trimmingCharacters(in: .whitespaces) {
            let shift = indentation(of: lines[start]) - indentation(of: first)
            if zip(wanted, lines[start...]).allSatisfy({ shifted($0, by: shift) == $1.trimmingTrailingWhitespace() }) { return true }
        }
        return false
    }

    /// The first line of `block` that no file holds in its place: the longest prefix of the
    /// block found in one file, plus one line (for the failure message).
    static func firstMismatch(of block: [String], in files: [String]) -> String? {
        let wanted = block.filter { !isBlank($0) }
        guard !files.contains(where: { contains($0, wanted) }) else { return nil }
        let longest = (0..<wanted.count).last { count in files.contains { contains($0, Array(wanted.prefix(count))) } } ?? 0
        return wanted[longest]
    }

    static func isBlank(_ line: String) -> Bool { line.allSatisfy(\.isWhitespace) }

    static func indentation(of line: String) -> Int { line.prefix(while: { $0 == " " }).count }

    static func shifted(_ line: String, by shift: Int) -> String {
        let trimmed = line.trimmingTrailingWhitespace()
        return shift >= 0 ? String(repeating: " ", count: shift) + trimmed : String(trimmed.dropFirst(min(-shift, indentation(of: trimmed))))
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        String(reversed().drop(while: \.isWhitespace).reversed())
    }
}
