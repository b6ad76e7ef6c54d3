import Foundation
import SecretTestSupport
import SharedState
import Testing

/// `.appStorage` on real UserDefaults suites, in helper processes with a HOME of their own.
@Suite(".appStorage across processes")
struct AppStorageProcessTests {
  @Test func aValueWrittenByOneProcessArrivesLiveInAnother() throws {
    let home = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: home) }
    var environment = environmentWithoutBus
    environment["HOME"] = home.path
    environment["XDG_CONFIG_HOME"] = home.appending(path: ".config").path
    let entry = "defaults:com.example.shared-state-test:count"
    let watcher = try HelperProcess(["await", entry, "7"], environment: environment)
    try watcher.expectLine("ready 0")
    let writer = try HelperProcess(["set", entry, "7"], environment: environment)
    try writer.expectLine("loaded 0")
    #expect(writer.wait() == .exited(0))
    try watcher.expectLine("seen 7")
    // The suite is the ordinary UserDefaults file, which Foundation reads back.
    let plist = try String(
      contentsOf: home.appending(path: ".config/com.example.shared-state-test.plist"), encoding: .utf8)
    #expect(plist.contains("<key>count</key>") && plist.contains("<integer>7</integer>"), "\(plist)")
    // A program that writes with UserDefaults itself is seen too.
    let second = try HelperProcess(["await", entry, "9"], environment: environment)
    try second.expectLine("ready 7")
    #expect(
      try HelperProcess(["defaults-set", "com.example.shared-state-test:count", "9"], environment: environment).wait()
        == .exited(0))
    try second.expectLine("seen 9")
  }
}

@Suite("The favourites example")
struct FavouritesExampleTests {
  @Test func togglesPersistAndAWatchingProcessSeesThemLive() throws {
    let home = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: home) }
    var environment = environmentWithoutBus
    environment["HOME"] = home.path
    environment["XDG_CONFIG_HOME"] = home.appending(path: ".config").path
    func example(_ arguments: String...) throws -> HelperProcess {
      try HelperProcess(program: "favourites-example", arguments, environment: environment)
    }
    let watcher = try example("watch", "2")
    try watcher.expectLine("no favourites")
    try example("toggle", "42").expectLine("1 favourites: 42")
    try watcher.expectLine("1 favourites: 42")
    try example("toggle", "7").expectLine("2 favourites: 7, 42")
    try watcher.expectLine("2 favourites: 7, 42")
    #expect(watcher.wait() == .exited(0))
    try example("toggle", "42").expectLine("1 favourites: 7")
    try example("list").expectLine("1 favourites: 7")
    let plist = try String(contentsOf: home.appending(path: ".config/favourites-example.plist"), encoding: .utf8)
    #expect(plist.contains("<key>favourites</key>"), "\(plist)")
  }
}
