#if canImport(UIKit) && !os(watchOS)
import UIKit

/// The UIKit side of automatic lock detection: at each tick it only looks — at the transition
/// coordinators of the window's navigation and presented view controllers and at whether the
/// window or key view ignores touches — and hands a `LockObservation` to the agent, which
/// decides (`AutomaticLockDetector`).
@MainActor
enum LockObserver {
    /// - Parameter firstResponder: the focused view, if any; else the top view controller's
    ///   view is the key view.
    static func observe(_ window: UIWindow, firstResponder: UIView?) -> LockObservation {
        var observation = LockObservation()
        var controller = window.rootViewController
        var top: UIViewController?
        while let current = controller {
            top = current
            observation.screen = String(describing: type(of: current))
            if let transition = transition(of: current) {
                observation.transition = transition.kind
                observation.interactive = transition.coordinator.isInteractive
                observation.identity = ObjectIdentifier(transition.coordinator as AnyObject).hashValue
                return observation
            }
            controller = next(after: current)
        }
        if !window.isUserInteractionEnabled {
            observation.disabledView = .window
            observation.identity = ObjectIdentifier(window).hashValue
        } else if let keyView = firstResponder ?? top?.viewIfLoaded, !keyView.isUserInteractionEnabled {
            observation.disabledView = .keyView
            observation.identity = ObjectIdentifier(keyView).hashValue
        }
        return observation
    }

    /// The controller shown above or inside `controller`: what it presents, else a navigation
    /// controller's top or a tab bar controller's selected one.
    private static func next(after controller: UIViewController) -> UIViewController? {
        if let presented = controller.presentedViewController { return presented }
        if let navigation = controller as? UINavigationController { return navigation.topViewController }
        if let tabs = controller as? UITabBarController { return tabs.selectedViewController }
        return nil
    }

    private static func transition(of controller: UIViewController) -> (kind: LockObservation.Transition, coordinator: any UIViewControllerTransitionCoordinator)? {
        if controller.isBeingPresented || controller.isBeingDismissed, let coordinator = controller.transitionCoordinator {
            return (controller.isBeingDismissed ? .dismissal : .presentation, coordinator)
        }
        if let navigation = controller as? UINavigationController, let coordinator = navigation.transitionCoordinator {
            // A push leaves the controller it comes from on the stack; a pop removes it.
            let from = coordinator.viewController(forKey: .from)
            let isPush = from.map { source in navigation.viewControllers.contains { $0 === source } } ?? true
            return (isPush ? .push : .pop, coordinator)
        }
        return nil
    }
}
#endif
