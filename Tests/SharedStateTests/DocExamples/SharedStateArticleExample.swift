// The example of the SharedState documentation's front page (SharedState.md), compiled.
import Foundation
import SharedState

struct Settings: Codable, Sendable {
  var theme = "light"
  var launches = 0
}

private func frontPageExample() async throws {
  @Shared(.fileStorage(URL(filePath: "/home/me/.config/tool/settings.json"))) var settings = Settings()
  @Shared(.inMemory("requests")) var requests = 0

  $settings.withLock { $0.launches += 1 }  // written at once; more changes within a second wait for one write
  $requests.withLock { $0 += 1 }  // never saved: it lives as long as the process
  try await $settings.save()  // written before this returns
}
