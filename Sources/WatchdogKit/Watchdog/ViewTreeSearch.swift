/// The depth-first search the UIKit driver runs over a window's views at a tick (for the
/// first responder): generic over the node, so its cost is measured in plain Swift with a
/// tree of any size (`Tests/Benchmarks/tick`).
public enum ViewTreeSearch {
    /// The first node, depth first from `root` (itself included), that `matches`.
    @inlinable
    public static func first<Node>(in root: Node, children: (Node) -> [Node], where matches: (Node) -> Bool) -> Node? {
        if matches(root) { return root }
        for child in children(root) {
            if let found = first(in: child, children: children, where: matches) { return found }
        }
        return nil
    }
}
