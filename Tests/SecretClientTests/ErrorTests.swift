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

  @Test func messagesNeverCarryTheSecret() {
    let errors: [SecretError] = [
      .busUnavailable(reason: "r"), .serviceUnavailable(busName: "b"), .locked(path: "/p"), .promptDismissed,
      .invalidArgument("i"), .noSuchObject(path: "/o"), .dbus(name: "n", message: "m"),
    ]
    for error in errors { #expect(!error.description.isEmpty) }
    #expect(!String(describing: SecretValue("hunter2")).contains("hunter2"))
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
}
