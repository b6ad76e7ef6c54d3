// secretd: arguments, signals, main loop. Everything else lives in SecretDaemon.
import Glibc
import SecretDaemon

func runDaemon(_ options: Options) -> Int32 {
  ProcessHardening.unblockSignals()
  let hardening = ProcessHardening.apply()
  if !hardening.notDumpable || !hardening.coreLimitZero {
    Log.warning("could not make the process non-dumpable; core dumps may contain secrets")
  }
  // Handlers first, so a SIGTERM that arrives as soon as the name is visible still exits cleanly.
  let loop = MainLoop()
  loop.onSignal(SIGTERM) {
    Log.info("SIGTERM received; shutting down")
    loop.quit()
  }
  loop.onSignal(SIGINT) {
    Log.info("SIGINT received; shutting down")
    loop.quit()
  }
  let connection: BusConnection
  do {
    connection = try BusConnection(address: options.address)
  } catch {
    Log.error("cannot connect to \(options.address ?? "the session bus"): \(error)")
    return 1
  }
  let daemon: Daemon
  do {
    daemon = try Daemon(connection: connection, configuration: options.configuration)
    try daemon.start()
  } catch {
    Log.error("cannot register the Secret Service objects: \(error)")
    return 1
  }
  switch Result(catching: { try connection.requestName(options.busName, replace: options.replace) }) {
  case .success(.acquired), .success(.alreadyOwner):
    break
  case .success(.taken(let pid, let command)):
    let owner = pid.map { "\(command ?? "unknown process") (pid \($0))" } ?? "another process"
    Log.error(
      "\(options.busName) is already owned by \(owner); stop it or run secretd --replace to take over")
    return 1
  case .failure(let error):
    Log.error("cannot own \(options.busName): \(error)")
    return 1
  }
  connection.onNameLost(options.busName) {
    Log.info("\(options.busName) was taken over by another provider; shutting down")
    loop.quit()
  }
  Log.info(
    "serving \(options.busName) as \(connection.uniqueName) on \(options.address ?? "the session bus") "
      + "(pid \(ProcessDetails.currentPID), memory only)")
  loop.run()
  Log.info("stopped; \(daemon.itemCount) items dropped from memory")
  connection.flush()
  return 0
}

switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .exit(let status, let message):
  if status == 0 { print(message) } else { Log.plain(message) }
  exit(status)
case .run(let options):
  exit(runDaemon(options))
}
