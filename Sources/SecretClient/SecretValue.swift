@_exported import SecretMemory

/// A secret as the Secret Service keeps it: bytes and the MIME type that says how to read them.
///
/// The bytes are a `SecretBytes`: in locked memory, wiped when the last copy of the value is
/// released, compared in constant time, never printed. `Array(value.bytes)` and ``text`` are
/// copies in ordinary memory, made only when you ask for them.
///
/// ```swift
/// let token = SecretValue("s3cr3t")                       // text/plain
/// let blob = SecretValue(bytes: [0, 1, 2], contentType: "application/octet-stream")
/// ```
public struct SecretValue: Sendable, Equatable {
  /// The secret itself.
  public let bytes: SecretBytes
  /// The MIME type of the bytes, such as `text/plain`.
  public var contentType: String

  /// A secret of bytes already in secret memory.
  public init(bytes: SecretBytes, contentType: String = "application/octet-stream") {
    self.bytes = bytes
    self.contentType = contentType
  }

  /// A secret of any bytes, copied into secret memory (the caller's copy stays theirs to wipe).
  ///
  /// - Parameters:
  ///   - bytes: The secret.
  ///   - contentType: Their MIME type; `application/octet-stream` unless given.
  public init(bytes: some Collection<UInt8>, contentType: String = "application/octet-stream") {
    self.init(bytes: SecretBytes(copying: bytes), contentType: contentType)
  }

  /// A UTF-8 text secret, stored with content type `text/plain`.
  public init(_ text: String) {
    self.init(bytes: SecretBytes(text), contentType: "text/plain")
  }

  /// A copy of the bytes as UTF-8 text, or `nil` when they are not valid UTF-8.
  public var text: String? {
    bytes.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
  }

  /// Whether the bytes are valid UTF-8, found without making a copy of them.
  public var isText: Bool {
    bytes.withUnsafeBytes { raw in
      var iterator = raw.makeIterator()
      var decoder = UTF8()
      while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return true
        case .error: return false
        }
      }
    }
  }
}

extension SecretValue: CustomStringConvertible {
  /// Never the bytes themselves, so a value that reaches a log or an error reveals nothing.
  public var description: String { "SecretValue(\(bytes.count) bytes, \(contentType))" }
}
