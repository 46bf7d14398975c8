#if os(iOS)
import UIKit
import WatchdogKit

/// One window scene (an iPad can show several side by side): its window shows the compose
/// screen in a tab bar controller, and the scene's own driver feeds the app's one agent with
/// this window's keyboard notifications, lifecycle and ticks.
final class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private var driver: WatchdogUIKitDriver?

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let windowScene = scene as? UIWindowScene else { return }
        let window = UIWindow(windowScene: windowScene)
        let compose = ComposeViewController()
        let tabs = UITabBarController()                                  // the compose toolbar sits above the tab bar
        tabs.viewControllers = [UINavigationController(rootViewController: compose)]
        window.rootViewController = tabs
        window.makeKeyAndVisible()
        self.window = window
        let driver = WatchdogSetup.start(in: window, crashReporter: LoggingCrashReporter())
        compose.watch(with: driver)
        self.driver = driver
    }

    func sceneDidDisconnect(_ scene: UIScene) {
        driver?.stop()
        driver = nil                                                     // the scene leaves the agent with it
    }
}
#endif
