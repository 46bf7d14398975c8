import Foundation

/// What a driver registers while it runs — notification observers and its tick timer — made
/// once however often `start` is called, removed by `stop`, and removed when the driver goes
/// away (this object's `deinit`): a driver dropped without `stop()` leaves no observer behind
/// and no timer firing. Plain Foundation, so the lifecycle is tested on Linux.
///
/// `NotificationCenter.removeObserver` may be called from any thread; a timer is invalidated on
/// the main thread, where the driver scheduled it (Apple: "from the thread on which the timer was
/// installed").
public final class DriverRegistrations: @unchecked Sendable {
    private let center: NotificationCenter
    private let lock = NSLock()
    private var observers: [NSObjectProtocol] = []
    private var timer: Timer?
    private var started = false

    /// Registrations with `center` (the default center in an app).
    public init(center: NotificationCenter = .default) {
        self.center = center
    }

    /// Whether `start` ran and `stop` has not since.
    public var isStarted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return started
    }

    /// Runs `register` — which adds the observers and returns them — unless already started;
    /// returns whether it ran.
    @discardableResult
    public func start(_ register: (NotificationCenter) -> [NSObjectProtocol]) -> Bool {
        lock.lock()
        guard !started else {
            lock.unlock()
            return false
        }
        started = true
        lock.unlock()
        let made = register(center)
        lock.lock()
        observers += made
        lock.unlock()
        return true
    }

    /// The tick timer (a new one replaces the old, which is invalidated): call on the main thread.
    public func setTimer(_ timer: Timer?) {
        lock.lock()
        let old = self.timer
        self.timer = timer
        lock.unlock()
        old?.invalidate()
    }

    /// Removes the observers and invalidates the timer; `start` may run again afterwards.
    public func stop() {
        lock.lock()
        let observers = self.observers
        let timer = self.timer
        self.observers = []
        self.timer = nil
        started = false
        lock.unlock()
        for observer in observers { center.removeObserver(observer) }
        guard let timer else { return }
        if Thread.isMainThread {
            timer.invalidate()
        } else {
            DispatchQueue.main.async { timer.invalidate() }
        }
    }

    deinit {
        stop()
    }
}
