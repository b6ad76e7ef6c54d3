import Foundation
import Testing

@testable import SharedState

private enum Theme: String, Sendable { case light, dark }
private enum Level: Int, Sendable {
  case low = 1
  case high = 2
}
private struct Favourites: Codable, Sendable, Equatable { var ids: [Int] }
private struct Measurement: Codable, Sendable, Equatable { var value: Double }

@Suite(".appStorage on in-memory defaults")
struct AppStorageKeyTests {
  let defaults = InMemoryDefaults()
  var environment: SharedEnvironment { SharedEnvironment.test(defaults: defaults) }

  @Test func everyKindOfValueIsStoredAsUserDefaultsKeepsIt() {
    environment.withValue {
      @Shared(.appStorage("bool")) var bool = false
      @Shared(.appStorage("int")) var int = 0
      @Shared(.appStorage("double")) var double = 0.0
      @Shared(.appStorage("string")) var string = ""
      @Shared(.appStorage("strings")) var strings: [String] = []
      @Shared(.appStorage("url")) var url = URL(filePath: "/")
      @Shared(.appStorage("data")) var data = Data()
      @Shared(.appStorage("date")) var date = Date(timeIntervalSince1970: 0)
      @Shared(.appStorage("theme")) var theme = Theme.light
      @Shared(.appStorage("level")) var level = Level.low
      @Shared(.appStorage("favourites")) var favourites = Favourites(ids: [])
      $bool.withLock { $0 = true }
      $int.withLock { $0 = 7 }
      $double.withLock { $0 = 2.5 }
      $string.withLock { $0 = "hi" }
      $strings.withLock { $0 = ["a", "b"] }
      $url.withLock { $0 = URL(string: "https://example.org/x")! }
      $data.withLock { $0 = Data([1, 2]) }
      $date.withLock { $0 = Date(timeIntervalSince1970: 60) }
      $theme.withLock { $0 = .dark }
      $level.withLock { $0 = .high }
      $favourites.withLock { $0.ids = [3, 1] }
      #expect(defaults.value(forKey: "bool") == .bool(true))
      #expect(defaults.value(forKey: "int") == .integer(7))
      #expect(defaults.value(forKey: "double") == .double(2.5))
      #expect(defaults.value(forKey: "string") == .string("hi"))
      #expect(defaults.value(forKey: "strings") == .strings(["a", "b"]))
      #expect(defaults.value(forKey: "url") == .string("https://example.org/x"))
      #expect(defaults.value(forKey: "data") == .data(Data([1, 2])))
      #expect(defaults.value(forKey: "date") == .date(Date(timeIntervalSince1970: 60)))
      #expect(defaults.value(forKey: "theme") == .string("dark"))
      #expect(defaults.value(forKey: "level") == .integer(2))
      #expect(defaults.value(forKey: "favourites") == .data(try! JSONEncoder().encode(Favourites(ids: [3, 1]))))
    }
  }

  @Test func storedValuesAreReadAndAbsentOnesGiveTheDefault() {
    defaults.setValue(.integer(5), forKey: "count")
    defaults.setValue(.string("dark"), forKey: "theme")
    environment.withValue {
      @Shared(.appStorage("count")) var count = 0
      @Shared(.appStorage("theme")) var theme = Theme.light
      @Shared(.appStorage("missing")) var missing = 3
      #expect(count == 5 && theme == .dark && missing == 3)
      #expect($missing.loadError == nil)
    }
  }

  @Test func nilRemovesTheEntryAndOptionalsNeedNoDefault() {
    environment.withValue {
      @Shared(.appStorage("name")) var name: String?
      #expect(name == nil)
      $name.withLock { $0 = "ada" }
      #expect(defaults.value(forKey: "name") == .string("ada"))
      $name.withLock { $0 = nil }
      #expect(defaults.value(forKey: "name") == nil)
      #expect(defaults.keys.isEmpty)
    }
  }

  @Test func writesAreMadeAtOnceWithoutAWindow() {
    environment.withValue {
      @Shared(.appStorage("count")) var count = 0
      for _ in 0..<3 { $count.withLock { $0 += 1 } }
      #expect(defaults.value(forKey: "count") == .integer(3))
      #expect(defaults.writeCount == 3)
    }
  }

  @Test func aValueOfTheWrongTypeIsALoadErrorAndIsKeptBeforeItIsOverwritten() {
    defaults.setValue(.string("seven"), forKey: "count")
    environment.withValue {
      @Shared(.appStorage("count")) var count = 0
      #expect(count == 0)
      let error = $count.loadError as? AppStorageError
      #expect(error != nil)
      #expect("\(error.map { "\($0)" } ?? "")".contains("holds a String, not Int"))
      #expect(defaults.value(forKey: "count") == .string("seven"), "the entry was changed by a load")
      $count.withLock { $0 = 8 }
      #expect(defaults.value(forKey: "count") == .integer(8))
      let copies = defaults.keys.filter { $0.hasPrefix("count.undecodable-") }
      #expect(copies.count == 1)
      #expect(copies.first.flatMap(defaults.value(forKey:)) == .string("seven"))
    }
  }

  @Test func dataThatIsNotTheJSONOfTheTypeIsALoadErrorThatSaysWhy() {
    defaults.setValue(.data(Data("{\"ids\": \"x\"}".utf8)), forKey: "favourites")
    environment.withValue {
      @Shared(.appStorage("favourites")) var favourites = Favourites(ids: [])
      let message = $favourites.loadError.map { "\($0)" } ?? ""
      #expect(message.contains("is not the JSON of Favourites"), "\(message)")
      #expect(defaults.value(forKey: "favourites") == .data(Data("{\"ids\": \"x\"}".utf8)))
    }
  }

  @Test func aValueThatCannotBeEncodedIsASaveErrorAndTheEntryIsKept() {
    let stored = try! JSONEncoder().encode(Measurement(value: 1))
    defaults.setValue(.data(stored), forKey: "measurement")
    environment.withValue {
      @Shared(.appStorage("measurement")) var measurement = Measurement(value: 0)
      #expect(measurement == Measurement(value: 1))
      $measurement.withLock { $0.value = .nan }  // JSONEncoder refuses NaN
      #expect($measurement.saveError != nil)
      #expect(defaults.value(forKey: "measurement") == .data(stored), "an unencodable value removed the entry")
    }
  }

  @Test func changesByAnotherWriterArriveAndTheKeysOwnWritesDoNot() {
    environment.withValue {
      @Shared(.appStorage("count")) var count = 0
      let before = defaults.writeCount
      $count.withLock { $0 = 1 }
      #expect(count == 1 && defaults.writeCount == before + 1)
      defaults.setValue(.integer(4), forKey: "count")
      #expect(count == 4)
      defaults.setValue(nil, forKey: "count")
      #expect(count == 0)
    }
  }

  @Test func twoHandlesOfOneEntryShareOneValue() {
    environment.withValue {
      @Shared(.appStorage("count")) var a = 0
      @Shared(.appStorage("count")) var b = 0
      $a.withLock { $0 = 2 }
      #expect(b == 2)
    }
  }

  @Test func eachTestEnvironmentStartsWithEmptyDefaults() {
    SharedEnvironment.test().withValue {
      @Shared(.appStorage("count")) var count = 0
      $count.withLock { $0 = 9 }
    }
    SharedEnvironment.test().withValue {
      @Shared(.appStorage("count")) var count = 0
      #expect(count == 0)
    }
  }
}
