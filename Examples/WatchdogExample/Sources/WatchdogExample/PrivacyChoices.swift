#if os(iOS)
import UIKit
import WatchdogKit

/// What a tester can say about diagnostics, from the compose screen's toolbar: stop (or resume)
/// sharing — kept across launches, whatever the remote config says — and delete what has not
/// been sent yet.
@MainActor
enum PrivacyChoices {
    static func sheet(for agent: WatchdogAgent, from item: UIBarButtonItem) -> UIAlertController {
        let sheet = UIAlertController(title: "Diagnostics", message: "Keyboard and layout reports go to our beta server.", preferredStyle: .actionSheet)
        sheet.addAction(UIAlertAction(title: agent.isCollectionEnabled ? "Stop sharing" : "Share", style: .default) { _ in
            agent.isCollectionEnabled.toggle()                           // saved; off stops checks, writes and uploads
        })
        sheet.addAction(UIAlertAction(title: "Delete unsent reports", style: .destructive) { _ in
            agent.deleteUnsentData()                                     // outbox, drop counts, App Attest state
        })
        sheet.addAction(UIAlertAction(title: "Cancel", style: .cancel))
        sheet.popoverPresentationController?.barButtonItem = item        // an action sheet is a popover on iPad
        return sheet
    }
}
#endif
