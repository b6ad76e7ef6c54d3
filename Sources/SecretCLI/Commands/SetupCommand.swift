// setup: secretd becomes this user's Secret Service provider; --undo gives the name back.
//
// A package cannot install secretd's D-Bus activation file where the session bus looks for it
// system-wide: gnome-keyring's file of the same name is there, and which one wins is undefined.
// The user's own services folder comes before the system's, so the choice is made per user, here.
import CommandLineSyntax
import SystemCalls

enum SetupCommand {
  static let busName = "org.freedesktop.secrets"
  /// The units `setup` enables when they are installed: secretd itself, and the socket on which
  /// it answers systemd units' credentials (started now: it starts secretd only when used).
  static let units = ["secretd.service"]
  static let sockets = ["secretd-credentials.socket"]
  static let fallbackDropIn = "no-user-namespace.conf"
  static let persistentDropIn = "persistent.conf"

  static let undo = OptionSpec(
    "undo",
    help:
      "Give the name back to the system's provider: remove the activation file and the drop-in, disable the units (a running secretd keeps its secrets until stopped)."
  )

  static let persistent = OptionSpec(
    "persistent",
    help:
      "Also keep a collection that outlives a reboot: 'login', sealed in $XDG_DATA_HOME/secretd, becomes the default (kept by later setups; --undo ends it, leaving the files)."
  )

  static let spec = CommandSpec(
    "setup", summary: "Make secretd this user's Secret Service provider (--undo reverts it).",
    discussion: """
      Writes the D-Bus activation file $XDG_DATA_HOME/dbus-1/services/org.freedesktop.secrets.service
      (~/.local/share/...), which this user's session bus reads before the system's, such as
      gnome-keyring's: the first client then starts secretd (the one installed beside secretctl),
      through secretd.service where a systemd user manager runs. There it also enables the unit,
      so secretd starts at every login, and adds no-user-namespace.conf beside the unit when the
      user manager cannot build its sandbox, and makes the credentials socket listen (restarting a
      running secretd for it, which keeps its secrets). Other users are not affected.
      Over SSH the user bus needs dbus-user-session installed; for units that start with no one
      logged in, `sudo loginctl enable-linger $USER` keeps the user manager running. Without
      systemd, see `secretd --agent` and `secretd run` in secretd(8).
      With --persistent, secretd also serves 'login', written sealed to $XDG_DATA_HOME/secretd and
      the default collection, while 'session' stays in memory only; 'login' starts locked until
      `secretctl unlock` (whose first use sets its passphrase) or a TPM unlocker opens it.
      Exit status: 0 done, 1 secretd or its unit is not installed, 3 systemctl failed.
      """,
    options: [undo, persistent]
  ) { arguments, console throws(CLIError) in
    let setup = try Setup()
    if arguments.flag(undo.long) {
      guard !arguments.flag(persistent.long) else { throw .usage("--undo and --persistent go separately") }
      try setup.remove(console)
    } else {
      try setup.install(persistent: arguments.flag(persistent.long) || setup.isPersistent, console)
    }
    return .success
  }
}

/// Where setup writes, and what it runs.
private struct Setup {
  let secretd: String
  let activationFile: String
  let dropIn: String
  /// The drop-in that runs secretd with --persistent and lets it write its data folder.
  let persistentDropIn: String
  /// Where --persistent seals `login` (secretd's default for it).
  let dataFolder: String
  /// The drop-in's text as installed beside the programs (`PREFIX/share/swift-secrets`).
  let dropInSource: String

  init() throws(CLIError) {
    guard let me = currentExecutablePath() else { throw .service("cannot tell where secretctl is installed") }
    let folder = Files.split(me).directory
    secretd = folder + "/secretd"
    guard Files.isRegularFile(secretd) else {
      throw .notFound("secretd is not installed beside secretctl (\(folder)); install the package or `make install`")
    }
    let home = Environment.value(of: "HOME") ?? ""
    let data = Environment.value(of: "XDG_DATA_HOME").flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
    let config = Environment.value(of: "XDG_CONFIG_HOME").flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
    activationFile = data + "/dbus-1/services/\(SetupCommand.busName).service"
    dropIn = config + "/systemd/user/secretd.service.d/" + SetupCommand.fallbackDropIn
    persistentDropIn = config + "/systemd/user/secretd.service.d/" + SetupCommand.persistentDropIn
    dataFolder = data + "/secretd"
    dropInSource = Files.split(folder).directory + "/share/swift-secrets/" + SetupCommand.fallbackDropIn
  }

  func activation(persistent: Bool) -> String {
    """
    # Written by `secretctl setup`: secretd is this user's Secret Service (`secretctl setup --undo`
    # removes this file). A bus started by systemd starts the unit; any other bus runs Exec=.
    [D-BUS Service]
    Name=\(SetupCommand.busName)
    Exec=\(secretd)\(persistent ? " --persistent" : "")
    SystemdService=secretd.service

    """
  }

