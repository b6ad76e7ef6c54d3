// The README's SecretClient example. Run it against any provider on the session bus:
//   swift run secret-client-example
// It stores, reads and deletes example.org/bob, and leaves the README's first item
// (example.org/alice, stored with secret-tool) alone.
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
