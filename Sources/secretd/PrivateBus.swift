// A bus of secretd's own where there is none (`secretd run`, `secretd --agent`): Debian's
// dbus-daemon with the session configuration, listening in a private folder, detached from the
// terminal; and secretd started on a bus, ready once it owns its name.
import SecretDaemon
import SystemCalls

/// Why a bus or a secretd could not be started, in one line that says what to do.
struct LaunchError: Error, CustomStringConvertible {
  let description: String
}

struct PrivateBus {
  let address: String
  let pid: ProcessID

  /// Starts dbus-daemon listening at `folder`/bus; `folder` exists and is private.
  static func start(in folder: String) throws(LaunchError) -> PrivateBus {
    let arguments = [
      "dbus-daemon", "--session", "--address=unix:path=\(folder)/bus", "--fork", "--print-address=1", "--print-pid=1",
    ]
    let printed: [UInt8]
    do throws(Errno) {
      let pipe = try FileDescriptor.pipe()
      let null = try FileDescriptor.open("/dev/null", .readWrite)
      defer { null.close() }
      let launcher = try launch(
        "dbus-daemon", arguments: arguments,
        streams: LaunchedStreams(input: null, output: pipe.write, error: .standardError))
      pipe.write.close()
      defer { pipe.read.close() }
      printed = try pipe.read.readAll()
      guard try launcher.waitForExit() == .success else { throw Errno.ioError }
    } catch {
      throw LaunchError(
        description: "cannot start dbus-daemon (\(error)); install it with `sudo apt install dbus-daemon`")
    }
    let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n")
    guard lines.count >= 2, let pid = Int32(lines[1]) else {
      throw LaunchError(description: "dbus-daemon did not say its address and pid")
    }
    return PrivateBus(address: String(lines[0]), pid: ProcessID(rawValue: pid))
  }

  /// Ends the bus daemon and waits (at most 5 s) until it is gone: it forked away from us, so
  /// it is no child to wait for, and `secretd run` leaves nothing behind.
  func stop() {
    let daemon = ProcessHandle(of: pid)
    try? Signal.terminate.send(to: pid)
    _ = daemon?.waitForExit(milliseconds: 5000)
  }
}

/// A secretd this process started, serving a bus.
struct LaunchedSecretd {
  let pid: ProcessID

  /// Starts this program as secretd on `address` with `options`, in a session of its own (a
  /// terminal's Ctrl-C does not reach it), its log going to `log`; returns once it owns its name.
  static func start(on address: String, options: [String], log: FileDescriptor) throws(LaunchError) -> LaunchedSecretd {
    let program = Files.symbolicLinkTarget("/proc/self/exe") ?? "/proc/self/exe"
    for inherited in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { Environment.remove(inherited) }
    let pid: ProcessID
    do throws(Errno) {
      let null = try FileDescriptor.open("/dev/null", .readWrite)
      defer { null.close() }
      pid = try launch(
        program, arguments: ["secretd", "--address", address] + options,
        streams: LaunchedStreams(input: null, output: null, error: log), newSession: true)
    } catch {
      throw LaunchError(description: "cannot start secretd (\(error))")
    }
    let secretd = LaunchedSecretd(pid: pid)
    try secretd.waitUntilServing(address)
    return secretd
  }

  /// Waits until secretd owns org.freedesktop.secrets on `address`, at most 20 seconds, asking
  /// the bus over one connection.
  private func waitUntilServing(_ address: String) throws(LaunchError) {
    let deadline = ContinuousClock.now + .seconds(20)
    var bus: BusConnection?
    while ContinuousClock.now < deadline {
      if let status = pid.exitStatusIfEnded() {
        throw LaunchError(description: "secretd ended at start (status \(status)); its log says why")
      }
      bus = bus ?? (try? BusConnection(address: address))
      if let bus, bus.hasOwner(Options().busName) { return }
      NativeThread.sleep(milliseconds: 10)
    }
    throw LaunchError(description: "secretd did not take its name on \(address) within 20 s")
  }

  func stop() { try? Signal.terminate.send(to: pid) }
}
