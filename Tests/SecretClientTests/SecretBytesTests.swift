import Glibc
import SecretClient
import SecretTestSupport
import Testing

@Suite("Secret bytes")
struct SecretBytesTests {
  @Test("a secret read from the Secret Service sits in a locked mapping of the client, where an array's bytes do not")
  func aReadSecretIsInLockedMemory() async throws {
    try await withProvider(.secretd) { instance in
      let client = instance.client()
      try await client.write(SecretValue("kept-locked"), service: "locked", account: "a")
      let read = try #require(try await client.read(service: "locked", account: "a"))
      let ordinary = Array("kept-locked".utf8)
      let mappings = try processMappings(pid: getpid())
      func mapping(of bytes: UnsafeRawBufferPointer) -> MemoryMapping? {
        let address = UInt64(UInt(bitPattern: bytes.baseAddress))
        return mappings.first { $0.start <= address && address < $0.end }
      }
      #expect(read.bytes.withUnsafeBytes(mapping)?.isLocked == true)
      // Positive control: the heap, where an array lives, is not locked.
      #expect(ordinary.withUnsafeBytes(mapping)?.isLocked == false)
    }
  }

  @Test("bytes are equal only when their lengths and every byte match; values also compare their content types")
  func equalityComparesEveryByte() {
    #expect(SecretBytes("same") == SecretBytes(copying: Array("same".utf8)))
    #expect(SecretBytes("same") != SecretBytes("sam"))
    #expect(SecretBytes("same") != SecretBytes("samf"))
    #expect(SecretBytes("") == SecretBytes(copying: []))
    #expect(SecretValue("same") != SecretValue(bytes: Array("same".utf8)), "the content types differ")
  }

  @Test("copies out of secret bytes read their locked storage in place, not byte by byte through a buffer")
  func copiesReadTheStorageInPlace() {
    let secret = SecretBytes("in-place")
    let storage = secret.withUnsafeBytes { $0.baseAddress }
    #expect(secret.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } == storage)
    #expect(Array(secret) == Array("in-place".utf8))
    #expect(String(validating: secret, as: UTF8.self) == "in-place")
  }

  @Test("neither a description, a debug description nor a dump shows the bytes")
  func noTextShowsTheBytes() {
    let secret = "never-printed-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    let value = SecretValue(secret)
    var dumped = ""
    dump(value, to: &dumped)
    let texts = ["\(value)", String(reflecting: value), "\(value.bytes)", String(reflecting: value.bytes), dumped]
    for text in texts { #expect(!text.contains(secret), "\(text)") }
    // Positive control: the text itself does show it, and the count is there.
    #expect(value.text == secret)
    #expect(texts.allSatisfy { $0.contains("\(secret.utf8.count) bytes") || $0.contains("count") }, "\(texts)")
  }
}
