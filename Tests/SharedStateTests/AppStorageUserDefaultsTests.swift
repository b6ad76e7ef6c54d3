import Foundation
import SharedState
import Testing

/// `.appStorage` given real `UserDefaults` objects (suites under `$XDG_CONFIG_HOME`, which the
/// test run points into `.build`).
@Suite(".appStorage on UserDefaults objects")
struct AppStorageUserDefaultsTests {
  let suite = "shared-state-tests-\(UUID().uuidString)"

  @Test func aFileURLIsKeptAsFoundationKeepsOneSoThatUserDefaultsReadsItBack() async throws {
    let defaults = try #require(UserDefaults(suiteName: suite))
    try await testEnvironment().withValue {
      @Shared(.appStorage("folder", store: defaults)) var folder = URL(filePath: "/")
      $folder.withLock { $0 = URL(fileURLWithPath: "/tmp") }
      #expect(defaults.url(forKey: "folder") == URL(fileURLWithPath: "/tmp"))
      try await $folder.load()
      #expect(folder == URL(fileURLWithPath: "/tmp"))
    }
  }

  @Test func aURLFoundationStoredIsReadWithItsScheme() throws {
    let defaults = try #require(UserDefaults(suiteName: suite))
    // Foundation on Linux stores a file URL as its bare path.
    defaults.set(URL(fileURLWithPath: "/dev"), forKey: "device")
    testEnvironment().withValue {
      @Shared(.appStorage("device", store: defaults)) var device = URL(filePath: "/")
      #expect(device == URL(fileURLWithPath: "/dev"))
      #expect(device.isFileURL)
    }
  }

  @Test func aWebURLKeepsEveryPart() async throws {
    let defaults = try #require(UserDefaults(suiteName: suite))
    let page = try #require(URL(string: "https://example.com/a/b?c=d#e"))
    try await testEnvironment().withValue {
      @Shared(.appStorage("page", store: defaults)) var stored: URL? = nil
      $stored.withLock { $0 = page }
      try await $stored.load()
      #expect(stored == page)
      #expect(defaults.string(forKey: "page") == page.absoluteString)
    }
  }

  @Test func keysGivenOneObjectShareAValueAndASecondObjectForItsSuiteIsReported() throws {
    let log = IssueLog()
    let first = try #require(UserDefaults(suiteName: suite))
    let second = try #require(UserDefaults(suiteName: suite))
    testEnvironment(log: log).withValue {
      @Shared(.appStorage("count", store: first)) var count = 0
      @Shared(.appStorage("count", store: first)) var sameObject = 0
      $count.withLock { $0 = 3 }
      #expect(sameObject == 3)
      #expect(log.all.isEmpty, "\(log.all)")
      @Shared(.appStorage("count", store: second)) var otherObject = 0
      _ = otherObject
      #expect(log.all.count == 1)
      #expect(log.all.first?.contains(#".appStorage("count")"#) == true, "\(log.all)")
      #expect(log.all.first?.contains(suite) == true, "\(log.all)")
    }
  }
}
