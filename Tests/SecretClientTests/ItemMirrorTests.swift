// The rules of what a connection keeps from the provider's signals (pure: no bus).
import Testing

@testable import SecretClient

@Suite("The item mirror's rules (pure)")
struct ItemMirrorTests {
  static let provider = ":1.7"
  static let item = "/org/freedesktop/secrets/collection/session/1"
  static let other = "/org/freedesktop/secrets/collection/session/2"
  static let address = ["service": "s", "account": "a"]

  private static func mirror() -> ItemMirror {
    let mirror = ItemMirror()
    mirror.activate(provider: provider, busName: "org.freedesktop.secrets")
    return mirror
  }

  @Test func signalsOfAnyoneButTheProviderChangeNothing() {
    let mirror = Self.mirror()
    mirror.receive(.attributes(Self.item, Self.address), from: ":1.99")
    #expect(mirror.attributes(of: [Self.item]).isEmpty)
    mirror.receive(.attributes(Self.item, Self.address), from: Self.provider)
    #expect(mirror.attributes(of: [Self.item])[Self.item] == Self.address, "positive control")
  }

  @Test func anAnswerIsNotKeptWhenTheItemWasSignalledWhileItWasOut() {
    let mirror = Self.mirror()
    let mark = mirror.mark()
    mirror.receive(.changed(Self.item), from: Self.provider)
    mirror.learn([Self.item: Self.address], since: mark)
    #expect(mirror.attributes(of: [Self.item]).isEmpty)
    mirror.learn([Self.item: Self.address], since: mirror.mark())
    #expect(mirror.attributes(of: [Self.item])[Self.item] == Self.address, "positive control")
  }

  @Test func theSignalOfTheConnectionsOwnWriteKeepsWhatItWrote() {
    let mirror = Self.mirror()
    mirror.learnWritten(Self.address, of: Self.item, since: mirror.mark())
    mirror.receive(.changed(Self.item), from: Self.provider)
    #expect(mirror.attributes(of: [Self.item])[Self.item] == Self.address)
    mirror.receive(.changed(Self.item), from: Self.provider)
    #expect(mirror.attributes(of: [Self.item]).isEmpty, "a second change is someone else's")
  }

  @Test func anotherItemNamedAlikeEndsWhatASearchFound() {
    let mirror = Self.mirror()
    mirror.recordSole(Self.item, named: Self.address, since: mirror.mark())
    #expect(mirror.isSole(Self.item, named: Self.address))
    mirror.receive(.attributes(Self.other, Self.address.merging(["xdg:expires": "1"]) { $1 }), from: Self.provider)
    #expect(!mirror.isSole(Self.item, named: Self.address))
  }

  @Test func anItemCreatedWithUnknownAttributesHoldsItBackUntilTheyAreKnown() {
    let mirror = Self.mirror()
    mirror.recordSole(Self.item, named: Self.address, since: mirror.mark())
    mirror.receive(.created(Self.other), from: Self.provider)
    #expect(!mirror.isSole(Self.item, named: Self.address))
    #expect(mirror.unknownItems(besides: Self.item, named: Self.address) == [Self.other])
    mirror.learn([Self.other: ["service": "s", "account": "b"]], since: mirror.mark())
    #expect(mirror.isSole(Self.item, named: Self.address), "the new item has another address")
  }

  @Test func aSearchAnsweredAfterAnotherItemWasNamedAlikeIsNotRecorded() {
    let mirror = Self.mirror()
    let mark = mirror.mark()
    mirror.receive(.attributes(Self.other, Self.address), from: Self.provider)
    mirror.recordSole(Self.item, named: Self.address, since: mark)
    #expect(!mirror.isSole(Self.item, named: Self.address))
  }

  @Test func theProviderLeavingItsNameStopsTheMirrorOnlyWhenTheBusSaysSo() {
    let mirror = Self.mirror()
    let left = ItemEvent.ownerLeft(name: "org.freedesktop.secrets", owner: Self.provider)
    mirror.receive(left, from: ":1.99")
    #expect(mirror.isActive, "another client cannot stop it")
    mirror.receive(left, from: "org.freedesktop.DBus")
    #expect(!mirror.isActive)
  }
}
