// secretctl with OpenBao linked: secretctl hands it the commands that need OpenBao (bao://
// references, --store bao), so that secretctl itself carries no OpenBao client.
import SecretCLI
import SecretsOpenBao

var console = Console()
console.openBao = OpenBaoCommandLineAccess(OpenBaoClient(.commandLine))
secretctlMain(Array(CommandLine.arguments.dropFirst()), console: console).exit()
