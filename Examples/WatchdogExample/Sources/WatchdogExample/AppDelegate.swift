#if os(iOS)
import UIKit

/// The example's entry point: a scene-based UIKit app (iOS 13+). Each window scene gets a
/// `SceneDelegate`, which sets Watchdog up for that scene's window.
@main
final class AppDelegate: UIResponder, UIApplicationDelegate {
    func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession,
                     options: UIScene.ConnectionOptions) -> UISceneConfiguration {
        let configuration = UISceneConfiguration(name: nil, sessionRole: connectingSceneSession.role)
        configuration.delegateClass = SceneDelegate.self
        return configuration
    }
}
#endif
