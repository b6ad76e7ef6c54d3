// pam-unlock: the login unlocker's other half. pam_exec (with expose_authtok) runs it as root at
// each login that gives a password, with the password on stdin and the user in PAM_USER; it
// becomes that user and opens secretd's persistent collection with the password, when a
// `login` unlocker holds it. It never holds a login up: a copy of it, in the background, waits
// for the user's bus (at a first login it comes after the user manager starts) and unlocks.
// Its output goes nowhere under PAM, so it says what it did in the system log.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum PamUnlockCommand {
  static let bus = OptionSpec(
    "bus", value: "ADDRESS", help: "The user's bus (default: unix:path=/run/user/UID/bus, the user manager's).")
  static let wait = OptionSpec(
    "wait", value: "SECONDS", help: "Wait up to SECONDS for the bus to appear (what the background copy does).")
  /// How long the background copy waits for the user's bus.
  static let backgroundWait = 60
  /// pam_exec writes at most PAM_MAX_RESP_SIZE bytes and a NUL.
  static let largestPassword = 512

  static let spec = CommandSpec(
    "pam-unlock", summary: "Unlock secretd's persistent collection with the login password PAM gives.",
    discussion: """
      For the PAM stack, not for typing. With this line at the end of /etc/pam.d/common-auth
        auth optional pam_exec.so expose_authtok quiet /usr/bin/secretctl pam-unlock
      a login that gives a password (console, SSH with a password, su, a display manager)
      hands it here on stdin, and the user's secretd opens its persistent collection with it,
      if `secretctl unlocker add login` added that password (with no login unlocker it tries
      nothing, so that logins never count as wrong passphrases). Run as root, it becomes the user
      PAM_USER names first. The login never waits: a copy of it does the unlocking in the
      background, after waiting for the user's bus (up to \(backgroundWait) seconds, at a
      first login); --wait SECONDS does that copy's part here instead. It sets no passphrase: a
      collection that has none yet stays as it is. What it did goes to the system log
      (authpriv).
      Exit status: 0 handed to the copy, unlocked, or nothing to unlock; 2 usage error; 3 not
      unlocked (with --wait; a login password that is not a login unlocker's among them).
      """,
    options: [bus, wait]
  ) { arguments, console throws(CLIError) in
    let account = try user()
    let password = try readPassword(console)
    if UserID.effective.rawValue == 0, account.user.rawValue != 0 {
      do throws(Errno) { try account.become() } catch {
        throw report(.service("cannot become \(account.name) (\(error)): nothing was unlocked"))
      }
    }
    let address = arguments.option(bus.long) ?? "unix:path=/run/user/\(account.user)/bus"
    let waitLimit = try arguments.option(wait.long).map { (text) throws(CLIError) -> Int in
      guard let seconds = Int(text), (0...3600).contains(seconds) else {
        throw .usage("--wait takes a number of seconds up to 3600, such as 60")
      }
      return seconds
    }
    // PAM's call hands the work to a copy: Argon2id, a bus still to come, or the wait secretd
    // puts on an unlock after wrong passphrases (up to 30 s) never hold a login up.
    guard let waitLimit else { return try waitInBackground(address, password: password, account: account) }
    guard busIsUp(address) || waitForBus(address, seconds: waitLimit) else {
      throw report(.service("no bus at \(address.visible) after \(waitLimit) s: login of \(account.name) stays locked"))
    }
    // The well-known name, whatever the PAM environment says: the password goes to secretd only.
    let client = SecretClient(bus: .address(address), busName: "org.freedesktop.secrets")
    return try unlock(client, with: password, account: account)
  }

  /// The user PAM names, who must be this process's own unless it runs as root.
  private static func user() throws(CLIError) -> UserAccount {
    guard let name = Environment.value(of: "PAM_USER"), !name.isEmpty else {
      throw .usage("PAM_USER is not set: pam-unlock is run by pam_exec (see `secretctl pam-unlock --help`)")
    }
    guard let account = UserAccount.named(name) else { throw report(.usage("no user named \(name.visible)")) }
    guard UserID.effective.rawValue == 0 || account.user == UserID.effective else {
      throw report(.usage("PAM_USER names \(name.visible), not the user running this: only root unlocks for another"))
    }
    return account
  }

  /// The password as pam_exec writes it: the bytes, then a NUL.
  private static func readPassword(_ console: Console) throws(CLIError) -> SecretBytes {
    let password = SecretBytes()
    guard password.read(from: console.input, until: { $0.count > largestPassword + 1 }),
      password.count <= largestPassword + 1
    else { throw report(.usage("cannot read the password from stdin (at most \(largestPassword) bytes)")) }
    if password.last == 0 { password.removeLast(1) }
    guard password.count > 0 else { throw report(.usage("no password on stdin: nothing was unlocked")) }
    return password
  }

  private static func unlock(_ client: SecretClient, with password: SecretBytes, account: UserAccount)
    throws(CLIError) -> ExitStatus
  {
    let state: String?
    do throws(SecretError) {
      // A login password is worth more than the secrets: it goes to secretd's program alone (the
      // trust check on the call itself then holds it to this user).
      guard try client.provider().isSecretd else {
        SystemLog.write("the Secret Service of \(account.name) is not secretd: nothing to unlock")
        return .success
      }
      state = try client.providerStore()?.sealedState
    } catch {
      throw report(.service("cannot reach secretd of \(account.name) (\(error)): login stays locked"))
    }
    guard state == "locked" else {
      SystemLog.write("login of \(account.name) is \(state ?? "not secretd's"): nothing to unlock")
      return .success
    }
    // Without a login unlocker every login would be a wrong passphrase, each making the next
    // unlock (and login) wait longer.
    guard (try? client.unlockers())?.contains(where: { $0.kind == "login" }) == true else {
      SystemLog.write("login of \(account.name) has no login unlocker (`secretctl unlocker add login`): not tried")
      return .success
    }
    do throws(SecretError) { _ = try client.unlockSealed(passphrase: password) } catch {
      throw report(
        .service(
          "the login password of \(account.name) did not open login (\(error)); if it changed, "
            + "`secretctl unlocker add login` with the new one, then remove the old"))
    }
    SystemLog.write("login of \(account.name) unlocked with the login password")
    return .success
  }

  /// Starts a copy of this program, in a session of its own, that waits for the bus; hands it
  /// the password through a pipe, written whole (a pipe holds far more than PAM's 512 bytes)
  /// and closed before the copy starts, so that nothing here waits on it or dies with it.
  private static func waitInBackground(_ address: String, password: SecretBytes, account: UserAccount)
    throws(CLIError) -> ExitStatus
  {
    guard let program = currentExecutablePath() else { throw report(.service("cannot find this program to wait")) }
    do throws(Errno) {
      let pipe = try FileDescriptor.pipe()
      defer { pipe.read.close() }
      let written = Result { () throws(Errno) in
        try password.withUnsafeBytes { (bytes) throws(Errno) in try pipe.write.writeAll(bytes) }
      }
      pipe.write.close()
      try written.get()
      let nowhere = try FileDescriptor.open("/dev/null", .readWrite)
      defer { nowhere.close() }
      _ = try launch(
        program, arguments: ["secretctl", "pam-unlock", "--bus", address, "--wait", "\(backgroundWait)"],
        streams: LaunchedStreams(input: pipe.read, output: nowhere, error: nowhere), newSession: true)
    } catch {
      throw report(.service("cannot start the copy that waits for the bus (\(error)): login stays locked"))
    }
    SystemLog.write("login of \(account.name) is unlocked in the background once \(address.visible) answers")
    return .success
  }

  private static func busIsUp(_ address: String) -> Bool {
    guard let path = socketPath(address) else { return true }
    return Files.exists(path)
  }

  /// Asks every quarter second until the bus's socket exists or `seconds` have passed.
  private static func waitForBus(_ address: String, seconds: Int?) -> Bool {
    guard let seconds else { return false }
    for _ in 0..<(seconds * 4) {
      NativeThread.sleep(milliseconds: 250)
      if busIsUp(address) { return true }
    }
    return false
  }

  /// The socket of a `unix:path=` address; nil for any other kind, which is taken as up.
  private static func socketPath(_ address: String) -> String? {
    guard address.hasPrefix("unix:") else { return nil }
    return address.dropFirst(5).split(separator: ",").first { $0.hasPrefix("path=") }.map { String($0.dropFirst(5)) }
  }

  /// `error`, also written to the system log, where PAM's side of a login is read.
  private static func report(_ error: CLIError) -> CLIError {
    SystemLog.write("pam-unlock: \(error.message)", isWarning: true)
    return error
  }
}
