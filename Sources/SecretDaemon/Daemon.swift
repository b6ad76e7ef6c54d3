// The daemon: owns the store and the sessions, takes every call off the bus, answers the calls
// of its own user on worker threads in turn, and announces the store's changes.
import GLibBridge
import SecretMemory
import Synchronization
package import SystemCalls
import TransferCrypto

/// How the daemon behaves; set from the command line.
package struct Configuration: Sendable {
  package var limits: Limits
  /// Seconds an item lives when it names no expiry attribute; nil keeps items until deleted.
  package var defaultTTL: UInt64?
  /// The only Unix user whose clients are served.
  package var servedUser: UserID
  /// Threads that answer calls (a client's calls run one at a time, clients in turn).
  package var workerThreads: Int
  /// Keep secrets even where memory cannot be locked (they may then be swapped to disk).
  package var allowUnlockedMemory: Bool
  /// Where the persistent collection `login` is sealed (`--persistent`); nil keeps everything
  /// in memory only.
  package var persistentFolder: String?
  /// The TPM of the persistent collection's TPM unlocker, as a tpm2-tss TCTI configuration
  /// (`--tcti`); nil: tpm2-tss's default (/dev/tpmrm0 first).
  package var tcti: String?

  package init(
    limits: Limits = Limits(), defaultTTL: UInt64? = nil, servedUser: UserID = .current, workerThreads: Int = 4,
    allowUnlockedMemory: Bool = false, persistentFolder: String? = nil, tcti: String? = nil
  ) {
    self.limits = limits
    self.defaultTTL = defaultTTL
    self.servedUser = servedUser
    self.workerThreads = workerThreads
    self.allowUnlockedMemory = allowUnlockedMemory
    self.persistentFolder = persistentFolder
    self.tcti = tcti
  }
}

