// The README's SecretClient example. Run it against any provider on the session bus:
//   swift run secret-client-example
import SecretClient

let client = SecretClient()
do {
  try client.write(SecretValue("hunter2"), service: "example.org", account: "alice", label: "Example password")
  let password = try client.read(service: "example.org", account: "alice")
  print("stored and read back \(password?.bytes.count ?? 0) bytes for alice@example.org")
  try client.delete(service: "example.org", account: "alice")
  print("absent after delete: \(try client.read(service: "example.org", account: "alice") == nil)")
} catch {
  print("error: \(error)")  // SecretError's description says what to do
}
