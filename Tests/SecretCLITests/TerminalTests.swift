import Foundation
import SecretTestSupport
import Testing

@Suite("The terminal: a no-echo prompt for set, a newline for get")
struct TerminalTests {
  @Test(arguments: Provider.all)
  func setAsksTwiceWithoutEchoingTheSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try PseudoTerminalChild(
        try secretctlPath(), ["set", "tty", "alice"], environment: instance.environment)
      try child.waitFor("Secret for service \"tty\", account \"alice\": ")
      child.type("typed-secret\n")
      try child.waitFor("Again: ")
      child.type("typed-secret\n")
      #expect(child.wait() == 0)
      #expect(!child.output.contains("typed-secret"), "the secret was echoed: \(child.output.debugDescription)")

      let get = try PseudoTerminalChild(
        try secretctlPath(), ["get", "tty", "alice"], environment: instance.environment)
      #expect(get.wait() == 0)
      #expect(get.output == "typed-secret\r\n", "a newline follows on a terminal")
      #expect(try secretctl(instance, ["get", "tty", "alice"]).stdoutText == "typed-secret")
    }
  }

  @Test(arguments: Provider.all)
  func twoDifferentEntriesStoreNothing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try PseudoTerminalChild(
        try secretctlPath(), ["set", "tty", "bob"], environment: instance.environment)
      try child.waitFor(": ")
      child.type("first\n")
      try child.waitFor("Again: ")
      child.type("second\n")
      #expect(child.wait() == 2)
      #expect(child.output.contains("secretctl: the two entries differ; nothing was stored"))
      #expect(try secretctl(instance, ["get", "tty", "bob"]).status == 1)
    }
  }

  @Test(arguments: Provider.all)
  func setUnderScriptReadsBothEntriesFromTheTerminal(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      // script(1) from bsdutils gives the command a terminal and types its own stdin into it.
      let command = "'\(try secretctlPath())' set scripted alice"
      let run = try instance.run(
        "script", ["-q", "-e", "-c", command, "/dev/null"], input: Array("pa ss\npa ss\n".utf8))
      #expect(run.status == 0, "\(run.stdoutText)")
      #expect(run.stdoutText.contains("Again: "))
      #expect(try secretctl(instance, ["get", "scripted", "alice"]).stdoutText == "pa ss")
    }
  }

  /// Runs its arguments as a job in a process group of its own, in the foreground of the
  /// terminal, as a shell with job control does (so that Ctrl-Z can stop it), printing
  /// `job PID` before the job starts (so the line is there by the time the job prompts); exits
  /// with the job's status once it ends.
  static let jobControl = """
    import os, signal, sys
    started_r, started_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(started_w)
        os.read(started_r, 1)
        os.setpgid(0, 0)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        os.tcsetpgrp(0, os.getpgrp())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execv(sys.argv[1], sys.argv[1:])
    print("job %d" % pid, flush=True)
    os.write(started_w, b"x")
    while True:
        _, status = os.waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            sys.exit(os.waitstatus_to_exitcode(status))
    """

  @Test(arguments: Provider.all)
  func ctrlZAtThePromptStopsWithEchoRestoredAndContinuingTurnsItOffAgain(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try PseudoTerminalChild(
        "/usr/bin/python3", ["-c", Self.jobControl, try secretctlPath(), "set", "tty", "stopped"],
        environment: instance.environment)
      try child.waitFor("Secret for service \"tty\", account \"stopped\": ")
      let pid = try #require(jobPID(in: child.output))
      #expect(!echoIsOn(child.master))
      kill(pid, SIGTSTP)
      try await withDeadline(seconds: 10, "secretctl stopped") {
        while !isStopped(pid) { try await Task.sleep(for: .milliseconds(10)) }
      }
      #expect(echoIsOn(child.master), "stopped with echo off")
      kill(pid, SIGCONT)
      let master = child.master
      try await withDeadline(seconds: 10, "echo off again") {
        while echoIsOn(master) { try await Task.sleep(for: .milliseconds(10)) }
      }
      child.type("after-stop\n")
      try child.waitFor("Again: ")
      child.type("after-stop\n")
      #expect(child.wait() == 0)
      #expect(!child.output.contains("after-stop"), "echoed: \(child.output.debugDescription)")
      #expect(try secretctl(instance, ["get", "tty", "stopped"]).stdoutText == "after-stop")
    }
  }
}

@Suite("The prompt and signals: the terminal is put back whatever ends or stops secretctl")
struct PromptSignalTests {
  /// Every signal a process can catch whose default action ends it, SIGQUIT's Ctrl-\ and the
  /// real-time ones (SIGRTMIN and SIGRTMAX as glibc numbers them) among them.
  static let endingSignals: [Int32] = [
    SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM,
    SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS, 34, 64,
  ]

