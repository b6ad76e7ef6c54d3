// Reading another process's memory and state, as root may: for tests and comparisons that look
// for secrets left behind.
import Foundation

/// Whether `needle` occurs in any readable mapping of process `pid` (root reads /proc/PID/mem
/// even when the process is not dumpable, thanks to CAP_SYS_PTRACE).
public func processMemoryContains(pid: Int32, _ needle: [UInt8]) throws -> Bool {
  try !processMappings(pid: pid, containing: needle).isEmpty
}

/// One mapping of a process's address space, as /proc/PID/smaps describes it.
public struct MemoryMapping: Sendable, CustomStringConvertible {
  public var start: UInt64
  public var end: UInt64
  public var isReadable: Bool
  public var name: String
  /// Locked in RAM (mlock): the kernel never writes it to swap.
  public var isLocked: Bool

  public var description: String {
    "\(String(start, radix: 16))-\(String(end, radix: 16)) \(name)\(isLocked ? " locked" : "")"
  }
}

/// The mappings of process `pid`, from /proc/PID/smaps.
public func processMappings(pid: Int32) throws -> [MemoryMapping] {
  let smaps = try readProcFile("/proc/\(pid)/smaps")
  var mappings: [MemoryMapping] = []
  for line in smaps.split(separator: "\n") {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
    if fields.first == "VmFlags:", !mappings.isEmpty {
      mappings[mappings.count - 1].isLocked = fields.contains("lo")
      continue
    }
    let range = fields.first?.split(separator: "-") ?? []
    guard fields.count >= 5, range.count == 2, let start = UInt64(range[0], radix: 16),
      let end = UInt64(range[1], radix: 16)
    else { continue }
    mappings.append(
      MemoryMapping(
        start: start, end: end, isReadable: fields[1].hasPrefix("r"),
        name: fields.count >= 6 ? fields[5...].joined(separator: " ") : "", isLocked: false))
  }
  return mappings
}

/// The readable mappings of process `pid` in which `needle` occurs.
public func processMappings(pid: Int32, containing needle: [UInt8]) throws -> [MemoryMapping] {
  let fd = open("/proc/\(pid)/mem", O_RDONLY)
  guard fd >= 0 else { throw HarnessError("cannot open /proc/\(pid)/mem: errno \(errno)") }
  defer { close(fd) }
  var readAny = false
  var found: [MemoryMapping] = []
  for mapping in try processMappings(pid: pid)
  where mapping.isReadable && mapping.name != "[vvar]" && mapping.name != "[vsyscall]" {
    // Read in chunks that overlap by the needle's length, so no match straddles two reads.
    let chunk = 1 << 22
    var buffer = [UInt8](repeating: 0, count: chunk)
    var offset = mapping.start
    while offset < mapping.end {
      let wanted = Int(min(UInt64(chunk), mapping.end - offset))
      let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(Int64(bitPattern: offset))) }
      guard count > 0 else { break }
      readAny = true
      if contains(buffer[0..<count], needle) {
        found.append(mapping)
        break
      }
      guard offset + UInt64(count) < mapping.end else { break }
      offset += UInt64(max(1, count - needle.count + 1))
    }
  }
  guard readAny else { throw HarnessError("could not read any memory of pid \(pid)") }
  return found
}

/// A /proc file read to its end: Foundation stops after the first read, a few KB into smaps
/// or a long mounts.
public func readProcFile(_ path: String) throws -> String {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { throw HarnessError("cannot open \(path): errno \(errno)") }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else { break }
    bytes += chunk[0..<count]
  }
  return String(decoding: bytes, as: UTF8.self)
}

private func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
  guard let first = needle.first, haystack.count >= needle.count else { return false }
  return haystack.withUnsafeBufferPointer { hay in
    var index = 0
    let last = hay.count - needle.count
    while index <= last {
      if hay[index] == first {
        var matched = true
        for offset in 1..<needle.count where hay[index + offset] != needle[offset] {
          matched = false
          break
        }
        if matched { return true }
      }
      index += 1
    }
    return false
  }
}

/// Whether a process still runs (not a zombie).
public func isRunning(_ pid: Int32) -> Bool {
  guard let status = try? readProcFile("/proc/\(pid)/status") else { return false }
  return !status.contains("State:\tZ")
}