  /// The unit's drop-in for --persistent: the unit sees the home read-only except this folder.
  var persistence: String {
    """
    # Written by `secretctl setup --persistent` (`secretctl setup --undo` removes it): secretd
    # also keeps 'login', sealed in \(dataFolder), the only folder of the home it may write.
    [Service]
    ExecStart=
    ExecStart=\(secretd) --persistent
    ReadWritePaths=\(dataFolder)
    # A TPM unlocker (`secretctl unlocker add tpm`) reaches the machine's TPM here, where it has
    # one and this user may use it (Debian: the group tss); PrivateDevices= hides the rest of /dev.
    BindPaths=-/dev/tpmrm0

    """
  }

  /// Whether an earlier `setup --persistent` turned persistence on; a plain `setup` keeps it.
  var isPersistent: Bool {
    Files.exists(persistentDropIn)
      || (try? Files.read(activationFile)).map { String(decoding: $0, as: UTF8.self).includes(" --persistent\n") }
        == true
  }

  func install(persistent: Bool, _ console: Console) throws(CLIError) {
    try write(activationFile, activation(persistent: persistent))
    console.print("wrote \(activationFile): the first client on this user's session bus starts \(secretd)\n")
    if persistent { try preparePersistence(console) }
    guard userManagerRuns else {
      console.print(
        "no systemd user manager here: a client's first call starts secretd through the D-Bus activation file\n")
      return reportOwner(console)
    }
    try systemctl(["daemon-reload"])
    guard run("systemctl", ["--user", "cat", "secretd.service"]).status == .success else {
      throw .notFound("the user unit secretd.service is not installed; install the package or `make install`")
    }
    try Files.remove(dropIn, or: "cannot remove the earlier drop-in")
    let sandbox = ["-p", "PrivateUsers=yes", "-p", "CapabilityBoundingSet="]
    if run("systemd-run", ["--user", "--wait", "--quiet", "--collect"] + sandbox + ["true"]).status != .success {
      guard let text = try? Files.read(dropInSource) else {
        throw .notFound("the user manager cannot build secretd's sandbox and \(dropInSource) is missing; reinstall")
      }
      try write(dropIn, String(decoding: text, as: UTF8.self))
      console.print("this machine forbids user namespaces to the user manager: added \(dropIn) (see secretd(8))\n")
    }
    try systemctl(["daemon-reload"])
    // A unit that failed before this (its sandbox refused, say) would otherwise stay refused
    // by its start limit; whether it had failed does not matter.
    _ = run("systemctl", ["--user", "reset-failed"] + SetupCommand.units)
    try systemctl(["enable"] + SetupCommand.units)
    let sockets = SetupCommand.sockets.filter { run("systemctl", ["--user", "cat", $0]).status == .success }
    let restarted = sockets.isEmpty ? false : try startSockets(sockets, console)
    console.print("enabled \((SetupCommand.units + sockets).joined(separator: ", ")): secretd starts at every login\n")
    if persistent && !restarted && isActive("secretd.service") && !runsPersistent {
      try systemctl(["restart", "secretd.service"])
      console.print("restarted secretd with --persistent (its session secrets are kept)\n")
    }
    reportOwner(console)
  }

  /// The data folder (private) and, for the unit, the drop-in; what to do next.
  private func preparePersistence(_ console: Console) throws(CLIError) {
    do throws(FileCallError) {
      try Files.makeDirectories(Files.split(dataFolder).directory)
      try Files.makePrivateDirectory(dataFolder)
    } catch {
      throw .service("cannot make \(dataFolder): \(error)")
    }
    try write(persistentDropIn, persistence)
    console.print(
      "wrote \(persistentDropIn): 'login', sealed in \(dataFolder), is the default collection; "
        + "`secretctl unlock` opens it (the first time, it sets its passphrase)\n")
  }

  /// Whether the running secretd was started with --persistent (its command line, from the unit).
  private var runsPersistent: Bool {
    run("systemctl", ["--user", "show", "-p", "ExecStart", "--value", "secretd.service"]).output.includes(
      "--persistent")
      && run("systemctl", ["--user", "show", "-p", "NeedDaemonReload", "--value", "secretd.service"]).output
        .hasPrefix("no")
  }

