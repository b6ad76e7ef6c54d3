import SecretCLI
import SystemCalls

secretctlMain(Array(CommandLine.arguments.dropFirst())).exit()
