// A user of this machine, as the password database has it, and becoming that user: what a
// helper run as root by PAM (`secretctl pam-unlock`) does before it reaches the user's bus.
import Glibc

/// A user account: its name, ids and home.
package struct UserAccount: Equatable, Sendable {
  package let name: String
  package let user: UserID
  package let group: UInt32

  /// The account named `name`; nil when there is none. Wraps getpwnam_r(3).
  package static func named(_ name: String) -> UserAccount? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16 * 1024)
    guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil, let stored = entry.pw_name
    else { return nil }
    // The database's own spelling: a name service may match `name` in another case.
    return UserAccount(name: String(cString: stored), user: UserID(rawValue: entry.pw_uid), group: entry.pw_gid)
  }

  /// Makes this process this user for good: its groups, then its group, then its user, real and
  /// effective alike. Only root may; a failure leaves the process as it was or throws before it
  /// runs any code as a mix. Wraps initgroups(3), setgid(2) and setuid(2).
  package func become() throws(Errno) {
    guard initgroups(name, group) == 0, setgid(group) == 0, setuid(user.rawValue) == 0 else { throw .current }
    // setuid from root drops every privilege; a process that could go back was not made this user.
    guard setuid(0) != 0, getuid() == user.rawValue, geteuid() == user.rawValue else { throw Errno(code: EPERM) }
  }
}