  /// Enables the sockets and makes them listen now. systemd starts no socket whose service runs
  /// already ("refusing"): secretd is then restarted, which brings its sockets up first (the
  /// unit wants them) and keeps every secret (the service manager hands its store back).
  /// Returns whether secretd was restarted.
  private func startSockets(_ sockets: [String], _ console: Console) throws(CLIError) -> Bool {
    try systemctl(["enable"] + sockets)
    let idle = sockets.filter { !isActive($0) }
    guard !idle.isEmpty else { return false }
    guard isActive("secretd.service") else {
      try systemctl(["start"] + idle)
      return false
    }
    try systemctl(["restart", "secretd.service"])
    guard idle.allSatisfy(isActive) else {
      throw .service(
        "\(idle.joined(separator: ", ")) did not start with secretd; see `journalctl --user -u secretd`, then run "
          + "`systemctl --user restart secretd` (its secrets are kept)")
    }
    console.print("restarted secretd so that \(idle.joined(separator: ", ")) listens (its secrets are kept)\n")
    return true
  }

  private func isActive(_ unit: String) -> Bool {
    run("systemctl", ["--user", "is-active", "--quiet", unit]).status == .success
  }

  func remove(_ console: Console) throws(CLIError) {
    if let text = try? Files.read(activationFile) {
      let exec = String(decoding: text, as: UTF8.self)
      guard exec.includes("Exec=\(secretd)\n") || exec.includes("Exec=\(secretd) --persistent\n") else {
        throw .usage("\(activationFile) does not start this secretd (\(secretd)); left alone")
      }
      try Files.remove(activationFile, or: "cannot remove the activation file")
      console.print("removed \(activationFile)\n")
    }
    try Files.remove(dropIn, or: "cannot remove the drop-in")
    if Files.exists(persistentDropIn) {
      try Files.remove(persistentDropIn, or: "cannot remove the drop-in")
      console.print("removed \(persistentDropIn); 'login' stays sealed in \(dataFolder) for a later --persistent\n")
    }
    guard userManagerRuns else { return }
    try systemctl(["disable"] + SetupCommand.units)
    let sockets = SetupCommand.sockets.filter { run("systemctl", ["--user", "cat", $0]).status == .success }
    if !sockets.isEmpty { try systemctl(["disable", "--now"] + sockets) }
    try systemctl(["daemon-reload"])
    console.print("disabled \((SetupCommand.units + sockets).joined(separator: ", "))\n")
    if isActive("secretd.service") {
      console.print(
        "secretd still runs and keeps its secrets; `systemctl --user stop secretd` ends it (its secrets go with it)\n")
    }
  }

  /// Says who serves the Secret Service now, when the bus can tell (busctl, asking without
  /// starting anything).
  private func reportOwner(_ console: Console) {
    let status = run("busctl", ["--user", "status", "--no-pager", SetupCommand.busName])
    guard status.status == .success else { return }
    let fields = status.output.split(separator: "\n").compactMap { line -> (Substring, Substring)? in
      guard let equals = line.firstIndex(of: "=") else { return nil }
      return (line[..<equals], line[line.index(after: equals)...])
    }
    let command = fields.first { $0.0 == "Comm" }?.1 ?? "an unknown program"
    let pid = fields.first { $0.0 == "PID" }?.1 ?? "?"
    if command == "secretd" {
      console.print("secretd (pid \(pid)) serves \(SetupCommand.busName) now\n")
      return
    }
    console.print(
      "\(command) (pid \(pid)) owns \(SetupCommand.busName) now: clients keep using it until it stops; "
        + "then the first client starts secretd\n")
  }

  private var userManagerRuns: Bool { run("systemctl", ["--user", "show-environment"]).status == .success }

  private func systemctl(_ arguments: [String]) throws(CLIError) {
    let result = run("systemctl", ["--user"] + arguments)
    guard result.status == .success else {
      let output = CLIError.oneLine(result.output)
      throw .service("systemctl --user \(arguments.joined(separator: " ")) failed: \(output)")
    }
  }

  private func write(_ path: String, _ text: String) throws(CLIError) {
    do { try Files.replace(path, with: Array(text.utf8), permissions: FilePermissions(rawValue: 0o644)) } catch {
      throw .service("cannot write \(path): \(error)")
    }
  }

  /// Runs a program to its end; its output and errors together. A program that cannot be
  /// started counts as failed (status 127, as a shell says).
  private func run(_ program: String, _ arguments: [String]) -> (status: ExitStatus, output: String) {
    guard let pipe = try? FileDescriptor.pipe() else { return (ExitStatus(rawValue: 127), "") }
    defer { pipe.read.close() }
    let child: ProcessID
    do {
      child = try spawn(program, arguments: [program] + arguments, output: pipe.write, error: pipe.write)
    } catch {
      pipe.write.close()
      return (ExitStatus(rawValue: 127), "\(program) cannot be run: \(error)")
    }
    pipe.write.close()
    let output = (try? pipe.read.readAll()) ?? []
    let status = (try? child.waitForExit()) ?? ExitStatus(rawValue: 127)
    return (status, String(decoding: output, as: UTF8.self))
  }
}

extension Files {
  fileprivate static func remove(_ path: String, or message: String) throws(CLIError) {
    do { try remove(path) } catch { throw .service("\(message) \(path): \(error)") }
  }
}
