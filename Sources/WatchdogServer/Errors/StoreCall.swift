/// Runs a store call, turning its failure into 503 (and letting an `APIError` through).
func storeCall<T>(_ body: () throws -> T) throws(APIError) -> T {
    do {
        return try body()
    } catch let error as APIError {
        throw error
    } catch {
        if let unreachable = APIError.storeUnreachable(from: error) { throw unreachable }
        throw .unavailable("the store could not be read: \(error)")
    }
}
