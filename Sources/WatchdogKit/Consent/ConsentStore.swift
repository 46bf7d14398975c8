import Foundation

/// The tester's choice about collection (`WatchdogAgent.isCollectionEnabled`), kept in
/// `consent.json` in the storage directory so that it survives a restart. Before the tester
/// chose, the app's default (`WatchdogSettings.collectsByDefault`) holds. While the file exists
/// but cannot be read yet (a launch before the first unlock), collection is off: a "no" is never
/// overridden by a file that could not be read.
struct ConsentStore {
    private struct Saved: Codable {
        var collectionEnabled: Bool

        enum CodingKeys: String, CodingKey {
            case collectionEnabled = "collection_enabled"
        }
    }

    let file: URL
    let defaultValue: Bool
    /// `nil` while the saved choice cannot be read.
    private(set) var enabled: Bool?
    /// A choice made while it could not be saved (written at the next `reload`).
    private var unsaved: Bool?

    init(directory: URL, defaultValue: Bool) {
        file = directory.appendingPathComponent("consent.json")
        self.defaultValue = defaultValue
        reload()
    }

    /// Whether collection is on now (off while the choice cannot be read).
    var isEnabled: Bool { enabled ?? false }

    /// Reads the saved choice again (protected data became available); a choice made meanwhile wins.
    mutating func reload() {
        if let unsaved {
            set(unsaved)
            return
        }
        switch StoredFile.read(file) {
        case .missing: enabled = defaultValue
        case .unreadable: enabled = nil
        case .data(let data): enabled = (try? JSONDecoder().decode(Saved.self, from: data))?.collectionEnabled ?? false
        }
    }

    /// The tester's choice, in force at once and saved.
    mutating func set(_ value: Bool) {
        enabled = value
        do {
            try JSONEncoder().encode(Saved(collectionEnabled: value)).write(to: file, options: .atomic)
            unsaved = nil
        } catch {
            unsaved = value
        }
    }
}
