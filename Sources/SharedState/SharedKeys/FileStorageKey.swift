public import Foundation
import SystemCalls

extension SharedReaderKey {
  /// A `Codable` value stored as JSON in a file.
  ///
  /// The file is read when the first handle is created; nothing is written before the first
  /// mutation. The first mutation is written at once (on a background thread) and opens a write
  /// window (`writeWindow`, 1 s by default); the mutations made within it are written once, as
  /// the latest value, when it closes. `try await $x.save()` writes before returning. Writes are atomic (temporary file in the same folder, `fsync`,
  /// `rename`, permissions kept). Pending writes are flushed at exit and on SIGTERM/SIGINT
  /// (see ``PendingWrites``). Changes made by other processes reach the value, except while a
  /// local change waits for its write: that one wins. An empty file counts as no file; an
  /// optional's `nil` is written as `null`.
  ///
  /// A file that exists but cannot be decoded is never overwritten silently: `loadError`
  /// names the file and the reason, and before the first write over it its bytes are kept
  /// beside it as `NAME.corrupt-TIMESTAMP`.
  ///
  /// ```swift
  /// extension SharedKey where Self == FileStorageKey<[Note]>.Default {
  ///   static var notes: Self {
  ///     Self[.fileStorage(URL(filePath: "/home/me/.local/share/tool/notes.json")), default: []]
  ///   }
  /// }
  /// @Shared(.notes) var notes
  /// ```
  ///
  /// - Parameters:
  ///   - url: The file.
  ///   - decoder: Decodes the file (a plain `JSONDecoder` when nil).
  ///   - encoder: Encodes the value (a plain `JSONEncoder` when nil).
  ///   - writeWindow: How long the mutations after a write are gathered before the next.
  public static func fileStorage<Value: Codable & Sendable>(
    _ url: URL, decoder: JSONDecoder? = nil, encoder: JSONEncoder? = nil, writeWindow: Duration = .seconds(1)
  ) -> Self where Self == FileStorageKey<Value> {
    // Coders are classes that are not Sendable: each key keeps copies of their settings.
    let decoding = DecoderSettings(decoder ?? JSONDecoder())
    let encoding = EncoderSettings(encoder ?? JSONEncoder())
    return FileStorageKey(
      url: url, writeWindow: writeWindow,
      decode: { try decoding.make().decode(Value.self, from: $0) },
      encode: { try encoding.make().encode($0) })
  }

  /// A value stored in a file with custom coding.
  ///
  /// - Parameters:
  ///   - url: The file.
  ///   - writeWindow: How long the mutations after a write are gathered before the next.
  ///   - decode: Turns the file's bytes into a value.
  ///   - encode: Turns a value into the file's bytes.
  public static func fileStorage<Value: Sendable>(
    _ url: URL,
    writeWindow: Duration = .seconds(1),
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) -> Self where Self == FileStorageKey<Value> {
    FileStorageKey(url: url, writeWindow: writeWindow, decode: decode, encode: encode)
  }
}

/// The key behind ``SharedReaderKey/fileStorage(_:decoder:encoder:writeWindow:)``: a
/// ``PersistentValue`` over one file.
///
/// Its identity is the file's path and the ``FileStorage`` it lives in, not the coders or the
/// window.
///
/// - Loading reads the file: the declared default when it is missing or empty,
///   ``FileStorageError/decodingFailed(path:reason:)`` when it does not decode (the file is
///   kept). The first load reads where the first handle is declared; `load()` reads off the
///   cooperative pool.
/// - Subscribing watches the file's folder, so edits, replacements and deletions made elsewhere
///   reach the value; the key's own writes do not come back as changes.
/// - Saving writes the first mutation at once and batches the ones that follow into one write
///   per window; ``SaveContext/userInitiated`` saves are written before resuming. Undecodable
///   contents are first kept as `NAME.corrupt-TIMESTAMP`.
public struct FileStorageKey<Value: Sendable>: PersistentKey, CustomStringConvertible {
  let core: PersistentValue<FileStore, Value>

