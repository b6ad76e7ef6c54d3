import Foundation
import SecretTestSupport
import Secrets
import Testing

/// One address, one item: whichever tool wrote the item for a service and an account, every
/// other tool reads it, replaces it and deletes it, and there is never a second item beside it.
/// The tools are this project's (secretctl, with and without `--ttl`, and SecretKey) and two
/// that are not (libsecret's secret-tool and python secretstorage), each against real providers.
@Suite("One address, one item, whichever tool wrote it")
struct AddressAgreementTests {
  /// Every writer with the provider that can run it: `--ttl` needs secretd.
  static let writers: [(Provider, AddressTool)] = Provider.all.flatMap { provider in
    AddressTool.allCases.filter { provider == .secretd || $0 != .secretctlWithTTL }.map { (provider, $0) }
  }

  @Test(arguments: writers)
  func anItemOneToolWroteIsReadReplacedAndDeletedByEveryOtherAndNeverDuplicated(
    provider: Provider, writer: AddressTool
  ) async throws {
    try await withSecretKeys(provider) { instance, _ in
      for other in AddressTool.others(than: writer) {
        let address = ToolAddress(service: "agree.\(writer.word).\(other.word)", account: "api")
        try await writer.write(1, at: address, on: instance)
        #expect(try await itemCount(address, on: instance) == 1, "\(writer) wrote one item")
        #expect(try await other.read(address, on: instance) == 1, "\(other) reads what \(writer) wrote")
        try await other.write(2, at: address, on: instance)
        #expect(try await itemCount(address, on: instance) == 1, "\(other) replaced \(writer)'s item, added none")
        #expect(try await writer.read(address, on: instance) == 2, "\(writer) reads \(other)'s replacement")
        try await other.delete(address, on: instance)
        #expect(try await itemCount(address, on: instance) == 0, "\(other) deleted \(writer)'s item")
        #expect(try await writer.read(address, on: instance) == nil, "\(writer) finds nothing after the delete")
      }
    }
  }

  /// The issue's own steps: `secretctl set --ttl 1h`, then a program's SecretKey reads the value
  /// and writes a new one, then `secretctl get` prints it. The expiry is the item's, not its
  /// address's: the item that remains is the one SecretKey wrote, which gave no expiry.
  @Test
  func aSecretKeyReadsAndReplacesWhatSecretctlStoredWithATimeToLive() async throws {
    try await withSecretKeys(.secretd) { instance, _ in
      let address = ToolAddress(service: "com.example.tool", account: "api")
      try await AddressTool.secretctlWithTTL.write(1, at: address, on: instance)
      let stored = try await instance.client().search(address.attributes)
      #expect(stored.count == 1 && stored.first?.attributes["xdg:expires"] != nil, "\(stored)")
      #expect(try await AddressTool.secretKey.read(address, on: instance) == 1)
      try await AddressTool.secretKey.write(2, at: address, on: instance)
      let items = try await instance.client().search(address.attributes)
      #expect(items.map(\.attributes) == [address.attributes], "one item, without the expiry")
      #expect(try await AddressTool.secretctl.read(address, on: instance) == 2)
    }
  }

  /// The other way round: `--ttl` on an item another tool wrote gives that item the expiry.
  @Test
  func secretctlWithATimeToLiveReplacesTheItemASecretKeyWroteAndGivesItTheExpiry() async throws {
    try await withSecretKeys(.secretd) { instance, _ in
      let address = ToolAddress(service: "com.example.ttl", account: "api")
      try await AddressTool.secretKey.write(1, at: address, on: instance)
      try await AddressTool.secretctlWithTTL.write(2, at: address, on: instance)
      let items = try await instance.client().search(address.attributes)
      #expect(items.count == 1, "\(items)")
      #expect(items.first?.attributes["xdg:expires"] != nil, "the item took the expiry: \(items)")
      #expect(try await AddressTool.secretKey.read(address, on: instance) == 2)
    }
  }
}

/// A service and an account, as each tool is given them.
struct ToolAddress: Sendable {
  var service: String
  var account: String
  var attributes: [String: String] { ["service": service, "account": account] }
}

/// A tool that reads, writes and deletes a secret by service and account, each in its own way.
enum AddressTool: String, CaseIterable, Sendable, CustomStringConvertible {
  case secretctl
  case secretctlWithTTL = "secretctl --ttl"
  case secretKey = "SecretKey"
  case secretTool = "secret-tool"
  case python = "python secretstorage"

  var description: String { rawValue }

  /// A service name's part for this tool.
  var word: String { rawValue.filter { $0.isLetter } }

