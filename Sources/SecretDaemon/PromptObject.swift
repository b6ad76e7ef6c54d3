// org.freedesktop.Secret.Prompt at /org/freedesktop/secrets/prompt/pN.
//
// Only `Unlock` of the sealed collection (`--persistent`) makes a prompt: memory-only collections
// are created, unlocked and deleted without asking. A prompt shows nothing: `Prompt` tells the
// log what the user must run, and `Completed` comes when the collection is unlocked, or at once
// on `Dismiss`. A call on any other prompt path, or on another client's, is answered as one to
// a path where no object is.
import GLibBridge

struct PromptObject: BusObject {
  let daemon: Daemon
  let path: String
  let number: Int

  init(daemon: Daemon, node: ObjectNode) {
    self.daemon = daemon
    path = ObjectPaths.canonical(node)
    number = if case .prompt(let number) = node { number } else { 0 }
  }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<PromptObject>(
    Interfaces.prompt,
    methods: [
      Method("Prompt", in: Input("window-id", .string), access: .none) { prompt, context, _ in
        try prompt.show(to: context.sender)
      },
      Method("Dismiss", access: .none) { prompt, context in try prompt.dismiss(by: context.sender) },
    ])

  /// Prompt(s window-id): says in the log how to unlock; completes now if that already happened.
  private func show(to caller: String) throws(DBusError) -> DBusValue {
    guard daemon.unlockPrompts.prompt(number, caller: caller) else { throw .noObject(path) }
    Log.info(
      "a client waits for \(ObjectPaths.collection(SealedCollection.name)) to be unlocked: run `secretctl unlock`")
    if daemon.storeLock.reading({ daemon.store.collections[SealedCollection.name]?.locked == false }) {
      daemon.completeUnlockPrompts()
    }
    return .tuple([])
  }

  /// Dismiss(): completes the prompt as dismissed, unlocking nothing.
  private func dismiss(by caller: String) throws(DBusError) -> DBusValue {
    guard let waiting = daemon.unlockPrompts.dismiss(number, caller: caller) else { throw .noObject(path) }
    daemon.completePrompt(number, of: waiting.owner, dismissed: true, objects: [])
    return .tuple([])
  }
}

extension Daemon {
  /// Completes every prompt a client is waiting on: the sealed collection is unlocked.
  func completeUnlockPrompts() {
    for prompt in unlockPrompts.takePrompted() {
      completePrompt(prompt.number, of: prompt.waiting.owner, dismissed: false, objects: prompt.waiting.objects)
    }
  }

  /// Completed(b dismissed, v result), to the prompt's own client only; the result is the
  /// objects unlocked (`ao`).
  func completePrompt(_ number: Int, of owner: String, dismissed: Bool, objects: [String]) {
    connection.emitSignal(
      .promptCompleted, path: ObjectPaths.prompt(number),
      arguments: .tuple([.boolean(dismissed), .variant(.objectPaths(objects))]), to: [owner],
      maximumBytes: configuration.limits.maxReplySize)
  }
}
