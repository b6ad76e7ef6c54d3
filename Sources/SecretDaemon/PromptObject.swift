// org.freedesktop.Secret.Prompt at /org/freedesktop/secrets/prompt/pN.
//
// secretd never needs a prompt: collections are created, unlocked and deleted without asking
// (memory only, no password), so every method that may return a prompt returns "/". The
// interface is introspectable so clients can see it; any call on a prompt path answers
// NoSuchObject.

struct PromptObject {
  let path: String

  // MARK: Members on the bus

  func call(_ method: String) throws(DBusError) -> DBusValue {
    switch method {
    case "Prompt", "Dismiss": throw .noSuchObject("no prompt \(path): secretd never prompts")
    default: throw .unknownMethod(Interfaces.prompt, method, path)
    }
  }
}
