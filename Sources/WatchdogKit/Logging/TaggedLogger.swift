import Locking

/// Log lines tagged by component, `[keyboard][tracker] keyboardWillChangeFrame: calculated height - 252.0`,
/// kept in a ring buffer so every report carries the lines that led to it.
///
/// ```swift
/// let log = TaggedLogger(tag: "keyboard")
/// let tracker = log.child("tracker")
/// tracker.log("keyboardWillShow: height 216.0")
/// report.logs = log.recentLines()
/// ```
public struct TaggedLogger: Sendable {
    private let tags: [String]
    private let buffer: LogBuffer

    /// A root logger with its own buffer of the last `capacity` lines.
    public init(tag: String, capacity: Int = 50, echo: (@Sendable (String) -> Void)? = nil) {
        tags = [tag]
        buffer = LogBuffer(capacity: capacity, echo: echo)
    }

    private init(tags: [String], buffer: LogBuffer) {
        self.tags = tags
        self.buffer = buffer
    }

    /// A logger that adds `tag` after this one's tags and shares its buffer.
    public func child(_ tag: String) -> TaggedLogger {
        TaggedLogger(tags: tags + [tag], buffer: buffer)
    }

    /// Appends `message` under this logger's tag; the oldest line goes past the capacity.
    public func log(_ message: String) {
        buffer.append(tags.map { "[\($0)]" }.joined() + " " + message)
    }

    /// The buffered lines, oldest first.
    public func recentLines() -> [String] {
        buffer.lines()
    }

    /// Forgets the buffered lines (`WatchdogAgent.deleteUnsentData()`): the next report carries
    /// only what is logged from now on.
    public func clear() {
        buffer.clear()
    }
}

/// The shared ring buffer behind a logger and its children.
final class LogBuffer: Sendable {
    private struct Ring {
        var lines: [String] = []
        var next = 0
    }

    private let capacity: Int
    private let ring = Locked(Ring())
    private let echo: (@Sendable (String) -> Void)?

    init(capacity: Int, echo: (@Sendable (String) -> Void)?) {
        self.capacity = max(1, min(capacity, 200))
        self.echo = echo
    }

    func append(_ line: String) {
        // The server accepts lines up to 1 KiB: cut longer ones at a character boundary.
        var text = line
        while text.utf8.count > 1024 { text.removeLast() }
        let stored = text
        ring.withLock { ring in
            if ring.lines.count < capacity {
                ring.lines.append(stored)
            } else {
                ring.lines[ring.next] = stored
            }
            ring.next = (ring.next + 1) % capacity
        }
        echo?(stored)
    }

    func clear() {
        ring.withLock { $0 = Ring() }
    }

    func lines() -> [String] {
        ring.withLock { ring in
            ring.lines.count < capacity ? ring.lines : Array(ring.lines[ring.next...] + ring.lines[..<ring.next])
        }
    }
}
