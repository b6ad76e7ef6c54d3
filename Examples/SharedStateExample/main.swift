// The README's SharedState example: a setting kept in a JSON file, a counter kept in memory.
//   swift run shared-state-example /tmp/example    # run it twice: launches go up, requests do not
import Foundation
import SharedState

struct Settings: Codable, Sendable {
  var theme = "light"
  var launches = 0
}

func main() async throws {
  let folder = URL(filePath: CommandLine.arguments.dropFirst().first ?? FileManager.default.currentDirectoryPath)
  @Shared(.fileStorage(folder.appending(path: "settings.json"))) var settings = Settings()
  @Shared(.inMemory("requests")) var requests = 0

  $settings.withLock { $0.launches += 1 }  // atomic read-modify-write, saved within a second…
  $requests.withLock { $0 += 1 }  // …or never: in-memory values die with the process
  try await $settings.save()  // written now
  print("launch \(settings.launches), theme \(settings.theme), \(requests) request this run")
}

try await main()
