// What the user manager says of the unit secretd runs in. systemd takes descriptors handed with
// FDSTORE=1 without a word, and drops them silently when the unit keeps none
// (FileDescriptorStoreMax=0, the default): only the unit's setting tells whether the store is kept.
import SystemCalls

enum ServiceUnit {
  private static let manager = "org.freedesktop.systemd1"

  /// How many descriptors the unit running `process` keeps (FileDescriptorStoreMax); nil when no
  /// service manager on this bus says. Wraps the manager's GetUnitByPID and Properties.Get.
  static func descriptorStoreLimit(of process: ProcessID, on connection: BusConnection) -> UInt32? {
    guard
      let unit = try? connection.call(
        destination: manager, path: "/org/freedesktop/systemd1", interface: "\(manager).Manager",
        method: "GetUnitByPID", arguments: .tuple([.uint32(UInt32(bitPattern: process.rawValue))]),
        timeoutMilliseconds: 5_000
      ).child(0)?.string,
      let limit = try? connection.call(
        destination: manager, path: unit, interface: "org.freedesktop.DBus.Properties", method: "Get",
        arguments: .tuple([.string("\(manager).Service"), .string("FileDescriptorStoreMax")]),
        timeoutMilliseconds: 5_000
      ).child(0)?.unboxed?.uint32
    else { return nil }
    return limit
  }
}
