// Many clients writing at once lose nothing.
import Foundation
import SecretTestSupport
import Synchronization
import Testing

@testable import SecretDaemon

@Suite("concurrent writers")
struct ConcurrentWritersTests {
  @Test("8 clients writing 1,000 items each lose nothing")
  func eightWriters() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let address = instance.busAddress
      let failures = Mutex<[String]>([])
      try await onOwnThread {
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
          do {
            let client = try RawClient(address: address)
            let session = try client.openPlainSession()
            for index in 0..<1000 {
              try client.createPlainItem(
                session: session, attributes: ["writer": "\(writer)", "index": "\(index)"],
                secret: Array("w\(writer)-i\(index)".utf8), replace: false)
            }
          } catch {
            failures.withLock { $0.append("writer \(writer): \(error)") }
          }
        }
      }
      #expect(failures.withLock { $0 }.isEmpty)
      let client = try RawClient(address: address)
      let session = try client.openPlainSession()
      for writer in 0..<8 {
        let items = try client.search(["writer": "\(writer)"])
        #expect(items.count == 1000)
      }
      for (writer, index) in [(0, 0), (3, 517), (7, 999)] {
        let path = try #require(try client.search(["writer": "\(writer)", "index": "\(index)"]).first)
        #expect(try client.plainSecret(path, session: session) == Array("w\(writer)-i\(index)".utf8))
      }
    }
  }
}
