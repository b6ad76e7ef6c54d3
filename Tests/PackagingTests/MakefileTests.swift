// What the Makefile promises a new user: `make build` installs nothing, `make run` fetches
// nothing only tests need, and `make test` ends by saying which tests it skipped and why.
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("the Makefile")
struct MakefileTests {
  /// The commands `make TARGET` would run, without running them (`make -n`).
  static func plan(_ target: String) throws -> String {
    let make = try runProcess("make", ["-n", "-B", target], environment: environmentWithoutBus, in: packageRoot)
    #expect(make.status == 0, "\(make.stderrText)")
    return make.stdoutText
  }

  @Test("make build checks for missing packages but installs none")
  func buildInstallsNothing() throws {
    let plan = try Self.plan("build")
    #expect(plan.contains("scripts/bootstrap --check build"))
    #expect(plan.contains("--build-tests"))
    #expect(
      !plan.contains("apt-get") && !plan.contains("scripts/bootstrap build") && !plan.contains("scripts/bootstrap test")
    )
  }

  @Test("make run installs what building and serving need and fetches nothing only tests use")
  func runFetchesNothingForTests() throws {
    let plan = try Self.plan("run")
    #expect(plan.contains("scripts/bootstrap run"), "\(plan)")
    #expect(plan.contains("scripts/run"))
    #expect(!plan.contains("scripts/bootstrap test") && !plan.contains("--build-tests"), "\(plan)")
    // What `bootstrap run` installs leaves out the tests' peers, clients and downloads.
    let script = try String(contentsOf: packageRoot.appending(path: "scripts/bootstrap"), encoding: .utf8)
    let forRun = script.components(separatedBy: "run_packages=(")[1].components(separatedBy: ")")[0]
    #expect(forRun.contains("dbus-daemon") && !forRun.contains("gnome-keyring") && !forRun.contains("pip"))
  }

  @Test(
    "the root-only tweak is make system-limits, which make test asks for only as root; build, check and run write nothing under /proc/sys"
  )
  func rootTweaksAreExplicit() throws {
    for target in ["build", "check", "run"] { #expect(!(try Self.plan(target)).contains("/proc/sys"), "\(target)") }
    let makefile = try String(contentsOf: packageRoot.appending(path: "Makefile"), encoding: .utf8)
    let test = makefile.components(separatedBy: "\ntest: ")[1].components(separatedBy: "\n\n")[0]
    #expect(test.contains(#"if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory system-limits; fi"#), "\(test)")
    #expect(try Self.plan("system-limits").contains("max_user_instances"))
  }

  @Test("make test ends by counting the skipped and cancelled tests by reason")
  func skipSummary() throws {
    let transcript = FileManager.default.temporaryDirectory.appending(path: "transcript-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: transcript) }
    try Data(
      """
      ◇ Test run started.
      ➜ Test "reads memory" skipped: "reading another process's memory needs root"
      ➜ Test otherUser() skipped: "reading another process's memory needs root"
      ✔ Test "passes" passed after 0.001 seconds.
      ➜ Test "boots a container" was cancelled after 0.012 seconds: "this machine does not let root mount a tmpfs here"
      ✔ Test run with 4 tests in 1 suite passed after 0.020 seconds.

      """.utf8
    ).write(to: transcript)
    let summary = try runProcess(
      packageRoot.appending(path: "scripts/test").path, ["--summary", transcript.path],
      environment: environmentWithoutBus, in: packageRoot)
    #expect(
      summary.stdoutText == """
        3 tests were skipped or cancelled:
          2 × reading another process's memory needs root: "reads memory", otherUser()
          1 × this machine does not let root mount a tmpfs here: "boots a container"

        """)
    try Data("✔ Test run with 1 test in 1 suite passed after 0.001 seconds.\n".utf8).write(to: transcript)
    let none = try runProcess(
      packageRoot.appending(path: "scripts/test").path, ["--summary", transcript.path],
      environment: environmentWithoutBus, in: packageRoot)
    #expect(none.stdoutText == "no test was skipped\n")
  }
}
