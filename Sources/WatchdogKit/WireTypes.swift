import WatchdogWire

// The wire model's types an app names when it sets up the agent, so that `import WatchdogKit`
// is all an app writes (they are WatchdogWire's, which the server shares).

/// The app's release as reports and session starts carry it (`version`, `build`, `channel`).
public typealias Release = WatchdogWire.Release

/// The device as reports carry it: model (`iPhone15,2`), OS and version, idiom, locale.
public typealias Device = WatchdogWire.Device

/// A rectangle in points (a window, a view, the keyboard): `Frame(window.frame)` on iOS.
public typealias Frame = WatchdogWire.Frame
