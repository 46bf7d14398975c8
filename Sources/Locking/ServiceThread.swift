import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's own threads (the ingest writer, alerts, webhook workers, rollouts…), started
/// with a name the kernel knows, so `top -H`, `ps -L` and `/proc/PID/task/TID/comm` tell them
/// apart. Foundation's `Thread.name` stays inside Foundation on Linux: every thread showed as
/// `watchdogd`. libmicrohttpd names its own threads.
public enum ServiceThread {
    /// The kernel keeps 15 bytes of a thread's name (16 with the terminating zero).
    public static let maximumNameBytes = 15

    /// Starts `body` on a new thread called `name`: `wd-` and what it does, 15 bytes at most.
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        precondition(name.utf8.count <= maximumNameBytes, "thread name \(name) is longer than \(maximumNameBytes) bytes")
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Gives the calling thread `name` in the kernel: on Linux by writing its `comm`
    /// (proc(5); glibc's `pthread_setname_np` needs `_GNU_SOURCE`, which Swift's Glibc module
    /// does not define, and `prctl` is variadic). A failure leaves the name as it was. Elsewhere
    /// `Thread.name`, set before the start, is all there is to do.
    static func nameCurrentThread(_ name: String) {
        #if canImport(Glibc)
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard comm >= 0 else { return }
        _ = name.withCString { write(comm, $0, strlen($0)) }
        close(comm)
        #endif
    }
}
