import Secrets

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
