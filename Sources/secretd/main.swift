// secretd: which of its jobs the arguments ask for. Serving is in Serve.swift, everything else
// in SecretDaemon.
import SecretDaemon
import SystemCalls

ProcessHardening.restartWipingFreedMemory(arguments: CommandLine.arguments)
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .exit(let status, let message):
  if status == .success { print(message) } else { Log.plain(message) }
  status.exit()
case .run(let options):
  runDaemon(options).exit()
case .runCommand(let command, let secretdOptions):
  RunCommand.run(command, secretdOptions: secretdOptions).exit()
case .agent(let shell, let kill, let secretdOptions):
  (kill ? Agent.kill(shell: shell) : Agent.start(shell: shell, secretdOptions: secretdOptions)).exit()
}
