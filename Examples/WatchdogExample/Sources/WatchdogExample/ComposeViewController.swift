#if os(iOS)
import SwiftUI
import UIKit
import WatchdogKit

/// A compose screen in a tab bar controller: a message body and, above the keyboard (and above
/// the tab bar while the keyboard is down), a toolbar that a bottom constraint follows the
/// keyboard with. Watchdog checks that the toolbar is on the keyboard's top edge in this screen's
/// view, and with `auto_fix` on, sets the constraint again.
final class ComposeViewController: UIViewController {
    private let body = UITextView()
    private let toolbar = UIToolbar()
    private var toolbarBottom: NSLayoutConstraint!
    /// How far the keyboard reaches up into this view (0 when hidden), from its notifications.
    private var keyboardOverlap: CGFloat = 0
    private var keyboardObserver: NSObjectProtocol?
    private weak var driver: WatchdogUIKitDriver?

    override func viewDidLoad() {
        super.viewDidLoad()
        title = "Compose"
        toolbar.items = [
            UIBarButtonItem(title: "SwiftUI", style: .plain, target: self, action: #selector(showSwiftUIScreen)),
            UIBarButtonItem(title: "Privacy", style: .plain, target: self, action: #selector(showPrivacyChoices(_:))),
            UIBarButtonItem(title: "Send", style: .done, target: self, action: #selector(send)),
        ]
        for subview in [body, toolbar] as [UIView] {
            subview.translatesAutoresizingMaskIntoConstraints = false
            view.addSubview(subview)
        }
        toolbarBottom = toolbar.bottomAnchor.constraint(equalTo: view.safeAreaLayoutGuide.bottomAnchor)
        NSLayoutConstraint.activate([
            body.topAnchor.constraint(equalTo: view.safeAreaLayoutGuide.topAnchor),
            body.leadingAnchor.constraint(equalTo: view.leadingAnchor),
            body.trailingAnchor.constraint(equalTo: view.trailingAnchor),
            body.bottomAnchor.constraint(equalTo: toolbar.topAnchor),
            toolbar.leadingAnchor.constraint(equalTo: view.leadingAnchor),
            toolbar.trailingAnchor.constraint(equalTo: view.trailingAnchor),
            toolbarBottom,
        ])
        // The block is `@Sendable`: the key (a main-actor class property) is read here, and only
        // the frame, a value, crosses into the main actor.
        let endKey = UIResponder.keyboardFrameEndUserInfoKey
        keyboardObserver = NotificationCenter.default.addObserver(forName: UIResponder.keyboardWillChangeFrameNotification, object: nil,
                                                                  queue: .main) { [weak self] notification in
            let end = (notification.userInfo?[endKey] as? NSValue)?.cgRectValue
            MainActor.assumeIsolated { self?.keyboardWillChangeFrame(to: end) }
        }
    }

    /// Watches the toolbar with the scene's driver (the scene delegate calls it once Watchdog runs).
    func watch(with driver: WatchdogUIKitDriver) {
        self.driver = driver
        driver.watch(toolbar, named: "composeToolbar", screen: "ComposeViewController",
                     expect: .keyboardTop,                                // on the keyboard's top edge in this screen's view
                     fix: { [unowned self] in                             // used when auto_fix is on
                         self.toolbarBottom.constant = -self.keyboardOverlap
                         self.view.layoutIfNeeded()
                     })
    }

    override func viewWillTransition(to size: CGSize, with coordinator: UIViewControllerTransitionCoordinator) {
        super.viewWillTransition(to: size, with: coordinator)
        driver?.windowDidChange(animationDuration: coordinator.transitionDuration)
    }

    /// The keyboard's end frame (screen coordinates) as the part of this view it covers.
    private func keyboardWillChangeFrame(to end: CGRect?) {
        guard let end, let window = view.window else { return }
        let keyboard = window.convert(end, from: window.screen.coordinateSpace)
        let viewFrame = view.convert(view.bounds, to: window)
        keyboardOverlap = max(0, viewFrame.maxY - max(keyboard.minY, viewFrame.minY) - view.safeAreaInsets.bottom)
        toolbarBottom.constant = -keyboardOverlap
        view.layoutIfNeeded()
    }

    /// Sending blocks the screen until the server answers: a lock only the app knows about.
    @objc private func send() {
        guard let agent = driver?.agent else { return }
        agent.locks.begin(flags: ["sending_overlay": true])
        view.isUserInteractionEnabled = false
        Task { @MainActor [weak self] in
            try? await Task.sleep(nanoseconds: 500_000_000)  // the request, in a real app
            self?.view.isUserInteractionEnabled = true
            agent.locks.end()
        }
    }

    @objc private func showPrivacyChoices(_ item: UIBarButtonItem) {
        guard let agent = driver?.agent else { return }
        present(PrivacyChoices.sheet(for: agent, from: item), animated: true)
    }

    /// The SwiftUI version of this screen (iOS 15+), in the same window, so the same driver
    /// feeds it; the agent reaches its views through the environment.
    @objc private func showSwiftUIScreen() {
        guard #available(iOS 15.0, *), let agent = driver?.agent else { return }
        let screen = ChatView(messages: ["Are we still on for Friday?", "Yes — 7 pm."])
            .environment(\.watchdogAgent, agent)
        navigationController?.pushViewController(UIHostingController(rootView: screen), animated: true)
    }
}
#endif