/// A Secret Service provider serving one bus connection, keeping everything in memory. It
/// serves until the process exits.
///
/// Threads: GDBus's worker thread reads the bus and only queues calls (``ClientScheduler``);
/// `workerThreads` threads answer them; the main context runs the expiry timer and the bus
/// driver's signals (clients leaving, the name lost, the bus closing).
package final class Daemon: @unchecked Sendable {
  // SAFETY: `store` and `keeper` are only used inside `storeLock` (reading or writing, see
  // `execute`), the expiry timer included; `sessions`, `signals` and `scheduler` lock themselves; the rest is
  // set in init and `start()`, before any call is taken off the bus.
  let connection: BusConnection
  let configuration: Configuration
  let keeper: StoreKeeper
  let store: Store
  let storeLock = ReadWriteLock()
  let sessions: SessionRegistry
  let signals: SignalOutbox
  /// Clients waiting for the sealed collection to be unlocked.
  let unlockPrompts = UnlockPrompts()
  private var scheduler: ClientScheduler?
  private var expiryTimer: Timer?
  /// Where the message that scrubs the bus reader's buffer goes: to ourselves, ignored.
  static let scrubPath = "/org/freedesktop/secretd/scrub"

  /// Prepares the daemon to serve the store `keeper` opened; nothing is taken off the bus until
  /// ``start()``.
  package init(connection: BusConnection, configuration: Configuration, keeper: StoreKeeper) {
    Gcrypt.initialize(securePoolBytes: 256 * 1024)
    SecureMemory.allowUnlocked.store(configuration.allowUnlockedMemory, ordering: .relaxed)
    SecureMemory.unlockedWarning.withLock {
      $0 = { reason in
        Log.warning("could not lock secret memory (\(reason)); secrets may be swapped (--allow-unlocked-memory)")
      }
    }
    self.connection = connection
    self.configuration = configuration
    self.keeper = keeper
    self.store = keeper.store
    self.sessions = SessionRegistry(
      maxPerClient: configuration.limits.maxSessionsPerClient, maxTotal: configuration.limits.maxSessions)
    self.signals = SignalOutbox(connection: connection, maximumBytes: configuration.limits.maxReplySize)
  }

  /// Arms expiry, follows clients leaving, and starts taking calls off the bus.
  package func start() {
    store.onEvent = { [signals] event in signals.append(event) }
    let timer = Timer { [unowned self] in self.expireDue() }
    expiryTimer = timer
    store.onNextExpiryChanged = { [unowned self] time in self.armExpiry(at: time) }
    // A store served again may hold items that expire soon, or expired while no secretd ran.
    armExpiry(at: store.expiries.peek?.time)
    let scheduler = ClientScheduler(
      vet: { [unowned self] in self.vet($0) }, run: { [unowned self] in self.execute($0) },
      weigh: { [unowned self] call in
        let weight = self.weight(
          path: call.path, interface: call.interface, member: call.member, arguments: call.body)
        // The reading thread answers only when nothing more waits unread on the bus.
        return weight == .quick && self.connection.hasUnreadMessages ? .light : weight
      },
      heavySlots: Self.heavyCallSlots(workerThreads: configuration.workerThreads),
      departed: { [sessions] name in sessions.closeAll(ownedBy: name) })
    self.scheduler = scheduler
    connection.subscribeToBus(signal: "NameOwnerChanged", argument0: nil) { [unowned self] arguments in
      guard let name = arguments.child(0)?.string, let newOwner = arguments.child(2)?.string,
        newOwner.isEmpty, name.hasPrefix(":")
      else { return }
      // Forgotten first: a call of its still running then closes what it made when it ends
      // (`departed`); once forgotten, nothing of it can run, so what it made so far closes now.
      scheduler.forget(name)
      self.sessions.closeAll(ownedBy: name)
      self.unlockPrompts.closeAll(ownedBy: name)
    }
    scheduler.start(threads: configuration.workerThreads)
    let ownName = connection.uniqueName
    connection.addFilter(
      MessageFilter { message, raw in
        guard let call = IncomingCall(message: message, connection: raw) else { return false }
        if call.sender == ownName && call.path == Self.scrubPath { return true }
        scheduler.submit(call)
        return true
      })
  }

  /// How many large calls may run at once: one processor, and one worker, stay for the rest.
  static func heavyCallSlots(workerThreads: Int) -> Int {
    max(1, min(workerThreads - 1, Processors.online - 1))
  }

  /// Sends the signals of the changes made so far to every served client.
  func announceChanges() {
    signals.flush(to: scheduler?.servedClients ?? [])
  }

  /// Counts for logs and tests.
  package var itemCount: Int { storeLock.reading { store.itemCount } }

  // MARK: Callers

  /// Serves a client only if the bus vouches that it runs as the daemon's own user.
  private func vet(_ sender: String) -> ClientScheduler.Verdict {
    let served = configuration.servedUser
    do throws(GLibError) {
      let credentials = try connection.credentials(of: sender)
      if credentials.user == served { return .allowed }
      let user = credentials.user.map(String.init(describing:)) ?? "unknown"
      let process = credentials.process.map { "pid \($0) \($0.command ?? "")" } ?? "unknown process"
      Log.warning("refused connection \(sender) of uid \(user) (\(process)): secretd serves only uid \(served)")
      return .refused("secretd serves only the user it runs as (uid \(served)); this connection is uid \(user)")
    } catch {
      // The client left before it could be checked, or the bus would not say who it is.
      return .refused("secretd could not check who this connection belongs to: \(error.message)")
    }
  }

  /// The paths of an `ao` argument, refused before they are copied out when there are too many.
  func boundedPaths(_ list: PathList) throws(StoreError) -> [String] {
    let limit = configuration.limits.maxPathsPerCall
    guard list.count <= limit else { throw .limitExceeded(.pathsPerCall, actual: list.count, maximum: limit) }
    return list.paths
  }

  // MARK: Plain secrets

  /// A secret sent in clear sits in GDBus's read buffer, which GDBus reuses for the next
  /// message without freeing it. Sending ourselves a message of zeros at least as long makes
  /// the bus deliver it into that buffer, over every byte of the one that held the secret.
  func scrubReadBuffer(coveringAtLeast bytes: Int) {
    // The header of the zeros' message is no shorter than the one it covers; the margin covers
    // the difference of their bodies' framing.
    let zeros = [UInt8](repeating: 0, count: bytes + 512)
    connection.sendWithoutReply(
      destination: connection.uniqueName, path: Self.scrubPath, interface: Interfaces.peer, method: "Ping",
      arguments: .tuple([.bytes(zeros)]))
  }

  // MARK: Expiry

  private func armExpiry(at time: UInt64?) {
    guard let time, let timer = expiryTimer else { return }
    let now = store.now
    let seconds = time > now ? min(time - now, 86_400) : 0
    timer.schedule(afterMilliseconds: UInt32(seconds * 1000))
  }

  private func expireDue() {
    storeLock.writing { armExpiry(at: store.purgeExpired()) }
    announceChanges()
  }
}