  /// The tools that read, replace and delete what `writer` wrote: every tool, but the writer
  /// itself (secretctl without `--ttl` replaces what it wrote with one).
  static func others(than writer: AddressTool) -> [AddressTool] {
    allCases.filter { $0 != writer && $0 != .secretctlWithTTL }
  }

  func write(_ number: Int, at address: ToolAddress, on instance: ProviderInstance) async throws {
    switch self {
    case .secretctl, .secretctlWithTTL:
      let ttl = self == .secretctlWithTTL ? ["--ttl", "1h"] : []
      try expectSuccess(
        try runSecretctl(instance, ["set"] + ttl + [address.service, address.account], input: "\(number)"), "set")
    case .secretKey:
      @Shared(.secret(service: address.service, account: address.account)) var value: Int? = nil
      $value.withLock { $0 = number }
      try await $value.save()
    case .secretTool:
      try expectSuccess(
        try instance.run(
          "secret-tool", ["store", "--label=agree", "service", address.service, "account", address.account],
          input: Array("\(number)".utf8)), "store")
    case .python:
      try expectSuccess(try runPython(instance, "write", address, "\(number)"), "write")
    }
  }

  /// The number the tool reads, nil when it finds no item. A tool that finds two throws.
  func read(_ address: ToolAddress, on instance: ProviderInstance) async throws -> Int? {
    let output: ProcessOutput
    switch self {
    case .secretctl, .secretctlWithTTL:
      output = try runSecretctl(instance, ["get", address.service, address.account])
    case .secretKey:
      @Shared(.secret(service: address.service, account: address.account)) var value: Int? = nil
      try await $value.load()
      return value
    case .secretTool:
      output = try instance.run("secret-tool", ["lookup", "service", address.service, "account", address.account])
    case .python:
      output = try runPython(instance, "read", address)
    }
    if output.status == 1 && output.stdout.isEmpty { return nil }
    try expectSuccess(output, "read")
    let lines = output.stdoutText.split(separator: "\n")
    guard lines.count == 1, let number = Int(lines[0]) else {
      throw HarnessError("\(self) read \(lines.count) items or no number: \(output.stdoutText)")
    }
    return number
  }

  func delete(_ address: ToolAddress, on instance: ProviderInstance) async throws {
    switch self {
    case .secretctl, .secretctlWithTTL:
      try expectSuccess(try runSecretctl(instance, ["delete", address.service, address.account]), "delete")
    case .secretKey:
      @Shared(.secret(service: address.service, account: address.account)) var value: Int? = nil
      try await $value.load()
      $value.withLock { $0 = nil }
      try await $value.save()
    case .secretTool:
      try expectSuccess(
        try instance.run("secret-tool", ["clear", "service", address.service, "account", address.account]), "clear")
    case .python:
      try expectSuccess(try runPython(instance, "delete", address), "delete")
    }
  }

  private func expectSuccess(_ output: ProcessOutput, _ what: String) throws {
    guard output.status == 0 else {
      throw HarnessError("\(self) \(what) exited \(output.status): \(output.stderrText)")
    }
  }
}

/// How many items of any collection carry the address's attributes (and perhaps more).
func itemCount(_ address: ToolAddress, on instance: ProviderInstance) async throws -> Int {
  try await instance.client().search(address.attributes).count
}

/// Runs the built `secretctl` against `instance`.
func runSecretctl(_ instance: ProviderInstance, _ arguments: [String], input: String? = nil) throws -> ProcessOutput {
  try instance.run(try builtExecutable("secretctl").path, arguments, input: input.map { Array($0.utf8) })
}

/// Runs Debian's python secretstorage as a plain program would: the default collection, items
/// searched by their attributes, created with `replace=True`. `read` prints every item found,
/// one per line, and exits 1 when there is none.
func runPython(_ instance: ProviderInstance, _ action: String, _ address: ToolAddress, _ secret: String = "")
  throws -> ProcessOutput
{
  let script = """
    import sys, secretstorage
    action, service, account, secret = sys.argv[1:]
    connection = secretstorage.dbus_init()
    collection = secretstorage.get_default_collection(connection)
    attributes = {"service": service, "account": account}
    if action == "write":
        collection.create_item("agree", attributes, secret.encode(), replace=True)
        sys.exit(0)
    found = list(collection.search_items(attributes))
    if action == "read":
        for item in found:
            print(item.get_secret().decode())
        sys.exit(0 if found else 1)
    for item in found:
        item.delete()
    """
  return try instance.run("/usr/bin/python3", ["-c", script, action, address.service, address.account, secret])
}
