// The README's SecretClient example. Run it against any provider on the session bus:
//   swift run secret-client-example
// It stores, reads and deletes bob's secret, leaving alice's (the README's first step) alone.
import SecretClient

let client = SecretClient()
do {
  try client.write(SecretValue("hunter2"), service: "example.org", account: "bob", label: "Example password")
  let password = try client.read(service: "example.org", account: "bob")
  print("stored and read back \(password?.bytes.count ?? 0) bytes for bob@example.org")
  try client.delete(service: "example.org", account: "bob")
  print("absent after delete: \(try client.read(service: "example.org", account: "bob") == nil)")
} catch {
  print("error: \(error)")  // SecretError's description says what to do
}
