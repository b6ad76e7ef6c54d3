// Whether the process asking for a unit's credential runs in that unit. It fails closed: a
// process that is gone, hidden, in the root group or anywhere but the unit's own control group
// gets nothing. What it cannot stop is code of the same user that moves itself into the unit's
// group or starts a unit of that name (the user owns the user manager's cgroup tree).
import SystemCalls

/// Why a request was not answered for the unit it names.
enum UnitCheckRefusal: Error, Equatable, CustomStringConvertible {
  case exited
  case unreadableControlGroup
  case rootControlGroup
  case otherControlGroup(String)

  var description: String {
    switch self {
    case .exited: "the process exited before it could be checked"
    case .unreadableControlGroup: "its control group cannot be read (/proc hides it, or no cgroup v2)"
    case .rootControlGroup: "it runs in the root control group, outside any unit"
    case .otherControlGroup(let path): "its control group \(path) is not the unit's own"
    }
  }
}

enum UnitCheck {
  /// Why `process`, at the other end of `connection`, is not shown to run in `unit`; nil when it
  /// is. Read while the process is pinned, so its pid cannot pass to another process meanwhile.
  static func refusal(of process: ProcessID, at connection: UnixSocket, for unit: String) -> UnitCheckRefusal? {
    guard let handle = ProcessHandle(peerOf: connection, process: process) else { return .exited }
    let file = try? Files.read("/proc/\(process)/cgroup")
    guard handle.isRunning else { return .exited }
    return refusal(cgroupFile: file.map { String(decoding: $0, as: UTF8.self) }, for: unit)
  }

  /// Why a process whose `/proc/PID/cgroup` says `cgroupFile` does not run in `unit`: its cgroup v2 line must name the unit's own
  /// group, the unit's name last and only slices between it and its service manager.
  static func refusal(cgroupFile: String?, for unit: String) -> UnitCheckRefusal? {
    guard let line = cgroupFile?.split(separator: "\n").first(where: { $0.hasPrefix("0::/") }) else {
      return .unreadableControlGroup
    }
    let path = line.dropFirst(3)
    let components = path.split(separator: "/")
    guard let last = components.last else { return .rootControlGroup }
    // The user manager's own group is the first `user@UID.service`: the tree above it belongs to
    // the system, so no process of the user can make one there.
    let manager = components.firstIndex(where: isUserManager).map { $0 + 1 } ?? components.startIndex
    let unitIndex = components.endIndex - 1
    guard last == unit, manager <= unitIndex, components[manager..<unitIndex].allSatisfy({ $0.hasSuffix(".slice") })
    else { return .otherControlGroup(String(path)) }
    return nil
  }

  private static func isUserManager(_ component: Substring) -> Bool {
    guard component.hasPrefix("user@"), component.hasSuffix(".service") else { return false }
    let uid = component.dropFirst(5).dropLast(8)
    return !uid.isEmpty && uid.allSatisfy(\.isASCII) && uid.allSatisfy(\.isNumber)
  }
}
