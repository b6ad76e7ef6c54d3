// Where each fuzzed call was answered: by a declared method's handler (a success, or an error
// from inside it), by the router before any handler ran, or not at all; counted per method.
import Foundation
import GLibBridge

@testable import SecretDaemon

struct FuzzTally {
  struct Count {
    var calls = 0
    var reached = 0
    var succeeded = 0
  }

  enum Answer: Equatable {
    case succeeded
    case handlerError
    /// Refused by the router (`Daemon.target(path:interface:member:arguments:)`), or by the
    /// object's making when no collection or item is at the path, before any handler ran.
    case refusedBeforeHandler
    /// No answer from secretd: a timeout, a lost connection, or the bus answering for it.
    case unanswered
  }

  /// Every declared method as `Interface.Method`, in the fuzzer's order.
  static let declared = FuzzArguments.methods.map { "\($0.interface).\($0.method.name)" }
  static let undeclared = "(undeclared members)"

  private(set) var counts: [String: Count] = [:]
  private(set) var unanswered: [String] = []

  mutating func record(_ call: FuzzCall, _ outcome: Result<Variant, GLibError>) {
    let answer = Self.answer(to: call, outcome)
    let key = call.isDeclared ? call.name : Self.undeclared
    counts[key, default: Count()].calls += 1
    switch answer {
    case .succeeded:
      counts[key, default: Count()].reached += 1
      counts[key, default: Count()].succeeded += 1
    case .handlerError:
      counts[key, default: Count()].reached += 1
    case .refusedBeforeHandler:
      break
    case .unanswered:
      if case .failure(let error) = outcome { unanswered.append("\(call.name) on \(call.path): \(error.message)") }
    }
  }

  func reached(_ method: String) -> Int { counts[method]?.reached ?? 0 }

  /// Whether `outcome` is an answer from the handler of the method `call` names.
  static func answer(to call: FuzzCall, _ outcome: Result<Variant, GLibError>) -> Answer {
    guard case .failure(let error) = outcome else { return .succeeded }
    guard let name = error.remoteName, !busErrors.contains(name) else { return .unanswered }
    switch name {
    case "org.freedesktop.DBus.Error.UnknownMethod":
      // The router's answer to a path where no object is, an interface the object lacks or an
      // undeclared member; a collection or item that does not exist gets "no object" from its
      // making, before the handler. A prompt is made from any prompt path and its handlers
      // answer "no object" themselves (secretd never makes a prompt).
      let isPromptHandler =
        call.interface == Interfaces.prompt && call.isDeclared
        && error.message.contains("Object does not exist at path")
        && { if case .prompt? = ObjectNode(path: call.path) { true } else { false } }()
      return isPromptHandler ? .handlerError : .refusedBeforeHandler
    case "org.freedesktop.DBus.Error.InvalidArgs":
      // The router's check of the arguments against the declared signature.
      return error.message.contains("\(call.interface).\(call.member) takes ") ? .refusedBeforeHandler : .handlerError
    default:
      return .handlerError
    }
  }

  /// Errors the bus daemon sends in the place of a peer that does not answer.
  static let busErrors: Set = [
    "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.Disconnected",
    "org.freedesktop.DBus.Error.TimedOut", "org.freedesktop.DBus.Error.Timeout",
  ]

  /// Calls, handler answers and successes per method, as a table.
  var table: String {
    let width = (Self.declared + [Self.undeclared]).map(\.count).max() ?? 0
    let rows = (Self.declared + [Self.undeclared]).map { method in
      let count = counts[method] ?? Count()
      return method.padding(toLength: width, withPad: " ", startingAt: 0)
        + [count.calls, count.reached, count.succeeded].map { String($0).leftPadded(to: 8) }.joined()
    }
    let header =
      "method".padding(toLength: width, withPad: " ", startingAt: 0)
      + ["calls", "reached", "ok"].map { $0.leftPadded(to: 8) }.joined()
    return ([header] + rows).joined(separator: "\n")
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: " ", count: max(0, width - count)) + self
  }
}
