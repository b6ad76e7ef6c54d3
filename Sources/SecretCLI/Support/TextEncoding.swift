// Base64, ISO 8601 and character replacement for the output, written here rather than taken
// from Foundation (`Data`, `Date.formatted`) or _StringProcessing (`replacing(_:with:)`): with
// them secretctl was 22 MB (Foundation's formatting) or 14 MB (_StringProcessing) instead of
// 12 MB, and the dynamic loader relocates all of it before `main`, so every command, even
// `--version`, started slower. Tests check the output against Foundation's.
import FoundationEssentials
import SystemCalls

/// Standard base64 with padding (RFC 4648 §4), as `Data.base64EncodedString()` writes it.
func base64<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> String where Bytes.Index == Int {
  var encoded: [UInt8] = []
  encoded.reserveCapacity((bytes.count + 2) / 3 * 4)
  base64(bytes) { encoded.append($0) }
  return String(decoding: encoded, as: UTF8.self)
}

/// The base64 of `bytes`, handed to `emit` a character at a time (so that a secret's goes
/// where the caller keeps secrets).
func base64<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, emit: (UInt8) -> Void) where Bytes.Index == Int {
  let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  var index = 0
  while index < bytes.count {
    let count = min(3, bytes.count - index)
    let first = bytes.startIndex + index
    var group = UInt32(bytes[first]) << 16
    if count > 1 { group |= UInt32(bytes[first + 1]) << 8 }
    if count > 2 { group |= UInt32(bytes[first + 2]) }
    for position in 0..<4 {
      emit(position <= count ? alphabet.utf8Start[Int(group >> (18 - 6 * position)) & 0x3f] : UInt8(ascii: "="))
    }
    index += 3
  }
}

/// `2026-11-30T01:34:44Z`: UTC, whole seconds, as `Date.formatted(.iso8601)` writes it.
func iso8601(_ date: Date) -> String {
  let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
  return UTCTime(secondsSince1970: seconds)?.iso8601 ?? String(seconds)
}

extension String {
  /// The text with every `character` replaced by `replacement`, for quoting in shells.
  func replacingEvery(_ character: Character, with replacement: String) -> String {
    var result = ""
    result.reserveCapacity(utf8.count)
    for each in self {
      if each == character { result += replacement } else { result.append(each) }
    }
    return result
  }
}
