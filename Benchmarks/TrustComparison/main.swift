// What a careless or hostile client can do to a provider: secretd and gnome-keyring, each on a
// private bus, put through the same checks (the tests hold secretd to them; this prints the
// side by side for the README). Some checks need root: they say so when skipped.
//
// - takeover: a client's RequestName(org.freedesktop.secrets, REPLACE_EXISTING);
// - 70 MiB: GetSecrets over 70 items of 1 MiB, in one call;
// - secretstorage: python secretstorage reading 2,000 items in one connection (a session each);
// - another user: a client of uid 65534 on a bus that admits every user;
// - plain copies: a secret stored, read and deleted over a `plain` session, then searched for
//   in the provider's memory.
import Foundation
import SecretTestSupport

/// Raw calls over jeepney, with Debian's python (which has python3-jeepney).
let python = "/usr/bin/python3"
let jeepneyChecks = #"""
  import sys, os
  from jeepney import DBusAddress, new_method_call, MessageType
  from jeepney.io.blocking import open_dbus_connection
  connection = open_dbus_connection('SESSION')
  service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Service')
  bus = DBusAddress('/org/freedesktop/DBus', bus_name='org.freedesktop.DBus', interface='org.freedesktop.DBus')
  collection = DBusAddress('/org/freedesktop/secrets/aliases/session', bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Collection')

  def call(address, method, signature=None, *arguments):
      reply = connection.send_and_get_reply(new_method_call(address, method, signature, arguments), timeout=60)
      if reply.header.message_type == MessageType.error:
          raise RuntimeError(reply.header.fields.get(4, 'error'))
      return reply.body

  def create(session, attributes, secret):
      properties = {'org.freedesktop.Secret.Item.Label': ('s', 'check'),
                    'org.freedesktop.Secret.Item.Attributes': ('a{ss}', attributes)}
      return call(collection, 'CreateItem', 'a{sv}(oayays)b', properties, (session, b'', secret, 'text/plain'), True)[0]

  check = sys.argv[1]
  if check == 'takeover':
      print(call(bus, 'RequestName', 'su', 'org.freedesktop.secrets', 6)[0])
  elif check == 'big':
      session = call(service, 'OpenSession', 'sv', 'plain', ('s', ''))[1]
      paths = [create(session, {'big': str(n)}, bytes([n]) * (1 << 20)) for n in range(70)]
      try:
          answer = call(service, 'GetSecrets', 'aoo', paths, session)[0]
          print('answered with %d secrets' % len(answer))
      except RuntimeError as error:
          print('refused with ' + str(error).split('.')[-1])
      except Exception as error:
          print('connection lost (%s)' % type(error).__name__)
  elif check == 'plain':
      session = call(service, 'OpenSession', 'sv', 'plain', ('s', ''))[1]
      secret = sys.stdin.read().encode()
      item = create(session, {'plain': 'check'}, secret)
      assert call(DBusAddress(item, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Item'), 'GetSecret', 'o', session)[0][2] == secret
      call(DBusAddress(item, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Item'), 'Delete')
      call(service, 'SearchItems', 'a{ss}', {'plain': 'check'})
      print('deleted')
  """#

let secretstorageReads = #"""
  import secretstorage
  connection = secretstorage.dbus_init()
  read = sum(1 for item in secretstorage.get_default_collection(connection).search_items({'bulk': 'yes'}) if item.get_secret())
  print(read)
  """#

struct Row {
  var check: String
  var outcome: [Provider: String] = [:]
}

func runPython(
  _ instance: ProviderInstance, _ script: String, _ arguments: [String], input: String? = nil,
  path: String? = nil
) throws -> ProcessOutput {
  var environment = instance.environment
  if let path { environment["PYTHONPATH"] = path }
  return try runProcess(
    "timeout", ["600", python, "-c", script] + arguments, input: input.map { Array($0.utf8) }, environment: environment,
    in: instance.bus.directory)
}

func alive(_ instance: ProviderInstance) -> String { isRunning(instance.pid) ? "" : "; the provider died" }

func takeover(_ provider: Provider) async throws -> String {
  try await withProvider(provider) { instance in
    _ = try instance.run("secret-tool", ["store", "--label=t", "check", "takeover"], input: Array("x".utf8))
    let answer = try runPython(instance, jeepneyChecks, ["takeover"]).stdoutText.trimmingCharacters(
      in: .whitespacesAndNewlines)
    let kept = try instance.run("secret-tool", ["lookup", "check", "takeover"]).stdoutText == "x"
    return (answer == "3" ? "refused (EXISTS)" : "name taken (\(answer))") + (kept ? ", items kept" : ", items lost")
      + alive(instance)
  }
}

func bigAnswer(_ provider: Provider) async throws -> String {
  try await withProvider(provider, arguments: ["--max-memory", "128M", "--allow-unlocked-memory"]) { instance in
    _ = try instance.run("secret-tool", ["store", "--label=m", "check", "marker"], input: Array("x".utf8))
    let run = try runPython(instance, jeepneyChecks, ["big"])
    let outcome = run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    let kept = try instance.run("secret-tool", ["lookup", "check", "marker"]).stdoutText == "x"
    return (outcome.isEmpty ? "failed: \(run.stderrText.suffix(120))" : outcome)
      + (kept ? ", still serving its items" : ", then lost its items (no longer answers)") + alive(instance)
  }
}

func secretstorage(_ provider: Provider, sdist: URL) async throws -> String {
  try await withProvider(provider) { instance in
    let unpack = try instance.run("tar", ["-xzf", sdist.path, "-C", instance.bus.directory.path])
    guard unpack.status == 0 else { return "not run: \(unpack.stderrText)" }
    for index in 0..<2_000 {
      _ = try instance.run(
        "secret-tool", ["store", "--label=b", "bulk", "yes", "n", "\(index)"], input: Array("v\(index)".utf8))
    }
    let run = try runPython(
      instance, secretstorageReads, [], path: instance.bus.directory.appending(path: "secretstorage-3.5.0").path)
    let read = run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    return read == "2000"
      ? "read all 2,000" : "failed after \(read.isEmpty ? "?" : read): \(run.stderrText.suffix(100))"
  }
}

func anotherUser(_ provider: Provider) async throws -> String {
  guard getuid() == 0 else { return "not run (needs root)" }
  return try await withProvider(provider, everyUser: true) { instance in
    _ = try instance.run("secret-tool", ["store", "--label=o", "owner", "only"], input: Array("owner's".utf8))
    var environment = instance.environment
    environment["HOME"] = "/tmp"
    let read = try runProcess(
      "setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "secret-tool", "lookup", "owner", "only"],
      environment: environment, in: URL(filePath: "/tmp"))
    return read.stdoutText == "owner's" ? "uid 65534 read the secret" : "uid 65534 refused"
  }
}

func plainCopies(_ provider: Provider) async throws -> String {
  guard getuid() == 0 else { return "not run (needs root to read the provider's memory)" }
  return try await withProvider(provider) { instance in
    let secret = "plain-check-" + UUID().uuidString
    let run = try runPython(instance, jeepneyChecks, ["plain"], input: secret)
    guard run.stdoutText.contains("deleted") else { return "failed: \(run.stderrText.suffix(100))" }
    return try processMemoryContains(pid: instance.pid, Array(secret.utf8))
      ? "the deleted secret is still in its memory" : "nothing left in its memory"
  }
}

let sdist = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  .appending(path: ".build/pypi/secretstorage-3.5.0.tar.gz")
print("What a client can do to a provider: secretd and gnome-keyring through the same checks")
var rows: [Row] = []
let checks: [(String, (Provider) async throws -> String)] = [
  ("a client's RequestName(REPLACE_EXISTING)", takeover),
  ("GetSecrets of 70 items of 1 MiB in one call", bigAnswer),
  ("python secretstorage reads 2,000 items in one connection", { try await secretstorage($0, sdist: sdist) }),
  ("a client of another user (uid 65534) on a shared bus", anotherUser),
  ("store, read, delete over a plain session; then search memory", plainCopies),
]
for (name, check) in checks {
  var row = Row(check: name)
  for provider in Provider.all {
    row.outcome[provider] = (try? await check(provider)) ?? "the check could not run"
  }
  rows.append(row)
}
print("")
print("| check | secretd | gnome-keyring |")
print("|---|---|---|")
for row in rows {
  print("| \(row.check) | \(row.outcome[.secretd] ?? "") | \(row.outcome[.gnomeKeyring] ?? "") |")
}
