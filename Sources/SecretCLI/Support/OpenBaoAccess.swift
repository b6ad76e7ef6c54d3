// OpenBao from the command line. secretctl links no OpenBao client (nor does its package need
// GIO's TLS backend). A command that needs OpenBao (a bao:// reference, --store bao) is handed,
// with its arguments and any standard input already read, to secretctl-bao beside it: the same
// commands with OpenBao linked.
import CommandLineSyntax
package import SecretMemory
import SystemCalls

/// What secretctl-bao gives the commands: OpenBao's KV v2 engine.
package protocol OpenBaoAccess: Sendable {
  /// The text of `field` of the newest version of the secret at `path` in `mount`; nil when
  /// there is no such secret or field.
  func field(_ field: String, of path: String, in mount: String) throws(CLIError) -> SecretBytes?
  /// The secret stored for service and account (where a SecretKey keeps its value).
  func value(service: String, account: String?) throws(CLIError) -> SecretBytes?
  /// Stores the secret for service and account as a new version.
  func store(_ secret: SecretBytes, service: String, account: String?) throws(CLIError)
  /// Deletes the newest version of the secret for service and account; false when there was none.
  func delete(service: String, account: String?) throws(CLIError) -> Bool
}

/// What secretctl passes on when it hands a command to secretctl-bao.
package struct OpenBaoHandOff: Hashable, Sendable {
  /// Standard input the command already read, given to secretctl-bao as its standard input.
  var standardInput: [UInt8]?
}

extension CLIError {
  /// The command needs OpenBao, which this process cannot reach.
  static func needsOpenBao(standardInput: [UInt8]? = nil) -> CLIError {
    var error = CLIError.service(
      "bao:// references and --store bao need secretctl-bao, which is installed beside secretctl (`make install`)")
    error.openBaoHandOff = OpenBaoHandOff(standardInput: standardInput)
    return error
  }
}

extension Console {
  /// OpenBao, or an error that hands the command to secretctl-bao.
  func openBaoAccess(standardInput: [UInt8]? = nil) throws(CLIError) -> any OpenBaoAccess {
    guard let openBao else { throw .needsOpenBao(standardInput: standardInput) }
    return openBao
  }
}

/// Runs secretctl-bao, beside this program, with the same arguments in place of this process;
/// returns only when it cannot be run.
func handOffToOpenBao(_ arguments: [String], _ handOff: OpenBaoHandOff, console: Console) -> ExitStatus {
  // Only beside this program: never a secretctl-bao found in the current folder or on PATH.
  guard let program = currentExecutablePath() else {
    console.report("cannot find where secretctl is installed (/proc/self/exe), so not secretctl-bao either")
    return .serviceError
  }
  let helper = Files.split(program).directory + "/secretctl-bao"
  if let input = handOff.standardInput {
    do throws(Errno) {
      let file = try FileDescriptor.anonymousFile(holding: input)
      try file.duplicate(onto: .standardInput)
      file.close()
    } catch {
      console.report("cannot pass standard input on to \(helper): \(error)")
      return .serviceError
    }
  }
  let failure = execute(helper, arguments: ["secretctl-bao"] + arguments)
  console.report(
    "bao:// references and --store bao need \(helper), which cannot be run (\(failure)); "
      + "install it beside secretctl (`make install` does)")
  return .serviceError
}

/// Where get, set and delete keep secrets.
enum StoreChoice: String {
  case secretService = "secret-service"
  case bao

  static let option = OptionSpec(
    "store", value: "STORE", completions: ["secret-service", "bao"],
    help: "Where the secret lives: secret-service (default) or bao (OpenBao: BAO_ADDR, BAO_TOKEN).")

  init(_ arguments: ParsedArguments) throws(CLIError) {
    guard let name = arguments.option("store") else {
      self = .secretService
      return
    }
    guard let store = StoreChoice(rawValue: name) else {
      throw .usage("--store \(name) is not secret-service or bao")
    }
    self = store
  }

  /// Refuses options that mean nothing in this store, rather than ignoring them.
  func refuse(_ options: [String], in arguments: ParsedArguments) throws(CLIError) {
    for option in options where arguments.option(option) != nil || arguments.flag(option) {
      throw .usage("--\(option) does not apply with --store \(rawValue)")
    }
  }
}
