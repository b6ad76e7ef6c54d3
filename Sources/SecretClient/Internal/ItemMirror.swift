// What one connection knows of the provider's items without asking: the attributes of items it
// has read, written or been told of, and, per collection, the addresses that name one item only.
// The provider's signals keep it current: they reach the connection's filter on GDBus's reading
// thread in the order the provider sent them, before any later answer reaches its caller, so
// nothing the mirror says is older than the last answer the caller holds. An answer learnt from
// a call is kept only when no signal about the same item came while the call was out.
import SecretAddress
import Synchronization

/// A change the provider signalled, as the mirror reads it.
enum ItemEvent: Sendable, Equatable {
  /// `ItemCreated`: a new item, or (gnome-keyring) one replaced; its attributes are unknown.
  case created(String)
  /// `ItemChanged`: the item's attributes may have changed.
  case changed(String)
  /// `ItemDeleted`.
  case deleted(String)
  /// `PropertiesChanged` of an item with its `Attributes`: what it has now.
  case attributes(String, [String: String])
  /// A collection went: anything may have.
  case collectionDeleted
  /// `NameOwnerChanged` of the bus name `name`: `owner` (a unique name) no longer owns it.
  case ownerLeft(name: String, owner: String)

  /// The item the event is about, if one.
  var path: String? {
    switch self {
    case .created(let path), .changed(let path), .deleted(let path), .attributes(let path, _): path
    case .collectionDeleted, .ownerLeft: nil
    }
  }
}

/// What a connection knows of items' attributes without a round trip; see the file's comment.
final class ItemMirror: Sendable {
  /// A point in the stream of signals, taken before a call whose answer the mirror may learn.
  struct Mark {
    fileprivate let sequence: Int
  }

  /// Items (and addresses) kept at most: past it the mirror starts again empty.
  static let capacity = 4_096
  /// Signals remembered to judge answers by: an answer that took longer is not kept.
  static let remembered = 256

  private let state = Mutex(MirrorState())

  /// Believes the signals of `provider`, the unique name that owns `busName`, from now on.
  func activate(provider: String, busName: String) {
    state.withLock { $0 = MirrorState(provider: provider, busName: busName) }
  }

  var isActive: Bool { state.withLock { $0.provider != nil } }

  /// Takes in a signal from `sender`; signals of anyone but the provider change nothing, and
  /// the provider leaving its name (as the bus says) stops the mirror.
  func receive(_ event: ItemEvent, from sender: String?) {
    state.withLock { state in
      guard let provider = state.provider else { return }
      if case .ownerLeft(let name, let owner) = event {
        if sender == "org.freedesktop.DBus", name == state.busName, owner == provider { state = MirrorState() }
        return
      }
      guard sender == provider else { return }
      state.record(event)
    }
  }

  func mark() -> Mark { state.withLock { Mark(sequence: $0.sequence) } }

  /// The attributes known now of those of `paths` the mirror holds.
  func attributes(of paths: [String]) -> [String: [String: String]] {
    state.withLock { state in
      var known: [String: [String: String]] = [:]
      for path in paths { known[path] = state.attributes[path] }
      return known
    }
  }

  /// Keeps attributes read from the provider since `mark`, unless a signal about the item came
  /// meanwhile (the answer may be older than the change it announced).
  func learn(_ read: [String: [String: String]], since mark: Mark) {
    state.withLock { state in
      guard let events = state.events(since: mark) else { return }
      for (path, attributes) in read where !events.contains(where: { $0.event.path == path }) {
        state.know(attributes, of: path)
      }
    }
  }

  /// Keeps the attributes this connection wrote to the item at `path`, as it holds them after a
  /// write begun at `mark`. A creation or change signalled meanwhile is taken for the write's
  /// own; one still to come is expected and changes nothing. A newer value signalled, or a
  /// deletion, leaves the item unknown.
  func learnWritten(_ attributes: [String: String], of path: String, since mark: Mark) {
    state.withLock { state in
      guard let events = state.events(since: mark) else { return }
      let about = events.map(\.event).filter { $0.path == path }
      let superseded = about.contains { if case .attributes = $0 { true } else { $0 == .deleted(path) } }
      guard !superseded else { return }
      state.know(attributes, of: path)
      if about.isEmpty { state.expected.insert(path) }
    }
  }

  /// Whether `path` is known to be the only item of its collection that `address` (attributes
  /// that name, `AddressRule.address(of:)`) names: a search found no other, and since then no
  /// other was signalled with attributes it names, nor created or changed with attributes still
  /// unknown (`unknownItems(besides:named:)`).
  func isSole(_ path: String, named address: [String: String]) -> Bool {
    state.withLock { state in
      let collection = SecretClient.collectionPath(ofItem: path)
      return state.sole[collection]?[address] == path && !state.hasUnknown(in: collection, besides: path)
    }
  }

