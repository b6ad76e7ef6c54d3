// secretd serves one Unix user: on a bus that admits every user, another user's client gets
// AccessDenied for everything and sees nothing, while the owner's clients are served.
import Foundation
import SecretTestSupport
import Testing

@Suite("one user served")
struct CallerCheckTests {
  @Test(
    "another user's client is refused everything, even introspection, with one log line per connection; the owner is still served",
    .needsRoot("running a client as another user needs root"))
  func anotherUserIsRefused() async throws {
    let daemon = try StandaloneSecretd()
    let nobody = StandaloneSecretd.nobody
    #expect(
      try daemon.run("secret-tool", ["store", "--label=mine", "service", "mine"], input: "owner's secret").status == 0)

    let lookup = try daemon.run("secret-tool", ["lookup", "service", "mine"], as: nobody)
    #expect(lookup.status != 0 && lookup.stdout.isEmpty)
    #expect(lookup.stderrText.contains("secretd serves only the user it runs as (uid 0)"), "\(lookup.stderrText)")
    let search = try daemon.run("secret-tool", ["search", "--all", "service", "mine"], as: nobody)
    #expect(search.status != 0 && !search.stdoutText.contains("mine"), "\(search.stdoutText)")
    for (path, interface, method, arguments) in [
      ("/org/freedesktop/secrets", "org.freedesktop.DBus.Introspectable", "Introspect", [String]()),
      (
        "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "Unlock",
        ["['/org/freedesktop/secrets/collection/session']"]
      ),
      (
        "/org/freedesktop/secrets/collection/session", "org.freedesktop.DBus.Properties", "GetAll",
        ["org.freedesktop.Secret.Collection"]
      ),
    ] {
      let call = try daemon.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", path, "--method",
          "\(interface).\(method)",
        ] + arguments,
        as: nobody)
      #expect(
        call.status != 0 && call.stderrText.contains("AccessDenied"), "\(method): \(call.stdoutText) \(call.stderrText)"
      )
    }
    // The owner, after all that, still gets its secret.
    #expect(try daemon.run("secret-tool", ["lookup", "service", "mine"]).stdoutText == "owner's secret")
    let refusals = daemon.logText.split(separator: "\n").filter { $0.contains("refused connection") }
    #expect(refusals.count == 5, "one line per refused connection: \(daemon.logText)")
    #expect(refusals.allSatisfy { $0.contains("of uid 65534") }, "\(refusals)")
  }
}
