// Calls are answered on GDBus's worker thread while bus signals, introspection and the expiry
// timer run on the main context: both at once must neither race nor lose anything.
import Foundation
import SecretTestSupport
import Synchronization
import Testing

@testable import SecretDaemon

@Suite("worker thread and main context")
struct ThreadingTests {
  static let rounds = 800

  @Test("4 clients store and read while the expiry timer deletes items under them")
  func expiryDuringCalls() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let address = instance.busAddress
      let failures = Mutex<[String]>([])
      // Every expiring item must go with an ItemDeleted signal sent by the timer.
      let changes = try await instance.client().changes(in: .default)
      let expiring = 4 * Self.rounds
      let deletions = Task {
        var count = 0
        for await change in changes where change.kind == .deleted {
          count += 1
          if count == expiring { break }
        }
        return count
      }
      try await onOwnThread {
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
          do {
            let client = try RawClient(address: address)
            let session = try client.openPlainSession()
            // Several seconds of calls on 2 cores, with items expiring every second of it.
            for index in 0..<Self.rounds {
              let expires = String(UInt64(Date().timeIntervalSince1970) + 1)
              let path = try client.createPlainItem(
                session: session, attributes: ["writer": "\(writer)", "index": "\(index)", "expires-at": expires],
                secret: Array("w\(writer)-\(index)".utf8), replace: false)
              try client.createPlainItem(
                session: session, attributes: ["writer": "\(writer)", "keep": "\(index)"],
                secret: Array("keep\(writer)-\(index)".utf8), replace: false)
              // The expiring item may already be gone (no object at its path); anything else fails.
              if let name = client.errorName(path, Interfaces.item, "GetSecret", .tuple([.objectPath(session)])),
                name != "org.freedesktop.DBus.Error.UnknownMethod"
              {
                failures.withLock { $0.append("writer \(writer) item \(index): \(name)") }
              }
            }
          } catch {
            failures.withLock { $0.append("writer \(writer): \(error)") }
          }
        }
      }
      #expect(failures.withLock { $0 }.isEmpty)
      let deleted = try await withDeadline(seconds: 20, "the timer to delete every expiring item") {
        await withTaskCancellationHandler {
          await deletions.value
        } onCancel: {
          deletions.cancel()
        }
      }
      #expect(deleted == expiring)
      let client = try RawClient(address: address)
      for writer in 0..<4 {
        let all = try client.search(["writer": "\(writer)"])
        #expect(all.count == Self.rounds)
        // Only the items without an expiry are left.
        for path in all {
          let attributes = try client.call(
            path, Interfaces.properties, "Get", .tuple([.string(Interfaces.item), .string("Attributes")]))
          #expect(attributes.child(0)?.unboxed?.stringDictionary?["keep"] != nil)
        }
      }
      // Introspection (main context) agrees with what the calls (worker thread) see.
      let introspection = try client.call(
        "/org/freedesktop/secrets/collection/session", "org.freedesktop.DBus.Introspectable", "Introspect", .tuple([]))
      let nodes = (introspection.child(0)?.string ?? "").components(separatedBy: "<node name=").count - 1
      #expect(nodes == (try client.search([:])).count)
    }
  }
}
