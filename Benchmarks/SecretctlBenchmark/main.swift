// `secretctl get` against `secret-tool lookup` for the same item: the time from starting the
// process to its exit, as a script calling either would see it. Runs interleaved (one of each
// at a time, which goes first alternating) against a provider started on a private bus, and
// prints medians with interquartile ranges and the ratio run by run.
//
// `secretctl --version` is timed too: the floor any secretctl command pays before its first D-Bus call.
//
// Usage: SecretctlBenchmark [RUNS] [PROVIDER...]   (default: 50 runs, every provider of the harness)
import BenchmarkSupport
import Foundation
import SecretCLI
import SecretClient
import SecretTestSupport

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap { Int($0) } ?? 50
let named = arguments.compactMap { Provider(rawValue: $0) }
let providers = named.isEmpty ? Provider.all : named

/// Starts a program with stdin and stderr on /dev/null and stdout into a pipe that is drained,
/// and returns the wall time until it has exited, in milliseconds.
func timeRun(_ executable: URL, _ arguments: [String], environment: [String: String], expect: String) throws -> Double {
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  defer { close(null) }
  let output = try ChildProcess.makePipe()
  let start = ContinuousClock.now
  let child = try ChildProcess(
    executable, arguments, environment: environment, stdin: null, stdout: output.write, stderr: null)
  close(output.write)
  let reader = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
  let printed = reader.readDataToEndOfFile()
  let status = child.wait()
  let elapsed = ContinuousClock.now - start
  guard status == 0, String(decoding: printed, as: UTF8.self) == expect else {
    throw HarnessError("\(executable.lastPathComponent) failed (status \(status))")
  }
  let (seconds, attoseconds) = elapsed.components
  return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
}

let secretctl = try builtExecutable("secretctl")
let secretTool = try resolveExecutable("secret-tool")
print("secretctl get vs secret-tool lookup, \(runs) runs each, interleaved, process start to exit")
for provider in providers {
  do {
    try await withProvider(provider) { instance in
      try await instance.client().write(SecretValue("benchmark-secret"), service: "bench", account: "cli")
      let environment = instance.environment
      let get = {
        try timeRun(secretctl, ["get", "bench", "cli"], environment: environment, expect: "benchmark-secret")
      }
      let lookup = {
        try timeRun(
          secretTool, ["lookup", "service", "bench", "account", "cli"], environment: environment,
          expect: "benchmark-secret")
      }
      var (ours, theirs, startup) = (Samples(), Samples(), Samples())
      // One warm-up each, so that page cache and the provider's first-call costs are not measured.
      _ = try get()
      _ = try lookup()
      for run in 0..<runs {
        if run.isMultiple(of: 2) {
          ours.append(try get())
          theirs.append(try lookup())
        } else {
          theirs.append(try lookup())
          ours.append(try get())
        }
        startup.append(
          try timeRun(secretctl, ["--version"], environment: environment, expect: "secretctl \(secretctlVersion)\n"))
      }
      print("\(provider):")
      print("  secretctl get         \(ours.formatted(2)) ms")
      print("  secret-tool lookup    \(theirs.formatted(2)) ms")
      print(
        "  secretctl --version   \(startup.formatted(2)) ms   (process start alone: runtime and libraries, no D-Bus)")
      print("  ratio secretctl / secret-tool, run by run: \(Samples.ratios(ours, theirs).formatted(2))")
    }
  } catch {
    print("\(provider): skipped: \(error)")
  }
}
