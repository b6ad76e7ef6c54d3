// `eval "$(secretd --agent)"`, in ssh-agent's manner, for SSH logins, CI and containers with no
// session bus: starts a private bus and secretd, detached from the terminal, and prints the shell
// lines that point clients at them. One agent per user: a later login gets the same one (its
// secrets with it) until `secretd --agent --kill`. Where a bus already has a Secret Service,
// nothing is started.
import SecretDaemon
import SystemCalls

enum Agent {
  /// The shell the printed lines are for.
  enum Shell {
    case sh, csh, fish

    /// As ssh-agent guesses: from $SHELL.
    static var guessed: Shell {
      let shell = Environment.value(of: "SHELL") ?? ""
      return shell.hasSuffix("csh") ? .csh : shell.hasSuffix("fish") ? .fish : .sh
    }

    func set(_ name: String, _ value: String) -> String {
      let quoted = "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
      switch self {
      case .sh: return "\(name)=\(quoted); export \(name);\n"
      case .csh: return "setenv \(name) \(quoted);\n"
      case .fish: return "set -gx \(name) \(quoted);\n"
      }
    }

    func unset(_ name: String) -> String {
      switch self {
      case .sh: return "unset \(name);\n"
      case .csh: return "unsetenv \(name);\n"
      case .fish: return "set -e \(name);\n"
      }
    }
  }

  static let addressVariable = "DBUS_SESSION_BUS_ADDRESS"
  static let pidVariable = "SECRETD_AGENT_PID"

  /// This user's agent folder: in the runtime folder, else in /tmp by uid.
  static var folder: String {
    if let runtime = Environment.value(of: "XDG_RUNTIME_DIR"), !runtime.isEmpty { return "\(runtime)/secretd-agent" }
    return "/tmp/secretd-agent-\(UserID.effective)"
  }

  static func start(shell: Shell, secretdOptions: [String]) -> ExitStatus {
    do throws(LaunchError) {
      if let running = runningAgent() {
        Log.plain("secretd: the agent started earlier serves \(running.address) (pid \(running.pid))")
        print(lines(shell, address: running.address, pid: running.pid), terminator: "")
        return .success
      }
      endLeftovers()
      try makeFolder()
      if let session = try? BusConnection(address: nil) {
        let name = Options().busName
        if session.hasOwner(name) || session.canActivate(name) {
          Log.plain("secretd: your session bus already has a Secret Service (\(name)); nothing started")
          return .success
        }
      }
      let bus = try PrivateBus.start(in: folder)
      let log = try logFile()
      defer { log.close() }
      let secretd: LaunchedSecretd
      do throws(LaunchError) {
        secretd = try LaunchedSecretd.start(on: bus.address, options: secretdOptions, log: log)
      } catch {
        bus.stop()
        throw error
      }
      try record(address: bus.address, bus: bus.pid, secretd: secretd.pid)
      Log.plain("secretd: agent started (pid \(secretd.pid)) on \(bus.address); log in \(folder)/secretd.log")
      print(lines(shell, address: bus.address, pid: secretd.pid), terminator: "")
      return .success
    } catch {
      Log.plain("secretd: \(error)")
      return .failure
    }
  }

  /// Ends the agent this user started (secretd, then its bus) and prints the lines that forget it.
  static func kill(shell: Shell) -> ExitStatus {
    guard let running = runningAgent(requireServing: false) else {
      Log.plain("secretd: no agent of yours is running (\(folder))")
      return .failure
    }
    for (pid, command) in [(running.pid, "secretd"), (running.bus, "dbus-daemon")] where pid.command == command {
      try? Signal.terminate.send(to: pid)
    }
    Files.removeDirectory(folder)
    print(shell.unset(addressVariable) + shell.unset(pidVariable), terminator: "")
    Log.plain("secretd: agent \(running.pid) ended")
    return .success
  }

  /// What an agent that no longer serves left: its bus, if it still runs, and its files.
  private static func endLeftovers() {
    if let stale = runningAgent(requireServing: false) {
      for (pid, command) in [(stale.pid, "secretd"), (stale.bus, "dbus-daemon")] where pid.command == command {
        try? Signal.terminate.send(to: pid)
      }
    }
    Files.removeDirectory(folder)
  }

  private static func lines(_ shell: Shell, address: String, pid: ProcessID) -> String {
    shell.set(addressVariable, address) + shell.set(pidVariable, String(pid.rawValue))
  }

  // MARK: The agent's folder: address, bus.pid, secretd.pid, secretd.log

  private static func makeFolder() throws(LaunchError) {
    do throws(FileCallError) { try Files.makePrivateDirectory(folder) } catch {
      throw LaunchError(description: "cannot use \(folder) for the agent (\(error.call): \(error.errno))")
    }
  }

  /// The agent recorded in the folder, if its secretd still runs (and serves its bus).
  private static func runningAgent(requireServing: Bool = true) -> (address: String, pid: ProcessID, bus: ProcessID)? {
    func text(_ name: String) -> String? {
      (try? Files.read("\(folder)/\(name)")).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }
    guard let address = text("address"), let pid = text("secretd.pid").flatMap({ Int32($0) }),
      let bus = text("bus.pid").flatMap({ Int32($0) })
    else { return nil }
    let secretd = ProcessID(rawValue: pid)
    if requireServing {
      guard secretd.command == "secretd" else { return nil }
      guard let connection = try? BusConnection(address: address), connection.hasOwner(Options().busName) else {
        return nil
      }
    }
    return (address, secretd, ProcessID(rawValue: bus))
  }

  private static func record(address: String, bus: ProcessID, secretd: ProcessID) throws(LaunchError) {
    for (name, value) in [("address", address), ("bus.pid", "\(bus)"), ("secretd.pid", "\(secretd)")] {
      do throws(AtomicWriteError) {
        try Files.replace("\(folder)/\(name)", with: Array(value.utf8), permissions: .ownerReadWrite)
      } catch {
        throw LaunchError(description: "cannot record the agent in \(folder) (\(error))")
      }
    }
  }

  private static func logFile() throws(LaunchError) -> FileDescriptor {
    do throws(Errno) {
      return try FileDescriptor.open("\(folder)/secretd.log", .writeOnly, options: [.create])
    } catch {
      throw LaunchError(description: "cannot write secretd's log in \(folder) (\(error))")
    }
  }
}
