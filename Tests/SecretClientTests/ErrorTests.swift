import SecretClient
import SecretTestSupport
import Testing

@Suite("Errors are not absence")
struct ErrorTests {
  @Test func aBusWithoutProviderIsUnavailableNotNil() async throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let client = SecretClient(bus: .address(bus.address), busName: "org.freedesktop.secrets")
    await #expect(throws: SecretError.serviceUnavailable(busName: "org.freedesktop.secrets")) {
      try await client.read(service: "s", account: "a")
    }
    #expect(SecretError.serviceUnavailable(busName: "x").description.contains("secretd"))
  }

  @Test func anActivatableProviderIsStartedByTheFirstCall() async throws {
    let secretd = try builtExecutable("secretd")
    let bus = try PrivateBus(activatable: ["org.freedesktop.secrets": secretd.path])
    defer { bus.stop() }
    let client = SecretClient(bus: .address(bus.address), busName: "org.freedesktop.secrets")
    try await client.write(SecretValue("started on demand"), service: "activation", account: "a")
    #expect(try await client.read(service: "activation", account: "a")?.text == "started on demand")
    #expect(try await client.provider().executable == secretd.path)
  }

  @Test func aBusThatIsNotThereIsBusUnavailable() async throws {
    let client = SecretClient(bus: .address("unix:path=/nonexistent/bus"))
    await #expect {
      try await client.read(service: "s", account: "a")
    } throws: { error in
      guard case .busUnavailable = error as? SecretError else { return false }
      return true
    }
  }

  @Test func anEmptyAttributeSetOrANulCharacterIsAnInvalidArgument() async throws {
    let client = SecretClient(bus: .address("unix:path=/nonexistent/bus"))
    for attributes in [[:], ["service": "a\u{0}b"], ["": "x"]] {
      await #expect {
        try await client.read(attributes)
      } throws: { error in
        guard case .invalidArgument = error as? SecretError else { return false }
        return true
      }
    }
  }

  @Test(arguments: Provider.all)
  func aLockedCollectionIsLockedNotNil(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("x"), service: "locked", account: "a")
      try await client.lock(.default)
      let path = try await client.path(of: .default)
      await #expect(throws: SecretError.locked(path: path)) {
        try await client.read(service: "locked", account: "a")
      }
      #expect(try await client.collections().first { $0.path == path }?.isLocked == true)
    }
  }

  @Test(arguments: Provider.all)
  func aProviderThatVanishesGivesErrorsAndTheClientRecoversWhenItReturns(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("before"), service: "vanish", account: "a")
      instance.stopProvider()
      await #expect(throws: SecretError.serviceUnavailable(busName: instance.busName)) {
        try await client.read(service: "vanish", account: "a")
      }
      try instance.startProvider()
      try await client.write(SecretValue("after"), service: "vanish", account: "a")
      #expect(try await client.read(service: "vanish", account: "a")?.text == "after")
    }
  }

  /// Calls that carry a secret and fail: the error, however it is printed, never quotes it.
  @Test(arguments: Provider.all)
  func errorsOfCallsCarryingASecretNeverQuoteIt(provider: Provider) async throws {
    try await withProvider(provider, arguments: provider == .secretd ? ["--max-secret-size", "64"] : []) { instance in
      let secret = "hunter2-\(UInt64.random(in: 0..<UInt64.max))"
      let client = instance.client()
      // The positive control: the secret is what travels, and comes back.
      try await client.write(SecretValue(secret), service: "quote", account: "ok")
      #expect(try await client.read(service: "quote", account: "ok")?.text == secret)

      var errors: [any Error] = []
      func failing(_ call: () async throws -> Void) async {
        do { try await call() } catch { errors.append(error) }
      }
      await failing { try await client.write(SecretValue(secret), attributes: ["": "empty name"]) }
      await failing {
        try await client.write(
          SecretValue(secret + String(repeating: "x", count: 100)), service: "quote", account: "big")
      }
      try await client.lock(.default)
      await failing { try await client.write(SecretValue(secret), service: "quote", account: "locked") }
      instance.stopProvider()
      await failing { try await client.write(SecretValue(secret), service: "quote", account: "gone") }
      // Three fail on each: secretd refuses the big secret and unlocks without asking;
      // gnome-keyring has no size limit and cannot ask anyone to unlock here.
      #expect(errors.count == 3, "\(errors)")
      for error in errors {
        for text in [String(describing: error), String(reflecting: error), "\(error.localizedDescription)"] {
          #expect(!text.contains("hunter2"), "\(text)")
        }
      }
      for text in [String(describing: SecretValue(secret)), String(reflecting: SecretValue(secret))] {
        #expect(!text.contains("hunter2"), "\(text)")
      }
    }
  }
}

@Suite("Provider identity")
struct ProviderInfoTests {
  @Test(arguments: Provider.all)
  func theClientNamesTheProcessThatOwnsTheBusName(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let info = try await instance.client().provider()
      #expect(info.busName == instance.busName)
      #expect(info.uniqueName.hasPrefix(":"))
      #expect(info.pid == instance.pid)
      #expect(info.isSecretd == (provider == .secretd))
    }
  }

  @Test("a provider with no default collection is explained by the library as secretctl explains it")
  func aMissingDefaultCollectionIsExplained() {
    let text = SecretError.noSuchObject(path: "alias default").description
    #expect(text.contains("no default collection") && text.contains("session collection"), "\(text)")
    #expect(SecretError.noSuchObject(path: "/x").description.contains("No such object"))  // positive control
  }
}
