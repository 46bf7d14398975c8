#if os(iOS)
import UIKit

/// The UIKit side of automatic lock detection: at each tick it only looks — at the transition
/// coordinators of the window's view controllers (presented ones, and children: every column of
/// a split view, a tab's navigation stack) and at whether the window or key view ignores
/// touches — and hands a `LockObservation` to the agent, which decides (`AutomaticLockDetector`).
@MainActor
enum LockObserver {
    /// Controllers looked at per tick, at most (a bound on a pathological hierarchy).
    static let maximumControllers = 200

    /// The view that is first responder in `view`'s tree (`ViewTreeSearch`, depth first).
    static func firstResponder(in view: UIView) -> UIView? {
        ViewTreeSearch.first(in: view, children: { $0.subviews }, where: { $0.isFirstResponder })
    }

    /// - Parameter firstResponder: the focused view, if any; else the top view controller's
    ///   view is the key view.
    static func observe(_ window: UIWindow, firstResponder: UIView?) -> LockObservation {
        var observation = LockObservation()
        let top = topController(from: window.rootViewController)
        observation.screen = top.map { String(describing: type(of: $0)) }
        if let found = firstTransition(from: window.rootViewController) {
            observation.transition = found.kind
            observation.interactive = found.coordinator.isInteractive
            observation.identity = ObjectIdentifier(found.coordinator as AnyObject).hashValue
            return observation
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

    /// What the user sees on top: what is presented, else a navigation controller's top or a
    /// tab bar controller's selected one, down to a plain controller.
    private static func topController(from root: UIViewController?) -> UIViewController? {
        var controller = root
        var steps = 0
        while let current = controller, steps < maximumControllers {
            steps += 1
            let next: UIViewController?
            if let presented = current.presentedViewController {
                next = presented
            } else if let navigation = current as? UINavigationController {
                next = navigation.topViewController
            } else if let tabs = current as? UITabBarController {
                next = tabs.selectedViewController
            } else {
                next = nil
            }
            guard let next else { return current }
            controller = next
        }
        return controller
    }

    /// The first transition in progress, depth first over presented and child controllers.
    private static func firstTransition(from root: UIViewController?) -> (kind: LockObservation.Transition, coordinator: any UIViewControllerTransitionCoordinator)? {
        var pending = root.map { [$0] } ?? []
        var visited = 0
        while let controller = pending.popLast(), visited < maximumControllers {
            visited += 1
            if let found = transition(of: controller) { return found }
            if let presented = controller.presentedViewController { pending.append(presented) }
            pending.append(contentsOf: controller.children)
        }
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
