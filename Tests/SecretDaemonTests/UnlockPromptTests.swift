// `Unlock` of the sealed collection answers with a prompt that completes when the user unlocks it
// from a terminal: what python's secretstorage (and so python keyring) waits on.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("unlock prompts of the persistent collection")
struct UnlockPromptTests {
  @Test("python secretstorage's unlock waits on the prompt and returns unlocked once `secretctl unlock` runs")
  func secretstorageWaitsForTheTerminal() async throws {
    try await withProvider(.secretd, arguments: PersistentCollectionTests.arguments) { instance in
      #expect(try PersistentCollectionTests.unlock(instance, "passphrase").status == 0)
      _ = try instance.secretTool(["store", "--label=l", "service", "up", "account", "a"], input: "waited for")
      #expect(try instance.run(try builtExecutable("secretctl").path, ["lock"]).status == 0)
      let script = """
        import secretstorage
        collection = secretstorage.get_default_collection(secretstorage.dbus_init())
        print(collection.is_locked())
        dismissed = collection.unlock()
        print(dismissed, collection.is_locked())
        item = next(collection.search_items({'service': 'up'}))
        print(item.get_secret().decode())
        """
      let environment = instance.environment
      let directory = instance.bus.directory
      async let python = runProcessOnOwnThread(
        "timeout", ["60", SecretStorageSuiteTests.python, "-c", script], environment: environment, in: directory)
      try await eventually("python to wait on the prompt", seconds: 30) {
        Self.log(instance).contains("a client waits for /org/freedesktop/secrets/collection/login to be unlocked")
      }
      #expect(try PersistentCollectionTests.unlock(instance, "passphrase").status == 0)
      let run = try await python
      #expect(run.status == 0, "\(run.stderrText)")
      #expect(run.stdoutText == "True\nFalse False\nwaited for\n", "\(run.stderrText)")
    }
  }

  @Test("a dismissed prompt completes as dismissed and unlocks nothing; another client cannot dismiss it")
  func dismissUnlocksNothing() async throws {
    try await withProvider(.secretd, arguments: PersistentCollectionTests.arguments) { instance in
      let script = """
        from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        from jeepney.wrappers import DBusErrorResponse, unwrap_msg
        connection = open_dbus_connection(bus='SESSION')
        service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets',
                              interface='org.freedesktop.Secret.Service')
        unlock = new_method_call(service, 'Unlock', 'ao', (['/org/freedesktop/secrets/collection/login'],))
        unlocked, path = unwrap_msg(connection.send_and_get_reply(unlock))
        print(unlocked, path.startswith('/org/freedesktop/secrets/prompt/p'))
        prompt = DBusAddress(path, bus_name='org.freedesktop.secrets', interface='org.freedesktop.Secret.Prompt')
        try:
            unwrap_msg(open_dbus_connection(bus='SESSION').send_and_get_reply(new_method_call(prompt, 'Dismiss')))
            print('a stranger dismissed it')
        except DBusErrorResponse as error:
            print(error.name)
        rule = MatchRule(type='signal', path=path, interface='org.freedesktop.Secret.Prompt', member='Completed')
        with connection.filter(rule) as queue:
            unwrap_msg(connection.send_and_get_reply(message_bus.AddMatch(rule)))
            unwrap_msg(connection.send_and_get_reply(new_method_call(prompt, 'Dismiss')))
            print(connection.recv_until_filtered(queue, timeout=10).body)
        """
      let run = try await runProcessOnOwnThread(
        "timeout", ["30", SecretStorageSuiteTests.python, "-c", script], environment: instance.environment,
        in: instance.bus.directory)
      #expect(run.status == 0, "\(run.stderrText)")
      #expect(
        run.stdoutText == "[] True\norg.freedesktop.DBus.Error.UnknownMethod\n(True, ('ao', []))\n",
        "\(run.stderrText)")
      #expect(try PersistentCollectionTests.isLocked(instance))
    }
  }

  static func log(_ instance: ProviderInstance) -> String {
    (try? String(contentsOf: instance.bus.directory.appending(path: "secretd.log"), encoding: .utf8)) ?? ""
  }
}
