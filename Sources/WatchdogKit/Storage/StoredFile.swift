import Foundation

/// A small file of the storage directory, read the way a launch before the first unlock needs:
/// a file that exists but cannot be read yet (protected until the first unlock after boot) is
/// not the same as a missing one — it must not be replaced by a new one.
enum StoredFile {
    enum Contents: Equatable {
        /// No such file: make it.
        case missing
        /// There, but not readable now (protected data unavailable): try again later.
        case unreadable
        case data(Data)
    }

    static func read(_ url: URL) -> Contents {
        if let data = try? Data(contentsOf: url) { return .data(data) }
        return FileManager.default.fileExists(atPath: url.path) ? .unreadable : .missing
    }
}

/// This install's id: a random one kept in `install-id`, made on first use. Before the first
/// unlock after a reboot (a background launch for a push, say) the file cannot be read: the id
/// is then not known yet — `nil` — and is read again once protected data is available; a new
/// one is never made over an existing file.
enum InstallIdentity {
    static func file(in directory: URL) -> URL { directory.appendingPathComponent("install-id") }

    /// The id, made and saved if there is none; `nil` while it cannot be read or saved.
    static func resolve(in directory: URL) -> String? {
        switch StoredFile.read(file(in: directory)) {
        case .data(let data):
            let id = String(decoding: data, as: UTF8.self)
            if !id.isEmpty { return id }
            return make(in: directory)
        case .missing:
            return make(in: directory)
        case .unreadable:
            return nil
        }
    }

    private static func make(in directory: URL) -> String? {
        let id = TimeOrderedID.make()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try id.write(to: file(in: directory), atomically: true, encoding: .utf8)
        } catch {
            return nil
        }
        return id
    }
}
