import Foundation
import SecretCLI
import SecretMemory
import SecretsOpenBao

extension OpenBaoConfiguration {
  /// BAO_ADDR (or VAULT_ADDR); BAO_TOKEN (or VAULT_TOKEN), else the token kept in the Secret
  /// Service for service `openbao`, account `token` (`secretctl set openbao token`).
  static var commandLine: OpenBaoConfiguration {
    let environment = ProcessInfo.processInfo.environment
    let fromEnvironment = environment["BAO_TOKEN"] ?? environment["VAULT_TOKEN"]
    return OpenBaoConfiguration(
      authentication: fromEnvironment?.isEmpty == false
        ? .environment : .secretService(service: "openbao", account: "token"))
  }
}

/// secretctl's commands over an `OpenBaoClient`: errors are exit status 3 with OpenBao's
/// message, absence is nil.
struct OpenBaoCommandLineAccess: OpenBaoAccess {
  let client: OpenBaoClient

  init(_ client: OpenBaoClient) { self.client = client }

  func field(_ field: String, of path: String, in mount: String) throws(CLIError) -> SecretBytes? {
    try openBao { () throws(OpenBaoError) in try client.read(path, mount: mount) }?.field(field).map(SecretBytes.init)
  }

  func value(service: String, account: String?) throws(CLIError) -> SecretBytes? {
    try field("value", of: path(service, account), in: client.configuration.mount)
  }

  func store(_ secret: SecretBytes, service: String, account: String?) throws(CLIError) {
    guard let text = String(validating: secret, as: UTF8.self) else {
      throw .usage("OpenBao's fields hold text and this secret is not UTF-8; nothing was stored")
    }
    _ = try openBao { () throws(OpenBaoError) in
      try client.write(path(service, account), fields: ["value": text], checkAndSet: nil)
    }
  }

  func delete(service: String, account: String?) throws(CLIError) -> Bool {
    let path = path(service, account)
    return try openBao { () throws(OpenBaoError) -> Bool in
      guard let state = try client.versionState(path), !state.isDeleted else { return false }
      try client.delete(path)
      return true
    }
  }

  private func path(_ service: String, _ account: String?) -> String {
    KVPath(service: service, account: account, folder: client.configuration.folder).text
  }

  private func openBao<T>(_ body: () throws(OpenBaoError) -> T) throws(CLIError) -> T {
    do {
      return try body()
    } catch {
      throw .service(error.description)
    }
  }
}
