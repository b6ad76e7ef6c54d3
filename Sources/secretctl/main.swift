import Glibc
import SecretCLI

exit(secretctlMain(Array(CommandLine.arguments.dropFirst())))
