import CLibSecret
import GLibBridge

extension ServiceHandle {
  /// Subscribes to `ItemCreated`, `ItemChanged` and `ItemDeleted` of the collection at `path`.
  ///
  /// The subscription is made on the signal thread, so `onChange` runs there. It is active when
  /// this returns. Wraps `g_dbus_connection_signal_subscribe`.
  func subscribeToItemChanges(
    collectionPath path: String,
    _ onChange: @escaping @Sendable (ItemChange) -> Void
  ) -> SignalSubscription {
    // Raw pointers are not Sendable; addresses cross to the signal thread as integers.
    let sink = UInt(bitPattern: Unmanaged.passRetained(ChangeSink(onChange)).toOpaque())
    let connectionAddress = UInt(bitPattern: connection)
    let busName = busName
    let id = SignalThread.shared.perform {
      g_dbus_connection_signal_subscribe(
        OpaquePointer(bitPattern: connectionAddress), busName, "org.freedesktop.Secret.Collection", nil, path,
        nil, G_DBUS_SIGNAL_FLAGS_NONE,
        { _, _, _, _, signal, parameters, data in
          guard let data, let signal, let parameters else { return }
          Unmanaged<ChangeSink>.fromOpaque(data).takeUnretainedValue()
            .receive(signal: String(cString: signal), parameters: Variant(borrowing: parameters))
        },
        UnsafeMutableRawPointer(bitPattern: sink),
        { data in if let data { Unmanaged<ChangeSink>.fromOpaque(data).release() } })
    }
    return SignalSubscription(handle: self, id: id)
  }
}

extension ServiceHandle {
  /// Subscribes to the service's `CollectionChanged` for the collection at `path` (its label or
  /// lock state changed). Runs `onChange` on the signal thread.
  func subscribeToCollectionChanges(
    collectionPath path: String, _ onChange: @escaping @Sendable () -> Void
  ) -> SignalSubscription {
    let sink = UInt(
      bitPattern: Unmanaged.passRetained(CollectionSink(collectionPath: path, onChange: onChange)).toOpaque())
    let connectionAddress = UInt(bitPattern: connection)
    let busName = busName
    let id = SignalThread.shared.perform {
      g_dbus_connection_signal_subscribe(
        OpaquePointer(bitPattern: connectionAddress), busName, "org.freedesktop.Secret.Service", "CollectionChanged",
        "/org/freedesktop/secrets", nil, G_DBUS_SIGNAL_FLAGS_NONE,
        { _, _, _, _, _, parameters, data in
          guard let data, let parameters else { return }
          Unmanaged<CollectionSink>.fromOpaque(data).takeUnretainedValue().receive(Variant(borrowing: parameters))
        },
        UnsafeMutableRawPointer(bitPattern: sink),
        { data in if let data { Unmanaged<CollectionSink>.fromOpaque(data).release() } })
    }
    return SignalSubscription(handle: self, id: id)
  }
}

/// Receives `CollectionChanged` on the signal thread and passes on those for one collection.
private final class CollectionSink: Sendable {
  let collectionPath: String
  let onChange: @Sendable () -> Void

  init(collectionPath: String, onChange: @escaping @Sendable () -> Void) {
    self.collectionPath = collectionPath
    self.onChange = onChange
  }

  func receive(_ parameters: Variant) {
    guard parameters.isOfType("(o)"), parameters.child(0)?.string == collectionPath else { return }
    onChange()
  }
}

/// An active signal subscription; it ends on `cancel()` or when released.
final class SignalSubscription: Sendable {
  private let handle: ServiceHandle
  private let id: guint

  init(handle: ServiceHandle, id: guint) {
    self.handle = handle
    self.id = id
  }

  deinit {
    g_dbus_connection_signal_unsubscribe(handle.connection, id)
  }
}

/// Receives the raw signal on the signal thread and hands over a typed change.
private final class ChangeSink: Sendable {
  let onChange: @Sendable (ItemChange) -> Void

  init(_ onChange: @escaping @Sendable (ItemChange) -> Void) { self.onChange = onChange }

  func receive(signal: String, parameters: Variant) {
    let kinds: [String: ItemChange.Kind] = ["ItemCreated": .created, "ItemChanged": .changed, "ItemDeleted": .deleted]
    guard let kind = kinds[signal], parameters.isOfType("(o)"), let path = parameters.child(0)?.string else { return }
    onChange(ItemChange(kind: kind, itemPath: path))
  }
}
