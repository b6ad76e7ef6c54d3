// `secretctl get` against `secret-tool lookup` for the same item: the time from starting the
// process to its exit, as a script calling either would see it. Runs interleaved (one of each
// at a time, which goes first alternating) against a provider started on a private bus, and
// prints medians with interquartile ranges and the ratio run by run.
//
// `secretctl --version` is timed too: the floor any secretctl command pays before its first D-Bus call.
// So is `lookup-floor` (Benchmarks/LookupFloor): only the calls and the key agreement a lookup
// needs, in Swift on GIO's D-Bus with a DH session, the least secretctl's design allows. These
// two run once per run, after the pair, and are compared with that run's secret-tool time.
// So is `secretctl git-credential get` against git's own libsecret helper (built by
// scripts/bootstrap), for the same credential: what git runs on every fetch and push.
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

/// Starts a program with stdin from `input` (a pipe already holding it; /dev/null without),
/// stderr on /dev/null and stdout into a pipe that is drained, and returns the wall time until
/// it has exited, in milliseconds.
func timeRun(
  _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String], expect: String
) throws -> Double {
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  defer { close(null) }
  var stdin = null
  if let input {
    let pipe = try ChildProcess.makePipe()
    _ = input.utf8CString.withUnsafeBytes { write(pipe.write, $0.baseAddress, $0.count - 1) }
    close(pipe.write)
    stdin = pipe.read
  }
  defer { if stdin != null { close(stdin) } }
  let output = try ChildProcess.makePipe()
  let start = ContinuousClock.now
  let child = try ChildProcess(
    executable, arguments, environment: environment, stdin: stdin, stdout: output.write, stderr: null)
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
let lookupFloor = try builtExecutable("lookup-floor")

/// git's libsecret helper, which scripts/bootstrap builds into the build folder.
func gitHelper() throws -> URL {
  var folder = secretctl.deletingLastPathComponent()
  while folder.path != "/", folder.lastPathComponent != ".build" { folder = folder.deletingLastPathComponent() }
  let helper = folder.appending(path: "git-credential-libsecret")
  guard FileManager.default.isExecutableFile(atPath: helper.path) else {
    throw HarnessError("git-credential-libsecret is not built; run scripts/bootstrap")
  }
  return helper
}
let gitCredentialHelper = try gitHelper()
let query = "protocol=https\nhost=example.com\nusername=alice\n\n"
let credential = "username=alice\npassword=benchmark-secret\n"
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
      _ = try timeRun(
        secretctl, ["git-credential", "store"], input: query.dropLast() + "password=benchmark-secret\n\n",
        environment: environment, expect: "")
      let ourHelper = {
        try timeRun(secretctl, ["git-credential", "get"], input: query, environment: environment, expect: credential)
      }
      let gitsHelper = {
        try timeRun(gitCredentialHelper, ["get"], input: query, environment: environment, expect: credential)
      }
      let floor = {
        try timeRun(lookupFloor, ["bench", "cli"], environment: environment, expect: "benchmark-secret")
      }
      var (ours, theirs, startup, floors) = (Samples(), Samples(), Samples(), Samples())
      var (ourGit, theirGit) = (Samples(), Samples())
      // One warm-up each, so that page cache and the provider's first-call costs are not measured.
      for warmUp in [get, lookup, floor, ourHelper, gitsHelper] { _ = try warmUp() }
      for run in 0..<runs {
        // Which side goes first alternates run by run.
        func pair(_ mine: () throws -> Double, _ peer: () throws -> Double) throws -> (Double, Double) {
          if run.isMultiple(of: 2) {
            let first = try mine()
            return (first, try peer())
          }
          let first = try peer()
          return (try mine(), first)
        }
        let (get, lookup) = try pair(get, lookup)
        ours.append(get)
        theirs.append(lookup)
        startup.append(
          try timeRun(secretctl, ["--version"], environment: environment, expect: "secretctl \(secretctlVersion)\n"))
        floors.append(try floor())
        let (ourTime, gitsTime) = try pair(ourHelper, gitsHelper)
        ourGit.append(ourTime)
        theirGit.append(gitsTime)
      }
      print("\(provider):")
      print("  secretctl get         \(ours.formatted(2)) ms")
      print("  secret-tool lookup    \(theirs.formatted(2)) ms")
      print(
        "  secretctl --version   \(startup.formatted(2)) ms   (process start alone: runtime and libraries, no D-Bus)")
      print("  ratio secretctl / secret-tool, run by run: \(Samples.ratios(ours, theirs).formatted(2))")
      print("  lookup-floor          \(floors.formatted(2)) ms   (only the calls and the DH agreement a lookup needs)")
      print("  ratio lookup-floor / secret-tool, run by run: \(Samples.ratios(floors, theirs).formatted(2))")
      print("  secretctl git-credential get   \(ourGit.formatted(2)) ms")
      print("  git-credential-libsecret get   \(theirGit.formatted(2)) ms")
      print("  ratio secretctl / git's helper, run by run: \(Samples.ratios(ourGit, theirGit).formatted(2))")
    }
  } catch {
    print("\(provider): skipped: \(error)")
  }
}
