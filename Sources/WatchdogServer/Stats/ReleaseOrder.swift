import WatchdogStore

/// Orders releases by semantic version, then build number: `14.10.0` after `14.9.1`,
/// `14.2.0-beta.2` before `14.2.0`, build `31245` after `9999`.
enum ReleaseOrder {
    /// `true` when `lhs` is an older release than `rhs`.
    static func isOlder(_ lhs: ReleaseID, _ rhs: ReleaseID) -> Bool {
        let versions = compareVersions(lhs.version, rhs.version)
        if versions != 0 { return versions < 0 }
        return compareIdentifiers(lhs.build, rhs.build) < 0
    }

    /// Semantic Versioning 2.0 §11 precedence, tolerant of two-part (`14.2`) and
    /// non-numeric versions, which sort after numeric ones, by text.
    static func compareVersions(_ lhs: String, _ rhs: String) -> Int {
        let (lhsCore, lhsPre) = split(lhs)
        let (rhsCore, rhsPre) = split(rhs)
        let lhsParts = lhsCore.split(separator: ".", omittingEmptySubsequences: false)
        let rhsParts = rhsCore.split(separator: ".", omittingEmptySubsequences: false)
        for index in 0..<max(lhsParts.count, rhsParts.count) {
            let left = index < lhsParts.count ? String(lhsParts[index]) : "0"
            let right = index < rhsParts.count ? String(rhsParts[index]) : "0"
            let order = compareIdentifiers(left, right)
            if order != 0 { return order }
        }
        switch (lhsPre, rhsPre) {
        case (nil, nil): return 0
        case (nil, _): return 1
        case (_, nil): return -1
        case let (left?, right?):
            let leftParts = left.split(separator: ".")
            let rightParts = right.split(separator: ".")
            for (a, b) in zip(leftParts, rightParts) {
                let order = compareIdentifiers(String(a), String(b))
                if order != 0 { return order }
            }
            return leftParts.count == rightParts.count ? 0 : (leftParts.count < rightParts.count ? -1 : 1)
        }
    }

    /// Numbers numerically (any length), numbers before text, text by bytes.
    static func compareIdentifiers(_ lhs: String, _ rhs: String) -> Int {
        let leftNumeric = !lhs.isEmpty && lhs.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
        let rightNumeric = !rhs.isEmpty && rhs.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
        switch (leftNumeric, rightNumeric) {
        case (true, true):
            let left = lhs.drop(while: { $0 == "0" })
            let right = rhs.drop(while: { $0 == "0" })
            if left.count != right.count { return left.count < right.count ? -1 : 1 }
            return left == right ? 0 : (left < right ? -1 : 1)
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): return lhs == rhs ? 0 : (lhs < rhs ? -1 : 1)
        }
    }

    private static func split(_ version: String) -> (core: Substring, prerelease: Substring?) {
        var text = version[...]
        if text.hasPrefix("v") || text.hasPrefix("V") { text = text.dropFirst() }
        if let plus = text.firstIndex(of: "+") { text = text[..<plus] }
        guard let dash = text.firstIndex(of: "-") else { return (text, nil) }
        return (text[..<dash], text[text.index(after: dash)...])
    }
}
