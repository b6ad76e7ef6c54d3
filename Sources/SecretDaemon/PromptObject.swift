// org.freedesktop.Secret.Prompt at /org/freedesktop/secrets/prompt/pN.
//
// secretd never needs a prompt: collections are created, unlocked and deleted without asking
// (memory only, no password), so every method that may return a prompt returns "/". The
// interface is introspectable so clients can see it; a call on a prompt path is answered as one
// to a path where no object is.
import GLibBridge

struct PromptObject: BusObject {
  let path: String

  init(daemon: Daemon, node: ObjectNode) { self.path = ObjectPaths.canonical(node) }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<PromptObject>(
    Interfaces.prompt,
    methods: [
      Method("Prompt", in: [Argument("window-id", "s")], access: .none) { prompt, _, _ throws(DBusError) in
        try prompt.none()
      },
      Method("Dismiss", access: .none) { prompt, _, _ throws(DBusError) in try prompt.none() },
    ],
    signals: [SignalDeclaration("Completed", [Argument("dismissed", "b"), Argument("result", "v")])])

  private func none() throws(DBusError) -> DBusValue {
    throw .noObject(path)
  }
}
