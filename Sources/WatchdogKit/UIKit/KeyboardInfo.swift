#if os(iOS)
import UIKit
import WatchdogWire

/// The values of a keyboard notification's `userInfo`, read in the observer's block, before
/// the hop to the main actor (a `Notification` is not Sendable).
struct KeyboardInfo: Sendable {
    /// `UIResponder`'s userInfo keys: class properties of a main-actor class, so read on the
    /// main actor (in `start()`) and handed to the blocks.
    struct Keys: Sendable {
        let begin: String, end: String, duration: String, curve: String, isLocal: String

        @MainActor init() {
            begin = UIResponder.keyboardFrameBeginUserInfoKey
            end = UIResponder.keyboardFrameEndUserInfoKey
            duration = UIResponder.keyboardAnimationDurationUserInfoKey
            curve = UIResponder.keyboardAnimationCurveUserInfoKey
            isLocal = UIResponder.keyboardIsLocalUserInfoKey
        }
    }

    var begin: CGRect
    var end: CGRect
    var duration: Double
    var curve: Int
    /// `nil` when the key is absent (before iOS 9).
    var isLocal: Bool?

    init(_ notification: Notification, keys: Keys) {
        let info = notification.userInfo ?? [:]
        begin = (info[keys.begin] as? NSValue)?.cgRectValue ?? .zero
        end = (info[keys.end] as? NSValue)?.cgRectValue ?? .zero
        duration = (info[keys.duration] as? NSNumber)?.doubleValue ?? 0
        curve = (info[keys.curve] as? NSNumber)?.intValue ?? 0
        isLocal = (info[keys.isLocal] as? NSNumber)?.boolValue
    }
}

extension Frame {
    /// A UIKit rectangle (a window's or a view's frame) as WatchdogKit's `Frame`:
    /// `WatchdogAgent(settings:window:)` takes the key window's frame in screen coordinates.
    public init(_ rect: CGRect) {
        self.init(x: Double(rect.origin.x), y: Double(rect.origin.y), width: Double(rect.size.width), height: Double(rect.size.height))
    }
}
#endif
