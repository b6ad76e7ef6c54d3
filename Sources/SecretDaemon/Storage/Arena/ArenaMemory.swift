// The memory an arena lives in: a memfd_secret file where the kernel allows it, else a memfd
// that is locked, left out of core dumps and sealed against shrinking; mapped shared, so the
// file (handed to the service manager) keeps every byte when this process dies.
import SystemCalls

/// What kind of memory holds the store.
package enum ArenaMemoryKind: String, Sendable {
  /// memfd_secret: out of the kernel's direct map, unreadable through /proc/PID/mem, never swapped.
  case secret = "memfd_secret"
  /// A memfd, locked (never swapped), out of core dumps, sealed against shrinking.
  case lockedMemfd = "locked memfd"
  /// A memfd that could not be locked (--allow-unlocked-memory): it may be swapped.
  case unlockedMemfd = "unlocked memfd"

  /// How a log line or `secretctl status` says it.
  package var summary: String {
    switch self {
    case .secret: "memfd_secret (out of the kernel's direct map, never swapped)"
    case .lockedMemfd: "a locked, sealed memfd (memfd_secret refused here)"
    case .unlockedMemfd: "an unlocked memfd that may be swapped (--allow-unlocked-memory)"
    }
  }
}

/// Why the arena's memory could not be had.
enum ArenaMemoryError: Error, Equatable {
  /// Mapping or locking failed: a matter of resources, which may be there at another start.
  case cannotMap(size: Int, reason: String)
  /// A file handed back that no arena could be in, whatever the resources.
  case unusable(String)
}

/// A memory file mapped into this process; unmapped when released (and closed, when made here).
final class ArenaMemory {
  let file: FileDescriptor
  let base: UnsafeMutableRawPointer
  let size: Int
  let kind: ArenaMemoryKind
  /// Why memfd_secret was not used, when it was not.
  let secretMemoryRefusal: String?
  /// Whether the file is closed with the mapping (one this process made, not one handed to it).
  private let ownsFile: Bool

  private init(
    file: FileDescriptor, base: UnsafeMutableRawPointer, size: Int, kind: ArenaMemoryKind, refusal: String?,
    ownsFile: Bool
  ) {
    (self.file, self.base, self.size, self.kind, self.secretMemoryRefusal) = (file, base, size, kind, refusal)
    self.ownsFile = ownsFile
  }

  deinit {
    Memory.unmap(base, count: size)
    if ownsFile { file.close() }
  }

  /// New memory of `size` bytes, zero-filled: secret memory if the kernel gives it (and
  /// `preferSecret`), else a locked memfd, else (with `allowUnlocked`) an unlocked one.
  static func make(size: Int, preferSecret: Bool = true, allowUnlocked: Bool) throws(ArenaMemoryError) -> ArenaMemory {
    var refusal = "not asked for"
    if preferSecret {
      do throws(Errno) {
        let file = try FileDescriptor.secretMemory()
        do throws(Errno) {
          try file.setSize(size)
          return ArenaMemory(
            file: file, base: try file.mapShared(size), size: size, kind: .secret, refusal: nil, ownsFile: true)
        } catch {
          file.close()
          throw error
        }
      } catch {
        refusal = "memfd_secret: \(error)"
      }
    }
    do throws(Errno) {
      let file = try FileDescriptor.sealableMemory(name: "secretd-arena")
      try file.setSize(size)
      try file.sealSize()
      return try mapOrdinary(file, size: size, allowUnlocked: allowUnlocked, refusal: refusal, owns: true)
    } catch {
      throw .cannotMap(size: size, reason: "\(refusal); memfd: \(error)")
    }
  }

  /// Maps a memory file handed back by the service manager; its kind is read from the kernel. A
  /// plain memfd must be sealed against shrinking (sealed here if it still can be): a file that
  /// shrank under the mapping would end secretd at its next touch.
  static func adopt(_ file: FileDescriptor, allowUnlocked: Bool) throws(ArenaMemoryError) -> ArenaMemory {
    guard let size = try? file.size(), size > 0 else { throw .unusable("an empty or unreadable file") }
    let isSecret = Files.symbolicLinkTarget("/proc/self/fd/\(file.rawValue)")?.hasPrefix("/secretmem") == true
    if !isSecret, !file.cannotShrink {
      try? file.sealSize()
      guard file.cannotShrink else { throw .unusable("a memfd that is not sealed against shrinking") }
    }
    do throws(Errno) {
      if isSecret {
        return ArenaMemory(
          file: file, base: try file.mapShared(size), size: size, kind: .secret, refusal: nil, ownsFile: false)
      }
      return try mapOrdinary(
        file, size: size, allowUnlocked: allowUnlocked, refusal: "handed back as a memfd", owns: false)
    } catch {
      throw .cannotMap(size: size, reason: "\(error)")
    }
  }

  private static func mapOrdinary(
    _ file: FileDescriptor, size: Int, allowUnlocked: Bool, refusal: String, owns: Bool
  ) throws(Errno) -> ArenaMemory {
    let base = try file.mapShared(size)
    Memory.excludeFromCoreDumps(base, count: size)
    do throws(Errno) {
      try Memory.lockOnFault(base, count: size)
      return ArenaMemory(file: file, base: base, size: size, kind: .lockedMemfd, refusal: refusal, ownsFile: owns)
    } catch {
      guard allowUnlocked else {
        Memory.unmap(base, count: size)
        throw error
      }
      return ArenaMemory(
        file: file, base: base, size: size, kind: .unlockedMemfd, refusal: "\(refusal); mlock: \(error)",
        ownsFile: owns)
    }
  }
}
