import Foundation
import SecretTestSupport
import Secrets
import Testing

@Suite("SecretKey: loading")
struct SecretKeyLoadTests {
  @Test(arguments: Provider.all)
  func anAbsentItemGivesTheDefaultAndNoError(provider: Provider) async throws {
    try await withSecretKeys(provider) { _, _ in
      @Shared(.secret(service: "load", account: "absent")) var token: Token? = nil
      #expect(token == nil)
      #expect($token.loadError == nil)
    }
  }

  @Test(arguments: Provider.all)
  func anExistingItemIsDecoded(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("load", "present", #"{"value":"abc","expires":7}"#)
      @Shared(.secret(service: "load", account: "present")) var token: Token? = nil
      #expect(token == Token(value: "abc", expires: 7))
    }
  }

  @Test(arguments: Provider.all)
  func invalidJSONIsAnErrorThatNamesTheItemAndSurvivesInABackup(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("corrupt", "a", "not json at all")
      @Shared(.secret(service: "corrupt", account: "a")) var token: Token? = nil
      #expect(token == nil)
      let error = try #require($token.loadError as? SecretKeyError)
      #expect(String(describing: error).contains("service corrupt, account a"))
      #expect(!String(describing: error).contains("not json at all"), "the bytes are the secret")

      $token.withLock { $0 = Token(value: "new", expires: 1) }
      try await $token.save()
      let items = try await instance.client().search(["service": "corrupt"], includeSecrets: true)
      let backup = try #require(items.first { $0.attributes["backup"] != nil })
      #expect(backup.secret?.text == "not json at all")
      // Exactly, because the backup matches service and account too and secret-tool's lookup
      // returns whichever match the provider lists first (gnome-keyring's order is its hash's).
      let stored = try #require(
        try await instance.client().read(["service": "corrupt", "account": "a"], exactly: true))
      #expect(try JSONDecoder().decode(Token.self, from: Data(stored.bytes)) == Token(value: "new", expires: 1))
      #expect(items.count == 2)
    }
  }

  @Test(arguments: Provider.all)
  func undecodableBytesThatWereReplacedFromOutsideAreNotBackedUp(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("fixed", "a", "not json at all")
      @Shared(.secret(service: "fixed", account: "a")) var token: Token? = nil
      #expect($token.loadError != nil)
      try instance.store("fixed", "a", #"{"value":"good","expires":1}"#)
      try await eventually("the outside fix") { [shared = $token] in
        shared.wrappedValue == Token(value: "good", expires: 1)
      }
      $token.withLock { $0 = Token(value: "newer", expires: 2) }
      try await $token.save()
      let items = try await instance.client().search(["service": "fixed"])
      #expect(items.count == 1, "a backup of bytes no longer in the item: \(items.map(\.attributes))")
    }
  }

  @Test(arguments: Provider.all)
  func twoDeclarationsOfTheSameSecretShareOneValue(provider: Provider) async throws {
    try await withSecretKeys(provider) { _, _ in
      @Shared(.secret(service: "shared", account: "a")) var first: Token? = nil
      @Shared(.secret(service: "shared", account: "a", writeWindow: .seconds(5))) var second: Token? = nil
      $first.withLock { $0 = Token(value: "one", expires: 1) }
      #expect(second == Token(value: "one", expires: 1))
    }
  }

  @Test(arguments: Provider.all)
  func aProviderThatVanishesGivesErrorsAndTheKeyRecoversWhenItReturns(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "vanish", account: "a")) var token: Token? = nil
      instance.stopProvider()
      await #expect(throws: SecretError.serviceUnavailable(busName: instance.busName)) { try await $token.load() }
      #expect($token.loadError != nil)
      try instance.startProvider()
      try await $token.load()
      #expect($token.loadError == nil)
      $token.withLock { $0 = Token(value: "back", expires: 2) }
      try await $token.save()
      #expect(try instance.lookup("vanish", "a") != nil)
    }
  }
}
