public import Foundation
public import SharedState

extension SharedReaderKey {
  /// A credential systemd handed the service: the file `$CREDENTIALS_DIRECTORY/NAME`, decoded
  /// as the key's value, read only.
  ///
  /// A unit with `LoadCredential=api-token:%t/secretd/credentials` gets the secret that
  /// `secretctl credential set api-token` stored, from secretd, when it starts:
  ///
  /// ```swift
  /// struct APIToken: Codable, Sendable { var value: String; var scope: String }
  ///
  /// @SharedReader(.credential("api-token")) var token: APIToken?
  /// if let error = $token.loadError { print(error) }   // unreadable or undecodable: never "absent"
  /// ```
  ///
  /// - `String`, `Data` and `[UInt8]` (and their optionals) are the file's bytes as they are:
  ///   a `String` is the file's UTF-8, a trailing newline included when the file has one
  ///   (`secretctl credential set` stores its input exactly; `--trim` drops one newline).
  ///   Every other type is decoded from JSON.
  /// - No credential is not an error: when `$CREDENTIALS_DIRECTORY` is not set (the process
  ///   was not started by a unit with credentials), when its folder or the file does not
  ///   exist, the value is the declared default.
  /// - A file that cannot be read (its permissions, a folder or a pipe in its place) or
  ///   decoded gives ``CredentialKeyError`` in `loadError`, naming the credential and the
  ///   path, never the contents.
  /// - It works whatever put the file there: secretd through `LoadCredential=`,
  ///   `LoadCredentialEncrypted=` with a file made by `systemd-creds encrypt`,
  ///   `SetCredential=`, or a plain folder given as `CREDENTIALS_DIRECTORY`.
  ///
  /// systemd fixes a service's credentials when it starts, so the key watches nothing; an
  /// explicit `try await $token.load()` reads the file again.
  ///
  /// The folder is the current `SharedEnvironment`'s `credentialsDirectory`:
  /// `$CREDENTIALS_DIRECTORY` live, none in `SharedEnvironment.test()`, so a test of code that
  /// reads credentials never sees the real ones and sets the folder it wants.
  ///
  /// - Parameter name: The credential's name, as `LoadCredential=NAME:…` gives it: 1 to 255
  ///   printable ASCII characters other than `/` and `:`, neither `.` nor `..`. Any other
  ///   name is a ``CredentialKeyError/invalidName(_:)`` load error.
  public static func credential<Value: Decodable & Sendable>(_ name: String) -> Self
  where Self == CredentialKey<Value> {
    CredentialKey(name: name, directory: SharedEnvironment.current[CredentialsDirectoryKey.self])
  }
}

/// The key behind `.credential(_:)`: one file of a service's credentials folder, read only.
public struct CredentialKey<Value: Decodable & Sendable>: SharedReaderKey, CustomStringConvertible {
  /// The credential's name: its file's name in the credentials folder.
  public let name: String
  let directory: CredentialsDirectory

  init(name: String, directory: CredentialsDirectory) {
    self.name = name
    self.directory = directory
  }

  /// The credential's name and its folder: keys of the same value type with equal ids share
  /// one value.
  public struct ID: Hashable, Sendable {
    /// The credential's name.
    public let name: String
    /// The credentials folder's path, `nil` when there is none.
    public let directory: String?
    let source: ObjectIdentifier
  }

  /// The name, the folder and the environment's folder setting (which differs only in tests).
  public var id: ID { ID(name: name, directory: directory.url?.path, source: ObjectIdentifier(directory)) }

  /// `.credential("NAME")`, for messages and debugging.
  public var description: String { ".credential(\(String(reflecting: name)))" }

  /// Reads the file: at once where the first handle is declared, off the cooperative pool for
  /// an explicit `load()`.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    switch context {
    case .initialValue: continuation.resume(with: read())
    case .userInitiated: DispatchQueue.global().async { continuation.resume(with: read()) }
    }
  }

  /// Nothing to watch: systemd fixes a service's credentials when it starts.
  public func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    SharedSubscription {}
  }

  private func read() -> Result<Value?, any Error> {
    Result { () throws(CredentialKeyError) in
      guard let folder = directory.url else { return nil }
      return try CredentialFile(name: name, folder: folder.path).decode(Value.self)
    }.mapError { $0 }
  }
}

/// The folder `.credential` keys read; an object, whose identity keeps keys made in different
/// environments from sharing a value.
final class CredentialsDirectory: Sendable {
  let url: URL?

  init(url: URL?) { self.url = url }
}

/// `$CREDENTIALS_DIRECTORY` live (read once, when the first key is made); none in tests.
enum CredentialsDirectoryKey: SharedEnvironmentKey {
  static var liveValue: CredentialsDirectory {
    let variable = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] ?? ""
    return CredentialsDirectory(url: variable.isEmpty ? nil : URL(filePath: variable, directoryHint: .isDirectory))
  }
  static func testValue() -> CredentialsDirectory { CredentialsDirectory(url: nil) }
}

extension SharedEnvironment {
  /// The folder `.credential(_:)` keys read: `$CREDENTIALS_DIRECTORY` live (`nil` when it is
  /// not set), `nil` in `SharedEnvironment.test(fileSystem:defaults:clock:reportIssue:)`, so
  /// that every credential is absent until a test points this at a folder of its own.
  public var credentialsDirectory: URL? {
    get { self[CredentialsDirectoryKey.self].url }
    set { self[CredentialsDirectoryKey.self] = CredentialsDirectory(url: newValue) }
  }
}
