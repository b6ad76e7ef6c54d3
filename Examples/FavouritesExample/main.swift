// The seeds' favourites, on Linux: a set of ids in UserDefaults (~/.config/favourites-example.plist),
// shared by every feature that names the key, changed atomically, read-only where it is only read.
//   swift run favourites-example toggle 42    # marks 42, or unmarks it
//   swift run favourites-example list
//   swift run favourites-example watch 2      # prints the next 2 changes other processes make
import Foundation
import SharedState

extension SharedKey where Self == AppStorageKey<Set<Int>>.Default {
  /// One name, one type and one default for every feature that shares the favourites.
  static var favourites: Self { Self[.appStorage("favourites"), default: []] }
}

/// The detail screen: marks and unmarks.
struct Detail {
  @Shared(.favourites) var favourites

  func toggle(_ id: Int) {
    $favourites.withLock { favourites in
      if favourites.contains(id) { favourites.remove(id) } else { favourites.insert(id) }
    }
  }
}

/// The statistics screen: reads, and the compiler keeps it from writing.
struct Statistics {
  @SharedReader(.favourites) var favourites

  var summary: String {
    favourites.isEmpty
      ? "no favourites"
      : "\(favourites.count) favourites: " + favourites.sorted().map(String.init).joined(separator: ", ")
  }
}

/// Writes a line at once, unbuffered, so a program reading a pipe sees each change.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func main() async {
  let arguments = Array(CommandLine.arguments.dropFirst())
  switch (arguments.first, arguments.dropFirst().first.flatMap(Int.init)) {
  case ("toggle", let id?):
    Detail().toggle(id)
    say(Statistics().summary)
  case ("list", nil):
    say(Statistics().summary)
  case ("watch", let count?):
    let statistics = Statistics()
    // The current favourites first, then `count` changes: one stream, so none is missed between.
    for await _ in statistics.$favourites.values.prefix(count + 1) { say(statistics.summary) }
  default:
    FileHandle.standardError.write(Data("usage: favourites-example toggle ID | list | watch COUNT\n".utf8))
    exit(64)
  }
}

await main()
