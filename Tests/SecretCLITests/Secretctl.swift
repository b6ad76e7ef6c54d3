import Foundation
import SecretTestSupport

/// Runs the built `secretctl` against `instance`, as a user's shell would.
func secretctl(_ instance: ProviderInstance, _ arguments: [String], input: String? = nil) throws -> ProcessOutput {
  try instance.run(try secretctlPath(), arguments, input: input.map { Array($0.utf8) })
}

func secretctl(_ instance: ProviderInstance, _ arguments: [String], bytes: [UInt8]) throws -> ProcessOutput {
  try instance.run(try secretctlPath(), arguments, input: bytes)
}

func secretctlPath() throws -> String { try builtExecutable("secretctl").path }

extension ProcessOutput {
  /// stderr is one line that starts with `secretctl: `.
  var stderrIsOneMessage: Bool {
    stderrText.hasPrefix("secretctl: ") && stderrText.hasSuffix("\n") && stderrText.dropLast().contains("\n") == false
  }
}
