#if os(iOS)
import UIKit
import WatchdogWire

/// Reads what a watched view is laid out in (`LayoutContainer`): the view of the first view
/// controller up its responder chain — a UIKit screen's, or a SwiftUI screen's hosting
/// controller's — with the bottom of its safe area and, on iOS 15+, the top of its
/// `keyboardLayoutGuide`, in window coordinates. Reading only: the judging is `ViewExpectation`'s.
@MainActor
enum LayoutContainerReader {
    /// `view`'s frame in its window, `nil` while it is in none.
    static func frameInWindow(_ view: UIView) -> Frame? {
        guard let window = view.window else { return nil }
        return Frame(view.convert(view.bounds, to: window))
    }

    /// The hosting view of `view` as a container; `nil` while it is in no window (the window
    /// itself is then judged).
    static func container(of view: UIView) -> LayoutContainer? {
        guard let window = view.window else { return nil }
        let host = hostingView(of: view) ?? window
        let frame = host.convert(host.bounds, to: window)
        let safeArea = host.convert(host.safeAreaLayoutGuide.layoutFrame, to: window)
        var container = LayoutContainer(frame: Frame(frame), safeAreaBottom: Double(safeArea.maxY))
        if #available(iOS 15.0, *) {
            container.keyboardGuideTop = Double(host.convert(host.keyboardLayoutGuide.layoutFrame, to: window).minY)
        }
        return container
    }

    /// The view of the nearest view controller up `view`'s responder chain.
    private static func hostingView(of view: UIView) -> UIView? {
        var responder: UIResponder? = view
        while let current = responder {
            if let controller = current as? UIViewController { return controller.viewIfLoaded }
            responder = current.next
        }
        return nil
    }
}
#endif