  /// secretctl at its prompt, on a terminal of its own, without a bus (the prompt comes first).
  static func prompt() throws -> PseudoTerminalChild {
    try PseudoTerminalChild(
      try secretctlPath(), ["set", "tty", "signalled"], environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"])
  }

  @Test(
    "a signal that ends secretctl at the prompt leaves the terminal's echo on, and secretctl ends of that signal",
    arguments: endingSignals)
  func aSignalThatEndsThePromptPutsTheTerminalBack(signal: Int32) throws {
    let child = try Self.prompt()
    try child.waitFor("Secret for service \"tty\", account \"signalled\": ")
    #expect(!echoIsOn(child.master), "echo is off while the prompt waits")
    kill(child.pid, signal)
    #expect(child.wait() == 128 + signal, "ended by the signal itself")
    #expect(echoIsOn(child.master), "signal \(signal) left echo off")
  }

  @Test(
    "SIGTTIN or SIGTTOU at the prompt stops secretctl with echo on; continued in the foreground it turns echo off again",
    arguments: [SIGTTIN, SIGTTOU])
  func aStopSignalAtThePromptPutsTheTerminalBackUntilContinued(signal: Int32) async throws {
    let child = try PseudoTerminalChild(
      "/usr/bin/python3", ["-c", TerminalTests.jobControl, try secretctlPath(), "set", "tty", "stopped"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"])
    try child.waitFor("Secret for service \"tty\", account \"stopped\": ")
    let pid = try #require(jobPID(in: child.output))
    #expect(!echoIsOn(child.master))
    kill(pid, signal)
    try await withDeadline(seconds: 10, "secretctl stopped") {
      while !isStopped(pid) { try await Task.sleep(for: .milliseconds(10)) }
    }
    #expect(echoIsOn(child.master), "stopped by signal \(signal) with echo off")
    kill(pid, SIGCONT)
    let master = child.master
    try await withDeadline(seconds: 10, "echo off again") {
      while echoIsOn(master) { try await Task.sleep(for: .milliseconds(10)) }
    }
    kill(pid, SIGTERM)
    _ = child.wait()
    #expect(echoIsOn(child.master))
  }

  /// A shell with job control: runs the job in the foreground, and when it stops takes the
  /// terminal back (as a shell does after Ctrl-Z) and prints `stopped N by SIGNAL`.
  static let shell = """
    import os, signal, sys
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    started_r, started_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(started_w)
        os.read(started_r, 1)
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpgrp())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execv(sys.argv[1], sys.argv[1:])
    print("job %d" % pid, flush=True)
    os.write(started_w, b"x")
    stops = 0
    while True:
        _, status = os.waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            sys.exit(os.waitstatus_to_exitcode(status))
        os.tcsetpgrp(0, os.getpgrp())
        stops += 1
        print("stopped %d by %d" % (stops, os.WSTOPSIG(status)), flush=True)
    """

  @Test("Ctrl-Z then bg: continued in the background, secretctl never turns echo off under the shell")
  func continuedInTheBackgroundTheTerminalStaysAsTheShellHasIt() throws {
    let child = try PseudoTerminalChild(
      "/usr/bin/python3", ["-c", Self.shell, try secretctlPath(), "set", "tty", "background"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"])
    try child.waitFor("Secret for service \"tty\", account \"background\": ")
    let pid = try #require(jobPID(in: child.output))
    #expect(!echoIsOn(child.master))
    kill(pid, SIGTSTP)
    try child.waitFor("stopped 1 by \(SIGTSTP)")
    #expect(echoIsOn(child.master))
    // `bg`: continued without the terminal; its read of the terminal stops it with SIGTTIN.
    kill(pid, SIGCONT)
    try child.waitFor("stopped 2 by \(SIGTTIN)")
    #expect(echoIsOn(child.master), "continued in the background, secretctl turned echo off under the shell")
    kill(pid, SIGKILL)
    _ = child.wait()
  }
}

/// The job's process id from the `job PID` line the job-control wrappers print.
private func jobPID(in output: String) -> Int32? {
  output.split(whereSeparator: \.isNewline).first { $0.hasPrefix("job ") }.flatMap { Int32($0.dropFirst(4)) }
}

/// Whether the terminal behind a pseudo-terminal's master echoes (its settings are the slave's).
private func echoIsOn(_ master: Int32) -> Bool {
  var settings = termios()
  return tcgetattr(master, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
}

/// Whether a process is stopped (state T in /proc/PID/stat).
private func isStopped(_ pid: Int32) -> Bool {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = stat.lastIndex(of: ")")
  else { return false }
  return stat[close...].dropFirst(2).first == "T"
}
