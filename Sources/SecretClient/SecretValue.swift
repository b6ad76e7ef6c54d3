/// A secret as the Secret Service keeps it: bytes and the MIME type that says how to read them.
///
/// ```swift
/// let token = SecretValue("s3cr3t")                       // text/plain
/// let blob = SecretValue(bytes: [0, 1, 2], contentType: "application/octet-stream")
/// ```
public struct SecretValue: Sendable, Hashable {
  /// The secret itself.
  public var bytes: [UInt8]
  /// The MIME type of the bytes, such as `text/plain`.
  public var contentType: String

  /// A secret of any bytes.
  ///
  /// - Parameters:
  ///   - bytes: The secret.
  ///   - contentType: Their MIME type; `application/octet-stream` unless given.
  public init(bytes: [UInt8], contentType: String = "application/octet-stream") {
    self.bytes = bytes
    self.contentType = contentType
  }

  /// A UTF-8 text secret, stored with content type `text/plain`.
  public init(_ text: String) {
    self.init(bytes: Array(text.utf8), contentType: "text/plain")
  }

  /// The bytes as UTF-8 text, or `nil` when they are not valid UTF-8.
  public var text: String? {
    String(validating: bytes, as: UTF8.self)
  }

  /// Whether the bytes are valid UTF-8, found without making a copy of them.
  public var isText: Bool {
    var iterator = bytes.makeIterator()
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

extension SecretValue: CustomStringConvertible {
  /// Never the bytes themselves, so a value that reaches a log or an error reveals nothing.
  public var description: String { "SecretValue(\(bytes.count) bytes, \(contentType))" }
}
