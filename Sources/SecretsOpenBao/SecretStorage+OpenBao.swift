import Foundation
public import Secrets
import Synchronization

extension SecretStorage {
  /// Secrets in OpenBao's KV version 2 engine, for a program that runs on many machines: the
  /// same `SecretKey` declarations, set for a scope.
  ///
  /// ```swift
  /// var fleet = SharedEnvironment.current
  /// fleet.secretStorage = .openBao(OpenBaoConfiguration())
  /// fleet.withValue {
  ///   @Shared(.secret(service: "com.example.deploy", account: "api")) var token: Token? = nil
  /// }
  /// ```
  ///
  /// - One KV secret per key, at `MOUNT/data/FOLDER/SERVICE/ACCOUNT` (characters other than
  ///   letters, digits and `._@+-` in service and account are written `%XX`); the value's JSON
  ///   is its field `value`. A secret without that field (written by hand with other fields)
  ///   reads as the JSON object of its fields. The collection of an address does not apply.
  /// - Absent (404, or the newest version deleted) is the default, with no error; sealed,
  ///   forbidden, unreachable and every other failure are errors.
  /// - Writes are check-and-set on the version this process last read or wrote: a change made
  ///   by someone else meanwhile is never overwritten; the write fails with
  ///   ``OpenBaoError/conflict(path:version:)`` and the newer value is loaded at the next poll.
  /// - `nil` deletes the newest version (it can be undeleted; older versions stay).
  /// - Undecodable contents need no backup: writing a new version keeps the old one in the
  ///   secret's version history (`bao kv get -version=N`), as long as the mount's
  ///   `max_versions` keeps it.
  /// - Changes made elsewhere arrive by polling each watched secret's metadata once per
  ///   ``OpenBaoConfiguration/pollInterval``: one small request per interval, no secret sent.
  ///
  /// - Parameter configuration: The servers, mount, folder, credentials and poll interval.
  public static func openBao(_ configuration: OpenBaoConfiguration = OpenBaoConfiguration()) -> SecretStorage {
    openBao(OpenBaoClient(configuration))
  }

  /// ``openBao(_:)-(OpenBaoConfiguration)`` over an existing client (sharing its token).
  ///
  /// - Parameter client: The client every key of the storage uses.
  public static func openBao(_ client: OpenBaoClient) -> SecretStorage {
    let keys = KVKeys(client)
    let poller = KVPoller(client: client, versions: keys.versions)
    var storage = SecretStorage(
      read: { try keys.read($0) },
      write: { try keys.write($0, $1) },
      delete: { try keys.delete($0) },
      backup: { _, _, _ in },
      watch: { _, onChange in poller.watch(onChange) }
    )
    storage.knownPath = { address in
      let path = keys.path(address)
      return keys.versions.isKnown(path) ? path : nil
    }
    storage.readDiscarded = { keys.versions.readDiscarded(keys.path($0)) }
    return storage
  }
}

/// The KV path of an address: `FOLDER/SERVICE/ACCOUNT`.
package struct KVPath {
  package let text: String

  init(_ address: SecretItemAddress, folder: String) {
    self.init(service: address.service, account: address.account, folder: folder)
  }

  /// `FOLDER/SERVICE/ACCOUNT`, or `FOLDER/SERVICE` without an account (what `secretctl set
  /// --store bao SERVICE` writes).
  package init(service: String, account: String?, folder: String) {
    text = ([folder] + ([service] + (account.map { [$0] } ?? [])).map(Self.escaped)).filter { !$0.isEmpty }
      .joined(separator: "/")
  }

  /// `%XX` for every byte but letters, digits and `._@+-`: a `/` in a service cannot make a
  /// folder, nor can `.` or `..` (written `%2E`) climb out of one.
  static func escaped(_ component: String) -> String {
    if !component.isEmpty, component.allSatisfy({ $0 == "." }) {
      return String(repeating: "%2E", count: component.count)
    }
    var text = ""
    for byte in component.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "@"),
        UInt8(ascii: "+"), UInt8(ascii: "-"):
        text.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    return text
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
