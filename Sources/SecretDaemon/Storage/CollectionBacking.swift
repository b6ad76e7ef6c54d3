// Where a collection's items are kept besides the arena: the one seam between a collection and
// its backing. A memory-only collection has none; a persistent one (`login`) has a sealed log.

/// What keeps a collection's items beyond the arena, told of every change before the arena
/// commits it.
///
/// The store calls ``persist(item:payload:)`` and ``persistDeletion(item:)`` under its write
/// lock, before the change it records is committed in the arena; a throw refuses the change,
/// which then leaves the arena and the index as they were.
protocol CollectionBacking: AnyObject {
  /// Records item `number` as `payload` (its record as the arena holds it: metadata, then the
  /// secret), durably, before returning.
  func persist(item number: Int, payload: UnsafeRawBufferPointer) throws(StoreError)
  /// Records that item `number` is deleted, durably, before returning.
  func persistDeletion(item number: Int) throws(StoreError)
  /// Whether the items can be had without a secret from the user (a key in memory).
  var isOpen: Bool { get }
  /// The collection was locked and its items wiped from the arena: forget the key.
  func close()
}
