import WatchdogStore

/// Orders releases by semantic version, then build number: `14.10.0` after `14.9.1`,
/// `14.2.0-beta.2` before `14.2.0`, build `31245` after `9999`.
enum ReleaseOrder {
    /// `true` when `lhs` is an older release than `rhs`.
    static func isOlder(_ lhs: ReleaseID, _ rhs: ReleaseID) -> Bool {
        Key(lhs) < Key(rhs)
    }

    /// `items` oldest release first (`newestFirst`: newest first), each version parsed once
    /// rather than once per comparison.
    static func sorted<Item>(_ items: [Item], newestFirst: Bool = false, by release: (Item) -> ReleaseID) -> [Item] {
        let keyed = items.map { (key: Key(release($0)), item: $0) }
        return keyed.sorted { newestFirst ? $1.key < $0.key : $0.key < $1.key }.map(\.item)
    }

    /// Semantic Versioning 2.0 §11 precedence, tolerant of two-part (`14.2`) and
    /// non-numeric versions, which sort after numeric ones, by text.
    static func compareVersions(_ lhs: String, _ rhs: String) -> Int {
        VersionKey(lhs).compare(VersionKey(rhs))
    }

    /// A release parsed for comparison: its version, then its build.
    struct Key: Comparable {
        var version: VersionKey
        var build: Identifier

        init(_ release: ReleaseID) {
            version = VersionKey(release.version)
            build = Identifier(release.build[...])
        }

        static func < (lhs: Key, rhs: Key) -> Bool {
            let versions = lhs.version.compare(rhs.version)
            return versions != 0 ? versions < 0 : lhs.build.compare(rhs.build) < 0
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.version.compare(rhs.version) == 0 && lhs.build.compare(rhs.build) == 0
        }
    }

    /// A version's dot-separated core and pre-release identifiers.
    struct VersionKey {
        var core: [Identifier]
        /// `nil` for a release version, which comes after all of its pre-releases.
        var prerelease: [Identifier]?

        init(_ version: String) {
            var text = version[...]
            if text.hasPrefix("v") || text.hasPrefix("V") { text = text.dropFirst() }
            if let plus = text.firstIndex(of: "+") { text = text[..<plus] }
            if let dash = text.firstIndex(of: "-") {
                core = text[..<dash].split(separator: ".", omittingEmptySubsequences: false).map(Identifier.init)
                prerelease = text[text.index(after: dash)...].split(separator: ".").map(Identifier.init)
            } else {
                core = text.split(separator: ".", omittingEmptySubsequences: false).map(Identifier.init)
                prerelease = nil
            }
        }

        /// -1, 0 or 1. Missing core parts count as `0` (`14.2` = `14.2.0`).
        func compare(_ other: VersionKey) -> Int {
            let zero = Identifier("0")
            for index in 0..<max(core.count, other.core.count) {
                let order = (index < core.count ? core[index] : zero).compare(index < other.core.count ? other.core[index] : zero)
                if order != 0 { return order }
            }
            switch (prerelease, other.prerelease) {
            case (nil, nil): return 0
            case (nil, _): return 1
            case (_, nil): return -1
            case let (left?, right?):
                for (a, b) in zip(left, right) {
                    let order = a.compare(b)
                    if order != 0 { return order }
                }
                return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
            }
        }
    }

    /// Numbers numerically (any length), numbers before text, text by text.
    struct Identifier {
        /// Digits without leading zeros for a number, else the text.
        var value: Substring
        var isNumber: Bool

        init(_ text: Substring) {
            isNumber = !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
            value = isNumber ? text.drop(while: { $0 == "0" }) : text
        }

        func compare(_ other: Identifier) -> Int {
            switch (isNumber, other.isNumber) {
            case (true, true):
                if value.utf8.count != other.value.utf8.count { return value.utf8.count < other.value.utf8.count ? -1 : 1 }
                return value == other.value ? 0 : (value < other.value ? -1 : 1)
            case (true, false): return -1
            case (false, true): return 1
            case (false, false): return value == other.value ? 0 : (value < other.value ? -1 : 1)
            }
        }
    }
}
