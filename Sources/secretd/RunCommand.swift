// `secretd run -- COMMAND`: a private bus and secretd for one command (a CI job, a container, a
// test suite). The command sees the bus in DBUS_SESSION_BUS_ADDRESS; its exit status is ours;
// when it ends, secretd, the bus and every secret end with it.
import Glibc
import SecretDaemon
import Synchronization
import SystemCalls

enum RunCommand {
  /// The command's pid, for the signal handler that passes SIGTERM and SIGHUP on to it.
  private static let command = Atomic<Int32>(0)

  static func run(_ command: [String], secretdOptions: [String]) -> ExitStatus {
    guard let program = command.first else {
      Log.plain("secretd: run needs a command: secretd run -- COMMAND [ARGUMENT…]")
      return Options.usageError
    }
    let base = Environment.value(of: "XDG_RUNTIME_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    let folder: String
    do throws(FileCallError) {
      folder = try Files.makeTemporaryDirectory(in: base, prefix: "secretd-run.")
    } catch {
      Log.plain("secretd: cannot make a folder for the bus in \(base) (\(error.errno))")
      return .failure
    }
    defer { Files.removeDirectory(folder) }
    do throws(LaunchError) {
      let bus = try PrivateBus.start(in: folder)
      defer { bus.stop() }
      let log = try logFile(in: folder)
      defer { log.close() }
      let secretd = try LaunchedSecretd.start(on: bus.address, options: secretdOptions, log: log)
      defer {
        secretd.stop()
        _ = try? secretd.pid.waitForExit()
      }
      try? Environment.set("DBUS_SESSION_BUS_ADDRESS", to: bus.address)
      return try runToEnd(program, command)
    } catch {
      Log.plain("secretd: \(error)")
      if let text = try? Files.read("\(folder)/secretd.log"), !text.isEmpty {
        Log.plain(String(decoding: text, as: UTF8.self))
      }
      return .failure
    }
  }

  private static func logFile(in folder: String) throws(LaunchError) -> FileDescriptor {
    do throws(Errno) {
      return try FileDescriptor.open("\(folder)/secretd.log", .writeOnly, options: [.create, .exclusiveCreate])
    } catch {
      throw LaunchError(description: "cannot write secretd's log in \(folder) (\(error))")
    }
  }

  /// Runs the command in the foreground and waits for it. A terminal's Ctrl-C reaches it, not us
  /// (we clean up once it ends); SIGTERM and SIGHUP sent to us are passed on to it.
  private static func runToEnd(_ program: String, _ command: [String]) throws(LaunchError) -> ExitStatus {
    let ignored = [Signal.interrupt, Signal.quit].map { signal in
      (signal, try? signal.handle(with: { _ in }))
    }
    defer { for (signal, old) in ignored { if let old { signal.restore(old) } } }
    let child: ProcessID
    do throws(Errno) {
      child = try launch(
        program, arguments: command,
        streams: LaunchedStreams(input: .standardInput, output: .standardOutput, error: .standardError))
    } catch {
      throw LaunchError(description: "cannot run \(program) (\(error))")
    }
    self.command.store(child.rawValue, ordering: .relaxed)
    for signal in [Signal.terminate, Signal(rawValue: SIGHUP)] {
      _ = try? signal.handle(with: { number in
        let pid = RunCommand.command.load(ordering: .relaxed)
        if pid > 0 { kill(pid, number) }
      })
    }
    return (try? child.waitForExit()) ?? .failure
  }
}
