// Signals as a served client hears them, and what a refused client hears: nothing.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("signals")
struct SignalTests {
  @Test("PropertiesChanged: a relabelled item announces its new label, a new item invalidates its collection's Items")
  func propertiesChanged() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let listener = try await SignalListener(in: instance.bus.directory, environment: instance.environment)
      #expect(listener.wasServed)
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      let item = try client.createPlainItem(session: session, attributes: ["relabel": "me"], secret: [2])
      try client.call(
        item, Interfaces.properties, "Set",
        .tuple([.string(Interfaces.item), .string("Label"), .variant(.string("renamed"))]))
      let heard = try await listener.heard(waitingFor: "renamed")
      let collection = ObjectPaths.collection("session")
      #expect(heard.contains("\(collection) \(Interfaces.collection).ItemCreated ('\(item)',)"), "\(heard)")
      #expect(
        heard.contains {
          $0.hasPrefix("\(item) \(Interfaces.properties).PropertiesChanged") && $0.contains("'renamed'")
        },
        "\(heard)")
      #expect(
        heard.contains(
          "\(collection) \(Interfaces.properties).PropertiesChanged ('\(Interfaces.collection)', {}, ['Items'])"),
        "\(heard)")
    }
  }

  @Test(
    "introspection declares every signal secretd sends under the interface it is sent on, with its arguments"
  )
  func introspectionDeclaresSentSignals() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let client = try RawClient(address: instance.busAddress)
      func introspect(_ path: String) throws -> String {
        try client.call(path, Interfaces.introspectable, "Introspect", .tuple([])).child(0)?.string ?? ""
      }
      let objects = [
        Interfaces.service: ObjectPaths.root, Interfaces.collection: ObjectPaths.collection("session"),
        Interfaces.prompt: ObjectPaths.prompt(1), Interfaces.properties: ObjectPaths.root,
      ]
      for signal in BusSignal.allCases {
        let xml = try introspect(try #require(objects[signal.interface]))
        let interface = xml.components(separatedBy: "<interface name=\"\(signal.interface)\">").dropFirst().first
        let declared = interface?.components(separatedBy: "</interface>").first ?? ""
        let arguments = signal.arguments.map { "<arg type=\"\($0.type)\" name=\"\($0.name)\"/>" }
        #expect(declared.contains("<signal name=\"\(signal.name)\">"), "\(signal.name) in \(xml)")
        #expect(arguments.allSatisfy(declared.contains), "\(signal.name)'s arguments in \(xml)")
      }
      // The control: a signal no interface has is not found by the same reading.
      #expect(!(try introspect(ObjectPaths.root)).contains("<signal name=\"ItemCreated\">"))
    }
  }

  @Test("unlocking the persistent collection announces its items in one Items change, locking it the empty list")
  func unlockAnnouncesItemsAtOnce() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { (instance) async throws in
      let secretctl = try builtExecutable("secretctl").path
      #expect(try instance.run(secretctl, ["unlock", "--password-stdin"], input: Array("p".utf8)).status == 0)
      for name in ["first", "second", "third"] {
        #expect(try instance.run(secretctl, ["set", name], input: Array("secret".utf8)).status == 0)
      }
      let listener = try await SignalListener(in: instance.bus.directory, environment: instance.environment)
      #expect(try instance.run(secretctl, ["lock"]).status == 0)
      #expect(try instance.run(secretctl, ["unlock", "--password-stdin"], input: Array("p".utf8)).status == 0)
      let login = ObjectPaths.collection("login")
      let heard = try await listener.heard(waitingFor: "'\(login)/3'")
      let items = heard.filter {
        $0.hasPrefix("\(login) \(Interfaces.properties).PropertiesChanged") && $0.contains("'Items'")
      }
      #expect(items.count == 2, "\(heard)")
      #expect(items.first?.contains("'Items': ('ao', [])") == true, "locked: none, \(items)")
      #expect(items.last.map { line in (1...3).allSatisfy { line.contains("'\(login)/\($0)'") } } == true, "\(items)")
      #expect(!heard.contains { $0.contains("ItemCreated") || $0.contains("ItemDeleted") }, "\(heard)")
    }
  }

  @Test(
    "a refused user's client that subscribes hears no signal, while a served one hears the label and attributes",
    .needsRoot("running a client as another user needs root"))
  func refusedUserHearsNothing() async throws {
    let daemon = try StandaloneSecretd()
    // The client's bus: the private bus the harness started for this secretd.
    let environment = [
      "DBUS_SESSION_BUS_ADDRESS": daemon.bus.address, "PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
    ]
    let nobody = StandaloneSecretd.nobody
    let refused = try await SignalListener(
      in: daemon.folder, prefix: ["setpriv", "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"],
      environment: environment)
    let served = try await SignalListener(in: daemon.folder, environment: environment)
    #expect(!refused.wasServed && served.wasServed)
    // Stored, then changed: the change announces the item's label and attributes.
    for secret in ["hunter2", "hunter3"] {
      let store = ["store", "--label=bank login alice", "service", "bank.example", "account", "alice"]
      #expect(try daemon.run("secret-tool", store, input: secret).status == 0)
    }
    let heardByServed = try await served.heard(waitingFor: "bank.example")
    #expect(heardByServed.contains { $0.contains("bank login alice") && $0.contains("'account': 'alice'") })
    // Whatever secretd sent the refused client before the served one heard this, it has by now.
    let heardByRefused = try await refused.heard()
    #expect(heardByRefused.isEmpty, "\(heardByRefused)")
  }
}
