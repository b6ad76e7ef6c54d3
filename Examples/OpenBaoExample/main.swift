// The README's OpenBao example: the same @Shared(.secret(…)) declaration, kept in OpenBao.
//   bao server -dev -dev-root-token-id=dev &
//   BAO_ADDR=http://127.0.0.1:8200 BAO_TOKEN=dev swift run openbao-example   # twice: the count goes up
import Foundation
import Secrets
import SecretsOpenBao

struct DeployKey: Codable, Sendable {
  var key: String
  var rotations: Int
}

func main() async throws {
  var fleet = SharedEnvironment.current
  fleet.secretKeyStore = .openBao(OpenBaoConfiguration())  // BAO_ADDR and BAO_TOKEN
  try await fleet.withValue {
    @Shared(.secret(service: "com.example.fleet", account: "deploy")) var deploy: DeployKey? = nil
    if let error = $deploy.loadError { throw error }  // sealed, forbidden, unreachable: never "absent"
    $deploy.withLock { deploy in
      deploy = DeployKey(key: UUID().uuidString, rotations: (deploy?.rotations ?? 0) + 1)
    }
    try await $deploy.save()  // a new version in secret/com.example.fleet/deploy, check-and-set
    print("deploy key rotated \(deploy?.rotations ?? 0) time(s)")
  }
}

try await main()
