/// A rectangle in points, as UIKit's `CGRect` reports it: origin at the top left, y downwards.
public struct Frame: Codable, Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = Frame(x: 0, y: 0, width: 0, height: 0)

    public var minY: Double { y }
    public var maxY: Double { y + height }
    public var minX: Double { x }
    public var maxX: Double { x + width }
}
