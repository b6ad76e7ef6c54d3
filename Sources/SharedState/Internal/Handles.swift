// What `Shared` and `SharedReader` do alike, written once.

/// A handle as swift-sharing writes it: `Shared<Int>(value: 0)`, `SharedReader<Int>(.inMemory("count"))`.
func describeHandle(_ handleType: Any.Type, _ box: any ReaderBox) -> String {
  "\(displayName(of: handleType))(\(box.description))"
}

/// Whether two handles' values are equal. Inside a ``SharedChangeTracker``'s `assert` scope,
/// two handles on the same place compare the left one's snapshot with the real value, and the
/// change counts as asserted.
func handlesAreEqual<Value: Equatable>(_ lhs: any ReaderBox<Value>, _ rhs: any ReaderBox<Value>) -> Bool {
  if ChangeTracking.mayBeActive, let tracker = ChangeTracking.asserting, lhs.identity == rhs.identity {
    let identity = lhs.identity
    tracker.changes.markAsserted(identity.root)
    let real = ChangeTracking.$asserting.withValue(nil) { rhs.value }
    return lhs.value == real
  }
  return lhs.value == rhs.value
}

/// Tells the observers of a handle's value that the handle now shows another one (it was
/// assigned, or loaded from another key).
func tellObservers(of previous: any ReaderBox) {
  (previous.identity.root as? any ObservedReference)?.valueReplaced()
}

/// A reference whose observers can be told that its handles moved away.
protocol ObservedReference: AnyObject {
  func valueReplaced()
}

extension SharedReference: ObservedReference {
  func valueReplaced() { cell.change(.value) { _ in } }
}
