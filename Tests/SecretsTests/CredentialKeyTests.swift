import Foundation
import SecretTestSupport
import Secrets
import Testing

struct APIToken: Codable, Sendable, Equatable {
  var value: String
  var scope: String
}

/// A credentials folder of the test's own (inside a folder that also holds the test's other
/// files), removed when the test ends.
final class CredentialsFolder: Sendable {
  let root: URL
  let url: URL

  init() throws {
    root = try makeTemporaryDirectory()
    url = root.appending(path: "credentials")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
  }

  deinit { try? FileManager.default.removeItem(at: root) }

  /// Writes a credential as systemd does: the bytes as given, mode 0400 unless told.
  func put(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o400) throws {
    let path = url.appending(path: name).path
    try Data(bytes).write(to: URL(filePath: path))
    guard chmod(path, mode) == 0 else { throw HarnessError("cannot chmod \(path)") }
  }

  func put(_ name: String, _ text: String) throws { try put(name, Array(text.utf8)) }

  func path(_ name: String) -> String { url.appending(path: name).path }

  /// A test environment whose `.credential` keys read this folder.
  var environment: SharedEnvironment {
    var environment = SharedEnvironment.test()
    environment.credentialsDirectory = url
    return environment
  }
}

@Suite("CredentialKey: a service's systemd credentials")
struct CredentialKeyTests {
  @Test func withNoCredentialsFolderEveryCredentialIsItsDefaultAndNoError() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", "s3cr3t")
    SharedEnvironment.test().withValue {
      #expect(SharedEnvironment.current.credentialsDirectory == nil)
      @SharedReader(.credential("api-token")) var token = "none"
      #expect(token == "none")
      #expect($token.loadError == nil)
    }
    folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token = "none"
      #expect(token == "s3cr3t", "the same credential, with its folder set, is read")
    }
  }

  @Test func aCredentialsFolderThatDoesNotExistGivesTheDefaultAndNoError() throws {
    let folder = try CredentialsFolder()
    var environment = SharedEnvironment.test()
    environment.credentialsDirectory = folder.url.appending(path: "gone")
    environment.withValue {
      @SharedReader(.credential("api-token")) var token: String?
      #expect(token == nil)
      #expect($token.loadError == nil)
    }
  }

  @Test func aMissingFileGivesTheDefaultAndNoErrorWhileItsNeighbourIsRead() throws {
    let folder = try CredentialsFolder()
    try folder.put("other", "present")
    folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token = "default"
      @SharedReader(.credential("other")) var other = "default"
      #expect(token == "default")
      #expect($token.loadError == nil)
      #expect(other == "present")
    }
  }

  @Test func aStringIsTheFilesUTF8AsItIsTrailingNewlineIncluded() throws {
    let folder = try CredentialsFolder()
    try folder.put("with-newline", "tök3n\n")
    try folder.put("without", "tök3n")
    folder.environment.withValue {
      @SharedReader(.credential("with-newline")) var withNewline: String?
      @SharedReader(.credential("without")) var without = ""
      #expect(withNewline == "tök3n\n")
      #expect(without == "tök3n")
    }
  }

  @Test func dataAndByteArraysAreTheFilesBytesWhateverTheyAre() throws {
    let folder = try CredentialsFolder()
    let bytes: [UInt8] = [0x00, 0xFF, 0x0A, 0x80, 0x22, 0x7B]
    try folder.put("key", bytes)
    folder.environment.withValue {
      @SharedReader(.credential("key")) var data: Data?
      @SharedReader(.credential("key")) var array: [UInt8] = []
      #expect(data == Data(bytes))
      #expect(array == bytes)
    }
  }

  @Test func aCredentialLargerThanOneReadIsReadWhole() throws {
    let folder = try CredentialsFolder()
    let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    try folder.put("large", bytes)
    folder.environment.withValue {
      @SharedReader(.credential("large")) var data: Data?
      #expect(data == Data(bytes))
    }
  }

  /// systemd writes an empty file for a credential its source (secretd) did not give.
  @Test func anEmptyFileIsAbsentAsSystemdWritesOneForACredentialItsSourceDidNotGive() throws {
    let folder = try CredentialsFolder()
    try folder.put("empty", [])
    try folder.put("one", [0x41])
    folder.environment.withValue {
      @SharedReader(.credential("empty")) var text = "default"
      @SharedReader(.credential("one")) var one = "default"
      #expect(text == "default")
      #expect($text.loadError == nil)
      #expect(one == "A", "positive control: a non-empty file is read")
    }
  }

  @Test func aCodableValueIsDecodedFromJSON() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", #"{"value":"s3cr3t","scope":"deploy"}"#)
    try folder.put("retries", "3\n")
    folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token: APIToken?
      @SharedReader(.credential("retries")) var retries = 0
      #expect(token == APIToken(value: "s3cr3t", scope: "deploy"))
      #expect(retries == 3)
    }
  }

  @Test(arguments: [
    #"{"value":"hunter2-secret","scope":"#, #"{"value":"hunter2-secret"}"#, #"hunter2-secret"#,
  ])
  func undecodableJSONIsAnErrorNamingTheCredentialAndFileNeverTheContents(contents: String) throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", contents)
    try folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token: APIToken?
      #expect(token == nil, "the value stays the default")
      let error = try #require($token.loadError as? CredentialKeyError)
      guard case .undecodable(let name, let path, _) = error else {
        Issue.record("expected undecodable, got \(error)")
        return
      }
      #expect(name == "api-token")
      #expect(path == folder.path("api-token"))
      #expect(error.description.contains(#""api-token""#))
      #expect(error.description.contains(folder.path("api-token")))
      #expect(!error.description.contains("hunter2"), "the error quotes the secret: \(error)")
    }
  }

  @Test func aStringCredentialThatIsNotUTF8IsAnErrorWhileDataReadsIt() throws {
    let folder = try CredentialsFolder()
    try folder.put("binary", [0x68, 0x75, 0x6E, 0xFF, 0xFE])
    try folder.environment.withValue {
      @SharedReader(.credential("binary")) var text: String?
      @SharedReader(.credential("binary")) var data: Data?
      let error = try #require($text.loadError as? CredentialKeyError)
      #expect(
        error
          == .undecodable(
            name: "binary", path: folder.path("binary"),
            reason: "not UTF-8 text (declare the value as Data to read any bytes)"))
      #expect(data == Data([0x68, 0x75, 0x6E, 0xFF, 0xFE]))
    }
  }

  @Test func aFolderInTheFilesPlaceIsAnUnreadableError() throws {
    let folder = try CredentialsFolder()
    try FileManager.default.createDirectory(
      at: folder.url.appending(path: "api-token"), withIntermediateDirectories: false)
    try folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token = "default"
      #expect(token == "default")
      let error = try #require($token.loadError as? CredentialKeyError)
      guard case .unreadable(let name, let path, _) = error else {
        Issue.record("expected unreadable, got \(error)")
        return
      }
      #expect(name == "api-token")
      #expect(path == folder.path("api-token"))
    }
  }

  @Test func aPipeInTheFilesPlaceIsAnErrorNotAWait() throws {
    let folder = try CredentialsFolder()
    #expect(mkfifo(folder.path("api-token"), 0o600) == 0)
    folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token: String?
      #expect(($token.loadError as? CredentialKeyError)?.name == "api-token")
      #expect(
        ($token.loadError as? CredentialKeyError).map { if case .unreadable = $0 { true } else { false } } == true)
    }
  }

  /// Root reads a mode 000 file anyway: as root, CredentialServiceExampleTests covers this by
  /// running the example as another user.
  @Test(.enabled(if: getuid() != 0, "root may read any file"))
  func aFileTheServiceMayNotReadIsAnUnreadableError() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", Array("s3cr3t".utf8), mode: 0)
    try folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token: String?
      #expect(token == nil)
      let error = try #require($token.loadError as? CredentialKeyError)
      #expect(error.description.contains("Permission denied"))
      #expect(error.name == "api-token")
    }
  }

  @Test(arguments: ["", ".", "..", "a/b", "../api-token", "a:b", "tab\there", "ü", String(repeating: "x", count: 256)])
  func aNameSystemdWouldRefuseIsAnError(name: String) throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", "s3cr3t")
    // What `../api-token` would reach outside the folder.
    try Data("outside".utf8).write(to: folder.root.appending(path: "api-token"))
    folder.environment.withValue {
      @SharedReader(.credential(name)) var token: String?
      #expect(token == nil)
      #expect($token.loadError as? CredentialKeyError == .invalidName(name))
    }
  }

  @Test(arguments: ["my token", "a.b-c_d@e+f", String(repeating: "x", count: 255)])
  func everyNameSystemdAcceptsIsRead(name: String) throws {
    let folder = try CredentialsFolder()
    try folder.put(name, "s3cr3t")
    folder.environment.withValue {
      @SharedReader(.credential(name)) var token: String?
      #expect(token == "s3cr3t")
    }
  }

  @Test func anExplicitLoadReadsTheFileAgainAndClearsAnError() async throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", "not json")
    try await folder.environment.withValue {
      @SharedReader(.credential("api-token")) var token: APIToken?
      #expect($token.loadError is CredentialKeyError)
      try FileManager.default.removeItem(atPath: folder.path("api-token"))
      try folder.put("api-token", #"{"value":"new","scope":"s"}"#)
      try await $token.load()
      #expect(token == APIToken(value: "new", scope: "s"))
      #expect($token.loadError == nil)
    }
  }

  @Test func keysOfDifferentFoldersNeverShareAValue() throws {
    let first = try CredentialsFolder()
    let second = try CredentialsFolder()
    try first.put("api-token", "first")
    try second.put("api-token", "second")
    first.environment.withValue {
      @SharedReader(.credential("api-token")) var one = ""
      second.environment.withValue {
        @SharedReader(.credential("api-token")) var two = ""
        #expect(one == "first")
        #expect(two == "second")
      }
    }
  }

  @Test func declarationsInOneEnvironmentShareOneValue() throws {
    let folder = try CredentialsFolder()
    folder.environment.withValue {
      @SharedReader(.credential("api-token")) var first = "first default"
      @SharedReader(.credential("api-token")) var second = "second default"
      #expect(first == "first default")
      #expect(second == "first default", "the first declaration's default wins, as for every key")
    }
  }
}
