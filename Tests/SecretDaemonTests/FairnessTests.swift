// One client cannot starve the others: a flood of calls waits in its own client's queue, and
// another client's call is answered in between.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("fair to every client")
struct FairnessTests {
  @Test("a client's call is answered before the calls another client flooded in ahead of it")
  func floodDoesNotQueueOthersBehindIt() async throws {
    try await withProvider(.secretd) { instance in
      let honest = try RawClient(address: instance.busAddress)
      let session = try honest.openPlainSession()
      for index in 0..<2_000 {
        try honest.createPlainItem(session: session, attributes: ["n": "\(index)"], secret: [1], replace: false)
      }
      // The flooder sends 300 searches of every item and then a write, all without waiting. A
      // daemon that answers calls in the order they arrive makes that write before it answers
      // anything sent later.
      let flooder = try RawClient(address: instance.busAddress)
      let flooderSession = try flooder.openPlainSession()
      for _ in 0..<300 {
        flooder.connection.sendWithoutReply(
          destination: "org.freedesktop.secrets", path: ObjectPaths.root, interface: Interfaces.service,
          method: "SearchItems",
          arguments: .tuple([.stringDictionary([:])]))
      }
      flooder.connection.sendWithoutReply(
        destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets/aliases/default",
        interface: Interfaces.collection,
        method: "CreateItem",
        arguments: .tuple([
          RawClient.itemProperties(label: "marker", attributes: ["flood": "done"]),
          .tuple([.objectPath(flooderSession), .bytes([]), .bytes([1]), .string("text/plain")]), .boolean(true),
        ]))
      flooder.connection.flush()
      // Sent after the whole flood, answered before the flood's write.
      #expect(try honest.search(["flood": "done"]).isEmpty)
      // Positive control: the flood was taken and runs to its end.
      try await eventually("the flood's write", seconds: 60) { try !honest.search(["flood": "done"]).isEmpty }
    }
  }
}
