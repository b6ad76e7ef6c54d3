// `secretd` serving: hardening, the store, the bus connection and its name, the credentials
// socket, then the main loop until a signal, the bus's end or a failure.
import SecretDaemon
import SystemCalls

/// Why the main loop ended.
enum Ending {
  case signal(String)
  /// The bus went away without an error: its session ended.
  case busClosed(String)
  case failure(String)
}

func runDaemon(_ options: Options) -> ExitStatus {
  Signal.unblockAll()
  let hardening = ProcessHardening.apply()
  if !hardening.notDumpable || !hardening.coreLimitZero {
    Log.warning("could not make the process non-dumpable; core dumps may contain secrets")
  }
  if !ProcessHardening.wipesFreedMemory {
    Log.warning("freed memory is not wiped: plain-session secrets may stay in the heap")
  }
  // Handlers first, so a SIGTERM that arrives as soon as the name is visible still exits cleanly.
  let loop = MainLoop()
  var ending = Ending.signal("")
  for signal in [Signal.terminate, .interrupt] {
    loop.onSignal(signal) {
      ending = .signal(signal.description)
      loop.quit()
    }
  }
  // The store first: the arena the service manager kept, or a new one, handed to it before any
  // client can write.
  let inherited = ServiceManager.takeInheritedDescriptors()
  let keeper: StoreKeeper
  do {
    keeper = try StoreKeeper(configuration: options.configuration, inherited: inherited)
  } catch {
    Log.error(error.description)
    return .failure
  }
  keeper.report.forEach(Log.info)
  keeper.handToServiceManager()
  let connection: BusConnection
  do {
    connection = try BusConnection(address: options.address)
  } catch {
    Log.error("cannot connect to \(options.address ?? "the session bus"): \(error)")
    return .failure
  }
  if let unconfirmed = keeper.confirmKept(on: connection) { Log.warning(unconfirmed) }
  let daemon = Daemon(connection: connection, configuration: options.configuration, keeper: keeper)
  // Before the name is taken, so that whoever sees the name can read this line.
  Log.info(memoryLine(options))
  daemon.start()
  switch CredentialServer.open(
    for: daemon, inherited: inherited, runtimeDirectory: Environment.value(of: "XDG_RUNTIME_DIR"))
  {
  case .success(let credentials):
    credentials.start()
    Log.info(
      "serving systemd credentials at \(credentials.path) (LoadCredential=ID:%t/\(CredentialServer.relativePath))")
  case .failure(let reason):
    Log.info(reason.description)
  }
  connection.onClosed { busWentAway, reason in
    ending = busWentAway ? .busClosed(reason) : .failure("lost the bus connection (\(reason))")
    loop.quit()
  }
  switch Result(catching: {
    try connection.requestName(options.busName, replace: options.replace, allowReplacement: options.allowReplacement)
  }) {
  case .success(.acquired), .success(.alreadyOwner):
    break
  case .success(.taken(let pid, let command)):
    let owner = pid.map { "\(command ?? "unknown process") (pid \($0))" } ?? "another process"
    let advice =
      options.replace
      ? "it does not allow replacement (only a secretd started with --allow-replacement does): stop it first"
      : "stop it first, or run secretd --replace if it is a secretd started with --allow-replacement"
    Log.error("\(options.busName) is already owned by \(owner); \(advice)")
    return .failure
  case .failure(let error):
    Log.error("cannot own \(options.busName): \(error)")
    return .failure
  }
  connection.onNameLost(options.busName) {
    ending = .failure("another connection took \(options.busName)")
    loop.quit()
  }
  Log.info(
    "serving \(options.busName) as \(connection.uniqueName) on \(options.address ?? "the session bus") "
      + "(pid \(ProcessID.current), uid \(UserID.current), "
      + (options.configuration.persistentFolder == nil ? "memory only)" : "login sealed on disk)"))
  loop.run()
  let count = daemon.itemCount == 1 ? "1 item" : "\(daemon.itemCount) items"
  let items =
    (keeper.isKept ? "\(count) kept by the service manager for the next secretd" : "\(count) dropped from memory")
    + (options.configuration.persistentFolder == nil ? "" : " (login's sealed on disk)")
  switch ending {
  case .signal(let name):
    Log.info("\(name) received; stopped, \(items)")
    connection.flush()
    return .success
  case .busClosed(let reason):
    // Status 1 all the same, so that systemd restarts secretd (with its store, when kept).
    Log.info("the bus closed (\(reason)); stopped, \(items)")
    return .failure
  case .failure(let reason):
    Log.error("\(reason); stopping, \(items)")
    return .failure
  }
}

/// What memory secrets may use, and whether it is locked.
func memoryLine(_ options: Options) -> String {
  let budget = Options.size(options.configuration.limits.maxMemory)
  let locked = ResourceLimits.lockedMemory.map(Options.size) ?? "unlimited"
  let policy =
    options.configuration.allowUnlockedMemory
    ? "secrets may be swapped to disk when memory cannot be locked (--allow-unlocked-memory)"
    : "a secret that cannot be locked in memory is refused"
  return
    "memory budget \(budget) for secrets, attributes and labels (--max-memory); RLIMIT_MEMLOCK \(locked); \(policy)"
}
