/// An optional written as JSON `null` when absent, instead of being left out (what synthesized
/// `Encodable` does): the API's shapes always carry their rate fields, as numbers or `null`.
/// Declare it with `= nil`, so memberwise initializers take the plain optional.
@propertyWrapper
struct NullWhenAbsent<Value: Encodable & Equatable & Sendable>: Encodable, Equatable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}
