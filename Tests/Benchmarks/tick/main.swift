// What one watchdog tick costs the main thread, in plain Swift: the UIKit driver's walk over a
// window's 500 views for the first responder (`ViewTreeSearch`, as the driver runs it over
// UIViews) and the agent's tick for that window (`WatchdogAgent.tick(_:observe:)`: the lock
// observation, five watched views against their expectations, the input check with the
// keyboard up — a second walk — the lock watchdogs, and starting the background sync), when
// collecting; and the same tick with collection off and with the scene in the background.
//
//   swift build -c release --product tick-benchmark && "$(swift build -c release --show-bin-path)/tick-benchmark"
//
// Beside each figure, a yardstick doing the same work by hand: the same two walks over the
// same nodes and the same five frame comparisons, inline, with none of the agent around them.
// Prints the median over 7 rounds of microseconds per tick. A program that prints figures, not
// a timed test: compare runs of the same build mode on the same machine. UIKit's own cost
// (`subviews`, `isFirstResponder` on real views, `convert(_:to:)`) is not in it: this is the
// SDK's share, measured where it can be.
import Foundation
import WatchdogKit

/// A view: children and whether it is the first responder.
final class Node {
    var children: [Node] = []
    var isFirstResponder = false
    var frame: Frame

    init(frame: Frame) { self.frame = frame }
}

/// `count` views, five children to a view (levels of 1, 5, 25, 125 and the rest), the text
/// field the last one made: the whole tree is walked to find it.
func makeTree(count: Int) -> (root: Node, field: Node) {
    let root = Node(frame: Frame(x: 0, y: 0, width: 390, height: 844))
    var queue = [root], next = 0, made = 1, last = root
    while made < count {
        let parent = queue[next]
        next += 1
        for index in 0..<5 where made < count {
            let child = Node(frame: Frame(x: parent.frame.x + Double(index) * 8, y: parent.frame.y + 4, width: 40, height: 36))
            parent.children.append(child)
            queue.append(child)
            made += 1
            last = child
        }
    }
    last.isFirstResponder = true
    return (root, last)
}

func countNodes(_ node: Node) -> Int { 1 + node.children.reduce(0) { $0 + countNodes($1) } }

/// The agent on a temporary directory, offline; five watched views in their place; the
/// keyboard up; one scene, active.
@MainActor
func makeAgent(tree: Node, field: Node) -> (WatchdogAgent, WatchdogScene) {
    struct Offline: HTTPTransport {
        struct Unreachable: Error {}
        func send(_ request: TransportRequest) async throws -> TransportResponse { throw Unreachable() }
    }
    let storage = FileManager.default.temporaryDirectory.appendingPathComponent("tick-benchmark-\(UUID().uuidString)")
    let settings = WatchdogSettings(endpoint: URL(string: "https://watchdog.example.com")!, ingestKey: "wdi_bench", app: "com.example.mail",
                                    release: Release(version: "1", build: "1"), device: Device(idiom: "phone"), idiom: .phone, storageDirectory: storage)
    let agent = WatchdogAgent(settings: settings, window: tree.frame, transport: Offline(), crashHandler: { _ in })
    let scene = agent.attachScene(window: tree.frame)
    agent.setAppState(.active, for: scene)
    scene.layout.firstResponder = {
        guard let responder = ViewTreeSearch.first(in: tree, children: \.children, where: \.isFirstResponder) else { return .none }
        return .input(responder.frame)
    }
    for index in 0..<5 {
        let y = 844 - 336 - 44 - Double(index) * 44
        scene.layout.watch(WatchedView(name: "view\(index)", expectedFrame: { Frame(x: 0, y: y, width: 390, height: 44) },
                                       actualFrame: { Frame(x: 0, y: y, width: 390, height: 44) }))
    }
    agent.keyboardEvent(KeyboardEvent(kind: .willShow, frameBegin: Frame(x: 0, y: 844, width: 390, height: 336),
                                      frameEnd: Frame(x: 0, y: 508, width: 390, height: 336), animationDuration: 0, animationCurve: 7), in: scene)
    _ = field
    return (agent, scene)
}

/// The median, min and max over 7 rounds of microseconds per call of `body`.
func measure(_ iterations: Int, _ body: () -> Void) -> (median: Double, min: Double, max: Double) {
    var rounds: [Double] = []
    for _ in 0..<7 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { body() }
        rounds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations) / 1000)
    }
    rounds.sort()
    return (rounds[3], rounds[0], rounds[6])
}

func line(_ name: String, _ figure: (median: Double, min: Double, max: Double)) -> String {
    String(format: "%-44@ median %7.2f µs per tick (min %.2f, max %.2f)", name as NSString, figure.median, figure.min, figure.max)
}

@MainActor
func run() {
    let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000
    let (tree, field) = makeTree(count: 500)
    let (agent, scene) = makeAgent(tree: tree, field: field)
    print("views in the tree: \(countNodes(tree)); first responder: the last leaf (the whole tree is walked)")

    var sink = 0
    // The yardstick: the same two walks and five comparisons, by hand.
    let yardstick = measure(iterations) {
        func walk(_ node: Node) -> Node? {
            if node.isFirstResponder { return node }
            for child in node.children { if let found = walk(child) { return found } }
            return nil
        }
        if walk(tree) != nil { sink += 1 }
        if let found = walk(tree), found.frame.maxY > 508 { sink += 1 }
        for index in 0..<5 {
            let y = 844 - 336 - 44 - Double(index) * 44
            let expected = Frame(x: 0, y: y, width: 390, height: 44), actual = Frame(x: 0, y: y, width: 390, height: 44)
            if abs(expected.y - actual.y) > 1 || abs(expected.height - actual.height) > 1 { sink += 1 }
        }
    }
    let walkOnly = measure(iterations) {
        if ViewTreeSearch.first(in: tree, children: \.children, where: \.isFirstResponder) != nil { sink += 1 }
    }
    let collecting = measure(iterations) {
        agent.tick(scene) {
            let responder = ViewTreeSearch.first(in: tree, children: \.children, where: \.isFirstResponder)
            return LockObservation(screen: responder == nil ? nil : "ComposeViewController")
        }
    }
    agent.isCollectionEnabled = false
    let off = measure(iterations) {
        agent.tick(scene) { ViewTreeSearch.first(in: tree, children: \.children, where: \.isFirstResponder).map { _ in .clear } ?? .clear }
    }
    agent.isCollectionEnabled = true
    agent.setAppState(.background, for: scene)
    let background = measure(iterations) {
        agent.tick(scene) { ViewTreeSearch.first(in: tree, children: \.children, where: \.isFirstResponder).map { _ in .clear } ?? .clear }
    }
    print(line("yardstick: two walks + 5 comparisons by hand", yardstick))
    print(line("ViewTreeSearch, one walk of 500 views", walkOnly))
    print(line("agent tick, collecting, keyboard up", collecting))
    print(line("agent tick, collection off", off))
    print(line("agent tick, scene in the background", background))
    print("(\(iterations) ticks a round, 7 rounds; reports written: \(agent.reportsSaved); sink \(sink))")
    try? FileManager.default.removeItem(at: agent.settings.storageDirectory)
}

MainActor.assumeIsolated { run() }
