import Foundation
import WatchdogKit
import WatchdogWire

/// One window of a simulated app: its scene in the device's agent, what its composer is laid
/// out in — a view whose safe area ends above a tab bar (49 pt and a 34 pt home indicator on an
/// iPhone) or at the window's bottom — and where a correct app puts the composer: on the safe
/// area's bottom, or on this window's own keyboard's top edge when that is higher. The composer
/// is watched as `.keyboardTop` against that container, as the UIKit driver watches a view, plus
/// the offset of a glitch the simulation injects.
@MainActor
final class SimulatedWindow {
    let scene: WatchdogScene
    /// The window's frame in screen coordinates.
    var frame: Frame
    /// What the tab bar (and home indicator) take at the bottom of the view; 0 without one.
    let bottomBar: Double
    /// What this window's own keyboard covers at its bottom, as the app itself knows it.
    var ownKeyboardHeight = 0.0
    /// An injected glitch: how far the composer is off where it belongs.
    var viewOffset = 0.0
    /// Whether this window's scene holds the first responder (asked only with several windows).
    var hasFocus = false

    init(agent: WatchdogAgent, frame: Frame, bottomBar: Double, screen: String, asksForFocus: Bool) {
        scene = agent.attachScene(window: frame)
        self.frame = frame
        self.bottomBar = bottomBar
        agent.setAppState(.active, for: scene)
        scene.layout.watch("composeToolbar", screen: screen, expect: .keyboardTop,
                           actualFrame: { [unowned self] in Frame(x: 0, y: composerBottom - 44, width: self.frame.width, height: 44) },
                           container: { [unowned self] in LayoutContainer(frame: Frame(x: 0, y: 0, width: self.frame.width, height: self.frame.height),
                                                                          safeAreaBottom: safeAreaBottom) },
                           fix: { [unowned self] in viewOffset = 0 })
        if asksForFocus {
            // A first responder the watchdog does not judge the coverage of: the routing needs
            // to know which window has it, the simulation does not model the field.
            scene.layout.firstResponder = { [unowned self] in hasFocus ? .outsideWindow : .none }
            scene.isKey = { [unowned self] in hasFocus }
        }
    }

    /// The window y where the view's safe area ends, the keyboard left out.
    var safeAreaBottom: Double { frame.height - bottomBar }

    /// Where the app has the composer's bottom edge (window y).
    var composerBottom: Double { min(safeAreaBottom, frame.height - ownKeyboardHeight) + viewOffset }
}
