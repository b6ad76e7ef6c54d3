import Foundation
import SystemCalls

/// One credential's file in a credentials folder: read into a buffer that is wiped once the
/// value is decoded, so no stray copy of the secret outlives the read.
struct CredentialFile {
  let name: String
  let path: String

  init(name: String, folder: String) throws(CredentialKeyError) {
    guard Self.isValidName(name) else { throw .invalidName(name) }
    self.name = name
    path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
  }

  /// systemd's rule for credential names (a file name that is also a valid fd name): 1 to 255
  /// printable ASCII characters, no `/` or `:`, neither `.` nor `..`.
  static func isValidName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    return (1...255).contains(bytes.count) && name != "." && name != ".."
      && bytes.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }
  }

  /// The file's value; nil when the file or its folder does not exist, or the file is empty: a
  /// credential source with nothing to give (secretd, for a credential it does not hold) closes
  /// the connection at once, and systemd then writes an empty file rather than fail the start.
  func decode<Value: Decodable>(_ type: Value.Type) throws(CredentialKeyError) -> Value? {
    let file: FileDescriptor
    do {
      // Non-blocking, so that a pipe in the file's place is refused, not waited on.
      file = try FileDescriptor.open(path, .readOnly, options: .nonBlocking)
    } catch .noSuchFile {
      return nil
    } catch {
      throw unreadable("open", error)
    }
    defer { file.close() }
    guard Files.isRegularFile(path) else {
      throw .unreadable(
        name: name, path: path, reason: "it is not a regular file. Put the credential's bytes in a file there.")
    }
    var bytes = try readAll(file)
    defer { bytes.withUnsafeMutableBytes { Memory.wipe($0) } }
    if bytes.isEmpty { return nil }
    // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
    return try bytes.withUnsafeBytes { bytes in
      Result { () throws(CredentialKeyError) in try decode(Value.self, from: bytes) }
    }.get()
  }

  private func readAll(_ file: FileDescriptor) throws(CredentialKeyError) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 4096)
    var count = 0
    while true {
      if count == buffer.count {
        var larger = [UInt8](repeating: 0, count: buffer.count * 2)
        buffer.withUnsafeBytes { old in larger.withUnsafeMutableBytes { $0.copyMemory(from: old) } }
        buffer.withUnsafeMutableBytes { Memory.wipe($0) }
        buffer = larger
      }
      let read = buffer.withUnsafeMutableBytes { buffer in
        Result { () throws(Errno) in try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) }
      }
      switch read {
      case .success(0):
        buffer.removeLast(buffer.count - count)
        return buffer
      case .success(let more): count += more
      case .failure(let error):
        buffer.withUnsafeMutableBytes { Memory.wipe($0) }
        throw unreadable("read", error)
      }
    }
  }

  private func decode<Value: Decodable>(
    _ type: Value.Type, from bytes: UnsafeRawBufferPointer
  ) throws(CredentialKeyError) -> Value {
    if let raw = Value.self as? any RawCredential.Type {
      // Unwrapped before the cast: nil cast to an optional Value would succeed, as .some(nil).
      guard let made = raw.init(credentialBytes: bytes), let value = made as? Value else {
        throw .undecodable(
          name: name, path: path, reason: "not UTF-8 text (declare the value as Data to read any bytes)")
      }
      return value
    }
    var json = Data(bytes)
    defer { json.withUnsafeMutableBytes { Memory.wipe($0) } }
    do {
      return try JSONDecoder().decode(Value.self, from: json)
    } catch {
      throw .undecodable(name: name, path: path, reason: "not JSON of \(Value.self): \(SecretJSON.reason(error))")
    }
  }

  private func unreadable(_ call: String, _ error: Errno) -> CredentialKeyError {
    let advice =
      switch error {
      case .permissionDenied, .notPermitted:
        "The service's user must be able to read it: systemd makes a unit's own credentials so; for a folder of "
          + "your own, check the file's and the folder's owner and mode."
      case .notDirectory: "The credentials folder ($CREDENTIALS_DIRECTORY) is not a folder."
      case .symbolicLinkLoop: "A symbolic link on the path loops."
      default: "Check that the file is a readable regular file."
      }
    return .unreadable(name: name, path: path, reason: "\(call) failed: \(error) (errno \(error.code)). \(advice)")
  }
}

/// The types a credential gives as its bytes rather than as JSON.
protocol RawCredential {
  /// The value of `bytes`, or nil when they are not one (a `String` that is not UTF-8).
  init?(credentialBytes bytes: UnsafeRawBufferPointer)
}

extension String: RawCredential {
  init?(credentialBytes bytes: UnsafeRawBufferPointer) { self.init(validating: bytes, as: UTF8.self) }
}

extension Data: RawCredential {
  init?(credentialBytes bytes: UnsafeRawBufferPointer) { self.init(bytes) }
}

extension Array: RawCredential where Element == UInt8 {
  init?(credentialBytes bytes: UnsafeRawBufferPointer) { self.init(bytes) }
}

extension Optional: RawCredential where Wrapped: RawCredential {
  init?(credentialBytes bytes: UnsafeRawBufferPointer) {
    guard let value = Wrapped(credentialBytes: bytes) else { return nil }
    self = .some(value)
  }
}
