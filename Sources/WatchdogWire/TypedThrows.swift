// Typed throws through the standard library's `Result.get()` and `Optional.map`: Swift 6's
// standard library keeps the error's type; older ones (an iOS SDK's, which the iOS type-check
// compiles against) throw `any Error`, which a `throws(ErrorDetail)` function cannot rethrow.

extension Result {
    /// The success value, or the failure thrown as its own type (`get()` in Swift 6).
    func value() throws(Failure) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let failure): throw failure
        }
    }
}

extension Optional {
    /// `map` whose closure's error is thrown as its own type (`map` in Swift 6).
    func typedMap<Mapped, Failure: Error>(_ transform: (Wrapped) throws(Failure) -> Mapped) throws(Failure) -> Mapped? {
        switch self {
        case .some(let wrapped): return try transform(wrapped)
        case .none: return nil
        }
    }
}
