// `secretctl get` against `secret-tool lookup` for the same item: the time from starting the
// process to its exit, as a script calling either would see it. Runs interleaved (one of each
// at a time) against a provider started on a private bus, and prints mean ms and the ratio.
//
// `secretctl --version` is timed too: the floor any secretctl command pays before its first D-Bus call.
//
// Usage: SecretctlBenchmark [RUNS] [PROVIDER...]   (default: 50 runs, every provider of the harness)
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
  let child = try ChildProcess(executable, arguments, environment: environment, stdin: null, stdout: output.write, stderr: null)
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

func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let secretctl = try builtExecutable("secretctl")
let secretTool = try resolveExecutable("secret-tool")
print("secretctl get vs secret-tool lookup, \(runs) runs each, interleaved, process start to exit")
for provider in providers {
  do {
    try await withProvider(provider) { instance in
      try await instance.client().write(SecretValue("benchmark-secret"), service: "bench", account: "cli")
      let environment = instance.environment
      var ours: [Double] = []
      var theirs: [Double] = []
      var startup: [Double] = []
      // One warm-up each, so that page cache and the provider's first-call costs are not measured.
      _ = try timeRun(secretctl, ["get", "bench", "cli"], environment: environment, expect: "benchmark-secret")
      _ = try timeRun(secretTool, ["lookup", "service", "bench", "account", "cli"], environment: environment, expect: "benchmark-secret")
      for _ in 0..<runs {
        ours.append(try timeRun(secretctl, ["get", "bench", "cli"], environment: environment, expect: "benchmark-secret"))
        theirs.append(try timeRun(secretTool, ["lookup", "service", "bench", "account", "cli"], environment: environment, expect: "benchmark-secret"))
        startup.append(try timeRun(secretctl, ["--version"], environment: environment, expect: "secretctl \(secretctlVersion)\n"))
      }
      let line = { (name: String, values: [Double]) in
        name.padding(toLength: 22, withPad: " ", startingAt: 0)
          + String(format: "mean %7.2f ms   median %7.2f ms", mean(values), median(values))
      }
      print("\(provider):")
      print("  " + line("secretctl get", ours))
      print("  " + line("secret-tool lookup", theirs))
      print("  " + line("secretctl --version", startup) + "   (process start alone: runtime and libraries, no D-Bus)")
      print(String(format: "  ratio secretctl / secret-tool: %.2f (mean), %.2f (median)", mean(ours) / mean(theirs), median(ours) / median(theirs)))
    }
  } catch {
    print("\(provider): skipped: \(error)")
  }
}
