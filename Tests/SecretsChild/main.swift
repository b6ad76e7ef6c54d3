// A process for the SIGTERM test: it mutates a secret inside a long write window, says so on
// stdout, and waits. Usage: secrets-child SERVICE ACCOUNT VALUE
import Glibc
import Secrets

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
  print("usage: secrets-child SERVICE ACCOUNT VALUE")
  exit(2)
}
let value = Shared<String?>(
  wrappedValue: nil, .secret(service: arguments[1], account: arguments[2], writeWindow: .seconds(600)))
value.withLock { $0 = arguments[3] }
// stdout is a file here, so print would buffer; write(2) reaches the parent at once.
_ = "pending\n".withCString { write(1, $0, strlen($0)) }
while true { pause() }
