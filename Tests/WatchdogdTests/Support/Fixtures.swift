// The shared fixtures (Tests/Fixtures, and fresh reports and sessions made from them) are
// WatchdogTesting's, for the live-daemon tests as for the in-memory ones.
@_exported import WatchdogTesting
