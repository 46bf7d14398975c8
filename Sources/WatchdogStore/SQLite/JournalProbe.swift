#if canImport(Glibc)
import Glibc
#endif

/// Asks the data dir's file system, after each ingest commit, whether it can still journal a
/// change, so that a commit the kernel acknowledged as its journal died is answered 503, not 202.
///
/// Why: when ext4 aborts its journal (a disk error; `errors=remount-ro`), Linux can return
/// success from `fdatasync` for a write whose metadata sat in the transaction the abort threw
/// away: the WAL frames of that commit never reach the disk, yet SQLite, told "synced", commits.
/// Measured with `Tests/ReadOnlyStore` (ext4 made to fail under load): 1 or 2 acknowledged
/// batches lost in 7 of 50 runs, from this and from older builds alike, the frames absent from
/// the WAL on disk. The abort flag is set before that transaction is finished, so a journaled
/// operation started after the commit fails (`EROFS`) whenever the commit could have been lied
/// about. `posix_fallocate` over the one byte the probe file already has starts exactly one
/// journal handle on ext4 and changes nothing.
///
/// Other file systems answer it as a no-op (glibc emulates it where the file system has no
/// `fallocate`: a byte already there is rewritten in the page cache).
/// Clients retry a 503; ingest is idempotent by id, so a commit that did reach the disk is not
/// counted twice.
final class JournalProbe: @unchecked Sendable {
    /// The probe file's descriptor, or -1 when the file system cannot be probed.
    private let descriptor: Int32

    /// The probe file in `directory`; never throws, a file that cannot be made turns the probe off.
    init(directory: String) {
        #if canImport(Glibc)
        let fd = open(directory + "/commit-probe", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        // One allocated byte, so that later calls allocate nothing.
        if fd >= 0, posix_fallocate(fd, 0, 1) == 0, fsync(fd) == 0 {
            descriptor = fd
        } else {
            if fd >= 0 { close(fd) }
            descriptor = -1
        }
        #else
        descriptor = -1
        #endif
    }

    deinit {
        #if canImport(Glibc)
        if descriptor >= 0 { close(descriptor) }
        #endif
    }

    /// Throws when the file system refuses to journal: the commit just made may not be on disk.
    func check() throws {
        #if canImport(Glibc)
        guard descriptor >= 0 else { return }
        // posix_fallocate returns the error number (it does not set errno).
        let code = posix_fallocate(descriptor, 0, 1)
        if code != 0 {
            guard code == EROFS || code == EIO else { return }
            throw JournalProbeFailure(errno: code)
        }
        #endif
    }
}

/// The file system failed right after a commit: that commit's durability is unknown.
struct JournalProbeFailure: Error, CustomStringConvertible {
    var errno: Int32

    var description: String {
        "the file system stopped journaling right after a commit (errno \(errno)), so that commit may not be on disk"
    }
}
