// A helper process for SharedStateTests: it uses a `.fileStorage` key on the real file system
// (or, for `await` and `set`, an `.appStorage` key in a real UserDefaults suite when PATH is
// `defaults:SUITE:KEY`) and reports on standard output, so the tests can signal it, let it exit,
// or race it.
//
//   SharedStateChild window PATH VALUE        write -1 (a first change, written at once), then
//                                             leave VALUE pending (60 s window), print "ready",
//                                             wait for a signal
//   SharedStateChild host-handler PATH VALUE  same, with a host SIGTERM handler that exits 42
//   SharedStateChild opt-out PATH VALUE       same, after opting out of exit handling
//   SharedStateChild exit PATH VALUE          write -1, leave VALUE pending, then exit(0)
//   SharedStateChild await PATH VALUE         print "ready CURRENT", wait until VALUE, print "seen VALUE"
//   SharedStateChild set PATH VALUE           print "loaded CURRENT", save VALUE now, exit
//   SharedStateChild defaults-set SUITE:KEY VALUE   set the entry with UserDefaults itself (a
//                                                   number, or else a string), exit
//   SharedStateChild allocations - N          print the mallocs of N withLock calls on an
//                                             .inMemory value, then those of N objects made
import AllocationCounting
import Foundation
import Glibc
import SharedState

func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let target = Int(arguments[3]) ?? (arguments[1] == "defaults-set" ? 0 : nil) else {
  say("usage: SharedStateChild window|host-handler|opt-out|exit|await|set|defaults-set|allocations PATH VALUE")
  exit(2)
}
let url = URL(filePath: arguments[2])

/// A file's value with `value` waiting in a 60 s window: the first change (-1) is written at once
/// and waited for, so the next one waits for the window.
func sharedWithAPendingChange(_ value: Int) -> Shared<Int> {
  let key = FileStorageKey<Int>.fileStorage(url, writeWindow: .seconds(60))
  let shared = Shared(wrappedValue: 0, key)
  shared.withLock { $0 = -1 }
  let deadline = Date().addingTimeInterval(20)
  while key.persistence.hasPendingWrite, Date() < deadline { usleep(10_000) }
  shared.withLock { $0 = value }
  return shared
}

/// The shared value of PATH: a file, or `defaults:SUITE:KEY`.
func shared() -> Shared<Int> {
  let parts = arguments[2].split(separator: ":").map(String.init)
  guard parts.count == 3, parts[0] == "defaults" else { return Shared(wrappedValue: 0, .fileStorage(url)) }
  var environment = SharedEnvironment.live
  environment.defaults = .suite(parts[1])
  return environment.withValue { Shared(wrappedValue: 0, .appStorage(parts[2])) }
}

switch arguments[1] {
case "window", "host-handler", "opt-out":
  if arguments[1] == "host-handler" {
    // The host's own handler, installed before the library's: it must still run.
    signal(SIGTERM) { _ in _exit(42) }
  }
  if arguments[1] == "opt-out" {
    PendingWrites.installsExitHandlersAutomatically = false
  }
  // Held for the life of the process: a last handle going away would write at once.
  withExtendedLifetime(sharedWithAPendingChange(target)) {
    say("ready")
    while true { sleep(60) }
  }

case "exit":
  withExtendedLifetime(sharedWithAPendingChange(target)) { exit(0) }

case "allocations":
  let shared = SharedEnvironment.test().withValue { Shared(wrappedValue: 0, .inMemory("allocations")) }
  // Metadata and caches are made by the first call.
  shared.withLock { $0 += 1 }
  allocation_counting_start()
  for _ in 0..<target { shared.withLock { $0 += 1 } }
  let mutations = allocation_counting_stop()
  // The control: objects are allocated, and counted.
  allocation_counting_start()
  for value in 0..<target { withExtendedLifetime(CountedObject(value)) {} }
  let objects = allocation_counting_stop()
  say("\(mutations) \(objects)")
  exit(0)

case "defaults-set":
  let parts = arguments[2].split(separator: ":").map(String.init)
  let defaults = UserDefaults(suiteName: parts[0])
  // A word is written as a string: a value of the wrong type for an Int key.
  if let number = Int(arguments[3]) {
    defaults?.set(number, forKey: parts[1])
  } else {
    defaults?.set(arguments[3], forKey: parts[1])
  }
  exit(defaults?.synchronize() == true ? 0 : 5)

case "await":
  let shared = shared()
  say("ready \(shared.wrappedValue)")
  let deadline = Date().addingTimeInterval(20)
  let done = DispatchSemaphore(value: 0)
  // Detached: top-level code runs on the main actor, whose thread waits below.
  Task.detached {
    for await value in shared.values where value == target {
      say("seen \(value)")
      exit(0)
    }
  }
  _ = done.wait(timeout: .now() + deadline.timeIntervalSinceNow)
  say("timeout at \(shared.wrappedValue)")
  exit(3)

case "set":
  let shared = shared()
  say("loaded \(shared.wrappedValue)")
  shared.withLock { $0 = target }
  let done = DispatchSemaphore(value: 0)
  // Detached: top-level code runs on the main actor, whose thread waits below.
  Task.detached {
    do {
      try await shared.save()
      exit(0)
    } catch {
      say("error \(error)")
      exit(4)
    }
  }
  done.wait()

default:
  say("unknown mode \(arguments[1])")
  exit(2)
}

/// An object whose every instance is an allocation.
final class CountedObject {
  let value: Int
  init(_ value: Int) { self.value = value }
}
