// The scheduler's rule for large calls: no more than its slots run at once, and another
// client's small call runs meanwhile. The calls are GDBus messages on a private bus; what
// answering them would do is stood in for by a probe whose large calls wait until the test
// lets them go, so the test waits for events, never for time.
import CGio
import Dispatch
import SecretTestSupport
import Synchronization
import Testing

@testable import SecretDaemon

@Suite("client scheduler")
struct ClientSchedulerTests {
  @Test("with one slot for large calls, three clients' large calls run one at a time, and a small call runs meanwhile")
  func largeCallsWaitForTheirSlot() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let connection = try Self.connect(bus.address)
    defer { g_object_unref(UnsafeMutableRawPointer(connection)) }
    let probe = Probe()
    let scheduler = ClientScheduler(
      vet: { _ in .allowed }, run: { probe.run($0.member) },
      weigh: { $0.member == "Large" ? .heavy : .light }, heavySlots: 1, departed: { _ in })
    scheduler.start(threads: 4)
    for client in 1...3 { scheduler.submit(try Self.call("Large", from: ":1.\(client)", on: connection)) }
    scheduler.submit(try Self.call("Small", from: ":1.9", on: connection))
    // Four workers, four calls: only the slot keeps the other two large calls waiting.
    #expect(probe.largeStarted.wait(timeout: .now() + 10) == .success)
    #expect(probe.smallRan.wait(timeout: .now() + 10) == .success)
    for _ in 1...3 {
      probe.gate.signal()
      #expect(probe.largeFinished.wait(timeout: .now() + 10) == .success)
    }
    #expect(probe.mostLargeAtOnce == 1)
  }

  private static func connect(_ address: String) throws -> OpaquePointer {
    let flags = GDBusConnectionFlags(
      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    return try #require(g_dbus_connection_new_for_address_sync(address, flags, nil, nil, nil))
  }

  /// A call of `member` from `sender` that expects no reply (the scheduler's closures give none).
  private static func call(_ member: String, from sender: String, on connection: OpaquePointer) throws
    -> IncomingCall
  {
    let message = try #require(
      g_dbus_message_new_method_call("org.freedesktop.secrets", "/test", "test.Calls", member))
    defer { g_object_unref(UnsafeMutableRawPointer(message)) }
    g_dbus_message_set_sender(message, sender)
    g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
    return try #require(IncomingCall(message: message, connection: connection))
  }
}

/// Runs calls for the scheduler: a small call says it ran; a large one says it started, waits
/// for the gate, and says it finished.
private final class Probe: Sendable {
  let smallRan = DispatchSemaphore(value: 0)
  let largeStarted = DispatchSemaphore(value: 0)
  let largeFinished = DispatchSemaphore(value: 0)
  let gate = DispatchSemaphore(value: 0)
  private let large = Mutex((running: 0, most: 0))

  var mostLargeAtOnce: Int { large.withLock { $0.most } }

  func run(_ member: String) {
    guard member == "Large" else {
      smallRan.signal()
      return
    }
    large.withLock {
      $0.running += 1
      $0.most = max($0.most, $0.running)
    }
    largeStarted.signal()
    gate.wait()
    large.withLock { $0.running -= 1 }
    largeFinished.signal()
  }
}