  init(
    url: URL, writeWindow: Duration,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    let store = FileStore(path: url.standardizedFileURL.path, storage: SharedEnvironment.current.fileStorage)
    core = PersistentValue(
      store: store, window: writeWindow,
      decode: { bytes in
        do { return try decode(bytes) } catch {
          throw FileStorageError.decodingFailed(path: store.path, reason: "\(error)")
        }
      },
      encode: { value in
        do { return try encode(value) } catch {
          throw FileStorageError.encodingFailed(path: store.path, reason: "\(error)")
        }
      })
  }

  /// The core that keeps the value.
  public var persistence: PersistentValue<some PersistentStore, Value> { core }

  /// The file's path and its file system.
  public struct ID: Hashable, Sendable {
    let path: String
    let storage: ObjectIdentifier
  }

  /// The file's standardized path and its file system: keys of the same value type with equal
  /// ids share one value.
  public var id: ID { ID(path: core.store.path, storage: ObjectIdentifier(core.store.storage.identity)) }

  /// `.fileStorage(file:///PATH)`, as swift-sharing writes it.
  public var description: String { ".fileStorage(\(String(reflecting: URL(filePath: core.store.path))))" }
}

/// One file as a ``PersistentStore``: an empty file counts as no file; undecodable contents
/// are kept as `NAME.corrupt-STAMP`; the folder is watched, so replacements are seen too.
struct FileStore: PersistentStore {
  let path: String
  let storage: FileStorage

  var description: String { path }

  private var url: URL { URL(filePath: path) }

  func read() throws -> Data? {
    guard let bytes = try storage.read(url), !bytes.isEmpty else { return nil }
    return bytes
  }

  func write(_ bytes: Data) throws { try storage.write(bytes, url) }

  var isInMemory: Bool { storage.identity is InMemoryFileSystem }

  func delete() throws { try storage.delete(url) }

  func keepCopy(of bytes: Data, stamp: String) throws {
    let base = "\(path).corrupt-\(stamp)"
    var candidate = base
    var suffix = 1
    while try storage.read(URL(filePath: candidate)) != nil {
      suffix += 1
      candidate = "\(base)-\(suffix)"
    }
    try storage.write(bytes, URL(filePath: candidate))
  }

  /// The folder is made if it is missing (the first write would make it anyway), so that a
  /// program that only reads sees the file another one creates; nothing else is written.
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    if storage.identity === FileStorage.fileSystem.identity {
      do throws(FileCallError) { try Files.makeDirectories(Files.split(path).directory) } catch { return nil }
    }
    return try storage.watch(url, onChange)
  }
}

/// A `JSONDecoder`'s settings, to make decoders from on any thread.
struct DecoderSettings: @unchecked Sendable {
  // SAFETY: the decoder given to the key is copied here once and never mutated or shared:
  // `make()` copies its settings into a fresh decoder for each use.
  private let template: JSONDecoder
  init(_ decoder: JSONDecoder) { template = decoder }
  func make() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = template.dateDecodingStrategy
    decoder.dataDecodingStrategy = template.dataDecodingStrategy
    decoder.keyDecodingStrategy = template.keyDecodingStrategy
    decoder.nonConformingFloatDecodingStrategy = template.nonConformingFloatDecodingStrategy
    decoder.userInfo = template.userInfo
    return decoder
  }
}

/// A `JSONEncoder`'s settings, to make encoders from on any thread.
struct EncoderSettings: @unchecked Sendable {
  // SAFETY: as for DecoderSettings.
  private let template: JSONEncoder
  init(_ encoder: JSONEncoder) { template = encoder }
  func make() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = template.outputFormatting
    encoder.dateEncodingStrategy = template.dateEncodingStrategy
    encoder.dataEncodingStrategy = template.dataEncodingStrategy
    encoder.keyEncodingStrategy = template.keyEncodingStrategy
    encoder.nonConformingFloatEncodingStrategy = template.nonConformingFloatEncodingStrategy
    encoder.userInfo = template.userInfo
    return encoder
  }
}
