// Expiry: items that carry `xdg:expires` (or `expires-at`), or the default time to live, are
// deleted when their time comes. The time is absolute, so it keeps running across restarts.

extension Store {
  /// Removes every item whose time has come, with `itemDeleted` events.
  /// Returns the next pending expiry.
  @discardableResult
  func purgeExpired() -> UInt64? {
    let now = now
    while let next = expiries.peek, next.time <= now {
      expiries.pop()
      guard let collection = collections[next.reference.collection],
        let item = collection.items[next.reference.item], let expiresAt = item.expiresAt, expiresAt <= now
      else { continue }
      // An expired item is no longer served; one whose deletion cannot be recorded stays in
      // memory, unserved, and expires again from its backing when next loaded.
      do throws(StoreError) { try collection.backing?.persistDeletion(item: next.reference.item) } catch {
        Log.warning("expired item \(next.reference.item) of \(collection.name) not deleted on disk: \(error)")
        continue
      }
      removeItem(collection, next.reference.item)
    }
    return expiries.peek?.time
  }

  /// Queues `item`'s expiry when it changed from `previous`. An entry whose item was deleted or
  /// given another time stays in the queue until it comes up (it is skipped then); once stale
  /// entries could outnumber the items, the queue is rebuilt from the items, so it never grows
  /// with rewrites alone.
  func scheduleExpiry(of item: StoredItem, _ reference: ItemReference, previous: UInt64?) {
    guard let expiry = item.expiresAt, expiry != previous else { return }
    // Taken before a rebuild, which reads the item's new time from the item itself.
    let earliest = expiries.peek?.time
    if expiries.count > 2 * itemCount + 64 {
      rebuildExpiries()
    } else {
      expiries.push(time: expiry, reference: reference)
    }
    if earliest.map({ expiry < $0 }) ?? true { onNextExpiryChanged(expiry) }
  }

  private func rebuildExpiries() {
    var queue = ExpiryQueue()
    for (name, collection) in collections {
      for (number, item) in collection.items {
        if let time = item.expiresAt {
          queue.push(time: time, reference: ItemReference(collection: name, item: number))
        }
      }
    }
    expiries = queue
  }

  /// The expiry an item with `attributes` gets now.
  func expiry(for attributes: [String: String]) throws(StoreError) -> UInt64? {
    for name in Self.expiryAttributes {
      if let value = attributes[name] {
        guard let seconds = UInt64(value) else { throw .invalidExpiry(attribute: name, value: value) }
        return seconds
      }
    }
    return defaultTTL.map { now + $0 }
  }
}