  /// What keeps `isSole(path, named: address)` false when a search found no other item named
  /// alike: the items of its collection signalled as created or changed whose attributes are not
  /// known yet. Empty when no search found that.
  func unknownItems(besides path: String, named address: [String: String]) -> [String] {
    state.withLock { state in
      let collection = SecretClient.collectionPath(ofItem: path)
      guard state.sole[collection]?[address] == path else { return [] }
      return state.unknown.filter { $0 != path && SecretClient.collectionPath(ofItem: $0) == collection }
    }
  }

  /// Records that `path` is the only item of its collection `address` names, as a search begun
  /// at `mark` found, unless a signal since then named another by it.
  func recordSole(_ path: String, named address: [String: String], since mark: Mark) {
    state.withLock { state in
      let collection = SecretClient.collectionPath(ofItem: path)
      guard let events = state.events(since: mark),
        !events.contains(where: { $0.namesAnother(than: path, by: address, in: collection) })
      else { return }
      if state.sole.values.reduce(0, { $0 + $1.count }) >= Self.capacity { state.sole = [:] }
      state.sole[collection, default: [:]][address] = path
    }
  }
}

/// An event as the mirror remembers it.
private struct Signalled {
  let sequence: Int
  let event: ItemEvent

  /// Whether it told that an item of `collection` other than `path` is named by `address`, or
  /// may be for all the mirror can tell (a collection deleted). An item created or changed
  /// with attributes unknown is left to `MirrorState.unknown`.
  func namesAnother(than path: String, by address: [String: String], in collection: String) -> Bool {
    switch event {
    case .attributes(let item, let attributes):
      item != path && SecretClient.collectionPath(ofItem: item) == collection
        && AddressRule.isNamed(attributes, by: address)
    case .created, .changed, .deleted: false
    case .collectionDeleted, .ownerLeft: true
    }
  }
}

private struct MirrorState {
  /// The unique name whose signals are believed; nil while the mirror is off.
  var provider: String?
  /// The name it owns, whose owner leaving stops the mirror.
  var busName = ""
  var sequence = 0
  var recent: [Signalled] = []
  var attributes: [String: [String: String]] = [:]
  /// Items this connection wrote whose signal has not come yet.
  var expected: Set<String> = []
  /// Items signalled as created or changed whose attributes have not come yet.
  var unknown: Set<String> = []
  /// By collection: the addresses known to name one item only, and that item.
  var sole: [String: [[String: String]: String]] = [:]

  /// The events since `mark`; nil when some of them are no longer remembered.
  func events(since mark: ItemMirror.Mark) -> [Signalled]? {
    guard provider != nil else { return nil }
    if sequence == mark.sequence { return [] }
    guard let first = recent.first, first.sequence <= mark.sequence + 1 else { return nil }
    return recent.filter { $0.sequence > mark.sequence }
  }

  func hasUnknown(in collection: String, besides path: String) -> Bool {
    unknown.contains { $0 != path && SecretClient.collectionPath(ofItem: $0) == collection }
  }

  /// The item at `path` has `attributes` now: any other item of its collection that an address
  /// was known to name alone now has a second one named alike.
  mutating func know(_ attributes: [String: String], of path: String) {
    if self.attributes.count >= ItemMirror.capacity { self.attributes = [:] }
    self.attributes[path] = attributes
    unknown.remove(path)
    let collection = SecretClient.collectionPath(ofItem: path)
    let address = AddressRule.address(of: attributes)
    if let named = sole[collection]?[address], named != path { sole[collection]?[address] = nil }
  }

  mutating func record(_ event: ItemEvent) {
    sequence += 1
    if recent.count >= ItemMirror.remembered { recent.removeFirst(recent.count / 2) }
    recent.append(Signalled(sequence: sequence, event: event))
    // A signal of this connection's own write: what it wrote is what the item holds.
    guard !isOwn(event) else { return }
    switch event {
    case .created(let path), .changed(let path):
      attributes[path] = nil
      if unknown.count >= ItemMirror.capacity { (unknown, sole) = ([], [:]) }
      unknown.insert(path)
    case .deleted(let path):
      attributes[path] = nil
      unknown.remove(path)
      expected.remove(path)
    case .attributes(let path, let new):
      know(new, of: path)
    case .collectionDeleted, .ownerLeft:
      self = MirrorState(provider: provider, busName: busName)
    }
  }

  /// Whether `event` announces a write of this connection that the mirror expected; the
  /// expectation is spent.
  private mutating func isOwn(_ event: ItemEvent) -> Bool {
    switch event {
    case .created(let path), .changed(let path): expected.remove(path) != nil
    default: false
    }
  }
}
