// Reading another process's memory and state, as root may: for tests and comparisons that look
// for secrets left behind.
public import Foundation

/// Whether `needle` occurs in any readable mapping of process `pid` (root reads /proc/PID/mem
/// even when the process is not dumpable, thanks to CAP_SYS_PTRACE).
public func processMemoryContains(pid: Int32, _ needle: [UInt8]) throws -> Bool {
  let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
  let fd = open("/proc/\(pid)/mem", O_RDONLY)
  guard fd >= 0 else { throw HarnessError("cannot open /proc/\(pid)/mem: errno \(errno)") }
  defer { close(fd) }
  var readAny = false
  for line in maps.split(separator: "\n") {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count >= 2, fields[1].hasPrefix("r") else { continue }
    if fields.count >= 6, fields[5] == "[vvar]" || fields[5] == "[vsyscall]" { continue }
    let range = fields[0].split(separator: "-")
    guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) else {
      continue
    }
    // Read in chunks that overlap by the needle's length, so no match straddles two reads.
    let chunk = 1 << 22
    var buffer = [UInt8](repeating: 0, count: chunk)
    var offset = start
    while offset < end {
      let wanted = Int(min(UInt64(chunk), end - offset))
      let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(Int64(bitPattern: offset))) }
      guard count > 0 else { break }
      readAny = true
      if contains(buffer[0..<count], needle) { return true }
      guard offset + UInt64(count) < end else { break }
      offset += UInt64(max(1, count - needle.count + 1))
    }
  }
  guard readAny else { throw HarnessError("could not read any memory of pid \(pid)") }
  return false
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
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
  return !status.contains("State:\tZ")
}
