#if os(iOS)
import SwiftUI
import UIKit
import WatchdogKit

/// A SwiftUI screen: a list of messages and a composer in `.safeAreaInset(edge: .bottom)`,
/// which SwiftUI keeps on the keyboard's top edge — and Watchdog checks that it is.
@available(iOS 15.0, *)
struct ChatView: View {
    let messages: [String]
    @State private var draft = ""

    var body: some View {
        List(messages, id: \.self) { Text($0) }
            .safeAreaInset(edge: .bottom) {
                ComposerBar(text: $draft)
                    .watchdog("composer", screen: "Chat", expect: .keyboardTop)  // on the keyboard's top edge
            }
    }
}

@available(iOS 15.0, *)
struct ComposerBar: View {
    @Binding var text: String

    var body: some View {
        HStack {
            TextField("Message", text: $text)
            Button("Send") { text = "" }
        }
        .padding()
        .background(Color(UIColor.systemBackground))
    }
}
#endif
