// The D-Bus error layer: spec names clients match on, and the one place area errors become them.
import TransferCrypto

/// A D-Bus error reply, by the name clients match on.
struct DBusError: Error, Equatable {
  let name: String
  let message: String
}

/// An error a client is told as a D-Bus error. Handlers throw their areas' errors as they come;
/// the declarations turn them into replies here (``DBusError/reporting(_:)``).
protocol BusReportable: Error {
  var busError: DBusError { get }
}

extension DBusError: BusReportable {
  var busError: DBusError { self }

  /// What `body` returns, or what it throws as a D-Bus error.
  static func reporting<Value>(_ body: () throws -> Value) throws(DBusError) -> Value {
    do {
      return try body()
    } catch let error as any BusReportable {
      throw error.busError
    } catch {
      // Every area's error says what the client is told; one that does not is a mistake here,
      // and its text is for the log, not for a client.
      Log.error("a call failed with \(type(of: error)), which has no D-Bus reply: \(error)")
      assertionFailure("\(type(of: error)) is not BusReportable")
      throw .failed("secretd failed to answer this call; its log says why")
    }
  }
}

extension StoreError: BusReportable {
  var busError: DBusError { DBusError(self) }
}

extension UnlockError: BusReportable {
  var busError: DBusError { DBusError(self) }
}

extension CryptoError: BusReportable {
  var busError: DBusError { DBusError(self) }
}

extension SessionError: BusReportable {
  var busError: DBusError { DBusError(self) }
}

extension DBusError {
  static func isLocked(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.Secret.Error.IsLocked", message: message)
  }
  static func noSuchObject(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: message)
  }
  /// No session at `path` that the caller opened.
  static func noSession(path: String) -> DBusError {
    DBusError(name: "org.freedesktop.Secret.Error.NoSession", message: "no open session \(path) for this connection")
  }
  static func notSupported(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
  }
  static func invalidArgs(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
  }
  static func limitsExceeded(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: message)
  }
  static func noMemory(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.NoMemory", message: message)
  }
  static func accessDenied(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
  }
  /// A call to a path where no object is: answered as GDBus (and so gnome-keyring) answers it,
  /// which is what clients such as python secretstorage 3.3 map to "no such item".
  static func noObject(_ path: String) -> DBusError {
    unknownMethod(message: "Object does not exist at path “\(path)”")
  }
  /// A call to an interface the object does not have, as GDBus answers it.
  static func unknownInterface(_ interface: String, _ path: String) -> DBusError {
    unknownMethod(message: "No such interface “\(interface)” on object at path \(path)")
  }
  static func failed(_ message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.Failed", message: message)
  }
  static func unknownMethod(_ interface: String, _ method: String, _ path: String) -> DBusError {
    unknownMethod(message: "no method \(interface).\(method) on \(path)")
  }
  static func unknownMethod(message: String) -> DBusError {
    DBusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
  }
  static func unknownProperty(_ interface: String, _ name: String, _ path: String) -> DBusError {
    DBusError(
      name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(name) on \(path)")
  }

  /// Converts a store refusal, naming the object path.
  init(_ error: StoreError) {
    switch error {
    case .noSuchCollection(let name):
      self = .noSuchObject("no collection \(ObjectPaths.collection(name))")
    case .noSuchItem(let reference):
      self = .noSuchObject("no item \(ObjectPaths.item(reference))")
    case .locked(let collection):
      self = .isLocked("collection \(ObjectPaths.collection(collection)) is locked; call Unlock first")
    case .limitExceeded(let limit, let actual, let maximum):
      self = .limitsExceeded(
        "\(limit.what) would be \(actual), over the limit of \(maximum) (secretd \(limit.flag))")
    case .invalidExpiry(let attribute, let value):
      self = .invalidArgs("attribute \(attribute) must be unix seconds, not '\(value)'")
    case .invalidName(let name):
      self = .invalidArgs("'\(name)' is not a valid alias name (letters, digits, underscore)")
    case .noRoom(let needed, let largest):
      self = .limitsExceeded(
        "secretd's store has no free block of \(needed) bytes (the largest is \(largest)); delete items, "
          + "or start secretd with a larger \(Limit.memory.flag)")
    case .secretNotDecoded(let error):
      self = DBusError(error)
    case .notPersisted(let collection, let reason):
      self = .failed(
        "secretd could not write the change to \(ObjectPaths.collection(collection)) on disk, so it made none: "
          + reason)
    case .needsPassphrase(let collection):
      self = .isLocked(
        "collection \(ObjectPaths.collection(collection)) is sealed on disk and opens only with its passphrase: "
          + "run `secretctl unlock` in a terminal")
    case .persistentCollection(let collection):
      self = .notSupported(
        "collection \(ObjectPaths.collection(collection)) is secretd's persistent collection: delete its items "
          + "instead")
    }
  }

  /// Converts a refused unlock of the persistent collection; nothing was changed.
  init(_ error: UnlockError) {
    let collection = ObjectPaths.collection(SealedCollection.name)
    switch error {
    case .wrongPassphrase:
      self = DBusError(
        name: "io.github.swiftsecrets.Secretd1.Error.WrongPassphrase",
        message: "wrong passphrase: \(collection) stays locked and nothing was changed (each failure makes the next "
          + "attempt wait longer)")
    case .emptyPassphrase:
      self = .invalidArgs("the first passphrase of \(collection) must not be empty")
    case .keyFile(let reason), .log(let reason):
      self = .failed("\(collection) was not unlocked: \(reason)")
    case .store(let error):
      self = DBusError(error)
    }
  }

  /// Converts a transfer-encryption failure.
  init(_ error: CryptoError) {
    switch error {
    case .outOfSecureMemory: self = .noMemory(error.message)
    case .library: self = .failed(error.message)
    default: self = .invalidArgs(error.message)
    }
  }

  init(_ error: SessionError) {
    switch error {
    case .unsupportedAlgorithm(let algorithm):
      self = .notSupported(
        "algorithm '\(algorithm)' is not supported; use plain or dh-ietf1024-sha256-aes128-cbc-pkcs7")
    case .invalidInput(let message): self = .invalidArgs(message)
    case .noSession(let number): self = .noSession(path: ObjectPaths.session(number))
    case .tooManySessions(let total, let owned):
      self = .limitsExceeded(
        "secretd keeps at most \(total) open sessions of all clients (\(Limit.allSessions.flag)), and this "
          + "connection already holds \(owned), as many as any other; close the sessions it no longer uses")
    case .crypto(let error): self = DBusError(error)
    }
  }
}
