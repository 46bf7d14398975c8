#if os(iOS)
import UIKit
import WatchdogKit

/// One window scene: its window shows the compose screen, and Watchdog watches that window
/// (keyboard notifications, the scene's lifecycle, a timer) through the scene's own driver.
final class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private var driver: WatchdogUIKitDriver?

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let windowScene = scene as? UIWindowScene else { return }
        let window = UIWindow(windowScene: windowScene)
        let compose = ComposeViewController()
        window.rootViewController = UINavigationController(rootViewController: compose)
        window.makeKeyAndVisible()
        self.window = window
        do {
            let driver = try WatchdogSetup.start(in: window, crashReporter: LoggingCrashReporter())
            compose.watch(with: driver)
            self.driver = driver
        } catch {
            // The storage directory could not be created: the app runs without Watchdog.
            print("Watchdog not started: \(error)")
        }
    }

    func sceneDidDisconnect(_ scene: UIScene) {
        driver?.stop()
        driver = nil
    }
}
#endif
