import WatchdogWire

/// How many distinct values of each client-named dimension watchdogd keeps apart (README,
/// "Cardinality"). A value past its cap is *folded*: counted under `Folded.kind` or
/// `Folded.value` in every roll-up, while the report's body keeps what the client sent.
///
/// Keyboard modes and idioms need no cap: validation admits six and five values.
struct CardinalityLimits: Sendable, Equatable {
    /// Custom (`x-`) kinds per app. Kinds are what an app's own watchdogs name: a few dozen
    /// across all its releases is a large app; 100 leaves room and keeps every kind table,
    /// alert rule list and per-kind time series readable. Built-in kinds are not counted.
    var customKindsPerApp = 100
    /// Screens per release: a large app has a few hundred view controllers.
    var screensPerRelease = 500
    /// View names per release (`view.name`): as many as screens.
    var viewsPerRelease = 500
    /// Device models per release (keyboard-height histogram): Apple has shipped about 150
    /// iPhone and iPad models that run a supported iOS.
    var deviceModelsPerRelease = 200
    /// Keyboard input modes per release (keyboard-height histogram): iOS offers about 100
    /// keyboard languages; a beta's testers use far fewer.
    var inputModesPerRelease = 100
    /// Channels per release (`release.channel`, stored with each report and kept in the
    /// roll-ups): an app ships a build to a handful — debug, internal, beta, TestFlight, App
    /// Store, enterprise — so 16 leaves room for every real one while a client inventing a
    /// channel per report adds at most 16 texts to the store per release.
    var channelsPerRelease = 16
    /// Releases whose admitted values one node keeps in memory; the least recently used is
    /// forgotten and read again from the store when next touched. Each entry holds at most
    /// the caps above as 8-byte hashes (about 20 KiB), so the registry stays under ~10 MiB.
    var releasesInMemory = 512

    /// The largest per-release cap: how many values of each dimension the store is asked for.
    var largestReleaseCap: Int { max(screensPerRelease, viewsPerRelease, deviceModelsPerRelease, inputModesPerRelease, channelsPerRelease) }
}

/// The spellings of folded values. `x-other` is a valid kind and `(other)` a valid screen,
/// view, model, input mode or channel: a client that sends them itself is counted with the
/// folded values (documented), and the `kind=x-other` filters of `timeseries` and `reports` work.
enum Folded {
    static let kind = "x-other"
    static let value = "(other)"
}
