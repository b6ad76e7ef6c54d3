// Sealing with a data key: AES-256-GCM, a fresh random 96-bit nonce each time, associated data
// that names what is sealed (a record's identity, an export file's header). Sealed bytes:
// nonce (12) | ciphertext | tag (16).
package import SecretMemory

extension DataKey {
  /// What sealing adds to a plaintext: the nonce and the tag.
  package static let sealOverhead = SealingCalls.nonceLength + SealingCalls.tagLength

  /// Seals `plaintext` under `associatedData`: nonce, ciphertext, tag.
  package func seal(_ plaintext: SecretBytes, associatedData: [UInt8]) throws(SealingError) -> [UInt8] {
    try plaintext.withUnsafeBytes { (plain) throws(SealingError) in try seal(plain, associatedData: associatedData) }
  }

  /// Seals the bytes at `plaintext` (read in place, such as a record in the arena) under
  /// `associatedData`: nonce, ciphertext, tag.
  package func seal(_ plaintext: UnsafeRawBufferPointer, associatedData: [UInt8]) throws(SealingError) -> [UInt8] {
    var sealed = [UInt8](repeating: 0, count: Self.sealOverhead + plaintext.count)
    try sealed.withMutableRawBytes { (output) throws(SealingError) in
      let nonce = UnsafeMutableRawBufferPointer(rebasing: output[..<SealingCalls.nonceLength])
      let body = UnsafeMutableRawBufferPointer(
        rebasing: output[SealingCalls.nonceLength..<(output.count - SealingCalls.tagLength)])
      let tag = UnsafeMutableRawBufferPointer(rebasing: output[(output.count - SealingCalls.tagLength)...])
      SealingCalls.nonce(nonce)
      try bytes.withUnsafeBytes { (key) throws(SealingError) in
        try associatedData.withRawBytes { (data) throws(SealingError) in
          try SealingCalls.sealGCM(
            key: key, nonce: UnsafeRawBufferPointer(nonce), associatedData: data, plaintext: plaintext,
            ciphertext: body, tag: tag)
        }
      }
    }
    return sealed
  }

  /// Opens what ``seal(_:associatedData:)`` made under the same associated data.
  package func open(_ sealed: some Collection<UInt8>, associatedData: [UInt8]) throws(SealingError) -> SecretBytes {
    let sealed = Array(sealed)
    guard sealed.count >= Self.sealOverhead else {
      throw .malformed("\(sealed.count) bytes, fewer than a nonce and a tag (\(Self.sealOverhead))")
    }
    let count = sealed.count - Self.sealOverhead
    guard let plaintext = SecretBytes(lockedCount: count) else { throw .noLockedMemory(bytes: count) }
    try sealed.withRawBytes { (input) throws(SealingError) in
      let nonce = UnsafeRawBufferPointer(rebasing: input[..<SealingCalls.nonceLength])
      let body = UnsafeRawBufferPointer(
        rebasing: input[SealingCalls.nonceLength..<(input.count - SealingCalls.tagLength)])
      let tag = UnsafeRawBufferPointer(rebasing: input[(input.count - SealingCalls.tagLength)...])
      try bytes.withUnsafeBytes { (key) throws(SealingError) in
        try plaintext.withUnsafeMutableBytes { (plain) throws(SealingError) in
          try associatedData.withRawBytes { (data) throws(SealingError) in
            try SealingCalls.openGCM(
              key: key, nonce: nonce, associatedData: data, ciphertext: body, tag: tag, plaintext: plain)
          }
        }
      }
    }
    return plaintext
  }
}
