// `run --mask`: the command's output passes through secretctl, every resolved secret replaced.
import SecretMemory
import SystemCalls

/// Replaces every occurrence of the secrets in a stream of bytes with `<concealed>`: each run of
/// bytes covered by one or more occurrences (overlapping or adjacent secrets included) becomes
/// one replacement. The output does not depend on how the stream is cut into reads: bytes that
/// could begin a secret wait for the next read (or the end of the stream), and bytes held back
/// that an occurrence already covered stay covered, as does a run that goes on past a read.
struct OutputMask {
  static let replacement = Array("<concealed>".utf8)
  private let secrets: [SecretBytes]
  private var pending: [UInt8] = []
  /// How many bytes at the start of `pending` an occurrence that began in bytes already
  /// written covers.
  private var coveredAhead = 0
  /// Whether the last byte written was covered, so a run that continues is not replaced twice.
  private var inConcealedRun = false

  init(secrets: [SecretBytes]) {
    self.secrets = secrets.filter { !$0.isEmpty }
  }

  /// The bytes of `chunk` (after those held back) that can be written now, masked.
  mutating func filter(_ chunk: UnsafeRawBufferPointer) -> [UInt8] {
    pending.append(contentsOf: chunk)
    return drain(final: false)
  }

  /// What is still held back, masked, at the end of the stream.
  mutating func finish() -> [UInt8] { drain(final: true) }

  private mutating func drain(final: Bool) -> [UInt8] {
    let (covered, reach) = coveredBytes()
    let limit = final ? pending.count : heldBackFrom()
    var output: [UInt8] = []
    for index in 0..<limit {
      if covered[index] {
        if !inConcealedRun { output += Self.replacement }
        inConcealedRun = true
      } else {
        output.append(pending[index])
        inConcealedRun = false
      }
    }
    // Occurrences that began in the bytes written cover what they reach beyond them.
    coveredAhead = max(0, reach[limit] - limit)
    Memory.wipe(&pending, upTo: limit)
    pending.removeFirst(limit)
    return output
  }

  /// Which bytes of `pending` lie in an occurrence of a secret (or in one carried over), and
  /// for each start, how far the occurrences that began before it reach.
  private func coveredBytes() -> (covered: [Bool], reach: [Int]) {
    var covered = [Bool](repeating: false, count: pending.count)
    for index in 0..<min(coveredAhead, pending.count) { covered[index] = true }
    var ends = [Int](repeating: 0, count: pending.count + 1)
    for secret in secrets where secret.count <= pending.count {
      for start in 0...(pending.count - secret.count) where pending[start...].starts(with: secret) {
        for index in start..<(start + secret.count) { covered[index] = true }
        ends[start + 1] = max(ends[start + 1], start + secret.count)
      }
    }
    // reach[i]: the furthest end of an occurrence that starts before i (carried ones included).
    var reach = ends
    reach[0] = coveredAhead
    for index in reach.indices.dropFirst() { reach[index] = max(reach[index - 1], reach[index]) }
    return (covered, reach)
  }

  /// Where the bytes that could begin a secret (a proper prefix of one, up to the end) start.
  private func heldBackFrom() -> Int {
    for start in pending.indices {
      let tail = pending[start...]
      if secrets.contains(where: { $0.count > tail.count && $0.starts(with: tail) }) { return start }
    }
    return pending.count
  }
}

extension Memory {
  /// Wipes the first `count` bytes of `bytes`, which are about to be dropped.
  fileprivate static func wipe(_ bytes: inout [UInt8], upTo count: Int) {
    bytes.withUnsafeMutableBytes { wipe(UnsafeMutableRawBufferPointer(rebasing: $0[0..<count])) }
  }
}

/// Runs `command` as a child, its output and errors masked on the way to ours; returns its
/// exit status. SIGTERM and SIGHUP sent to secretctl are passed on to it; SIGINT and SIGQUIT
/// from the terminal reach it directly, and secretctl waits for it to end.
func runMasked(_ command: String, arguments: [String], secrets: [SecretBytes]) throws(Errno) -> ExitStatus {
  let output = try FileDescriptor.pipe()
  let errors = try FileDescriptor.pipe()
  let child: ProcessID
  do {
    child = try spawn(command, arguments: arguments, output: output.write, error: errors.write)
  } catch {
    [output.read, output.write, errors.read, errors.write].forEach { $0.close() }
    throw error
  }
  output.write.close()
  errors.write.close()
  forwardedChild = child
  for signal in [Signal.terminate, .hangUp] { _ = try? signal.handle(with: forwardToChild) }
  for signal in [Signal.interrupt, .quit] { _ = try? signal.handle(with: ignoreSignal) }
  copyMasked([(output.read, .standardOutput), (errors.read, .standardError)], secrets: secrets)
  return try child.waitForExit()
}

/// Copies each source to its destination, masked, until every source ends. Wraps poll(2).
private func copyMasked(_ streams: [(FileDescriptor, FileDescriptor)], secrets: [SecretBytes]) {
  var masks = streams.map { _ in OutputMask(secrets: secrets) }
  var open = streams.map { _ in true }
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  defer { buffer.withUnsafeMutableBytes { Memory.wipe($0) } }
  while open.contains(true) {
    guard let ready = try? FileDescriptor.poll(streams.indices.filter { open[$0] }.map { streams[$0].0 }) else { break }
    for index in streams.indices where open[index] && ready.contains(streams[index].0) {
      let (source, destination) = streams[index]
      let count = buffer.withUnsafeMutableBytes { (try? source.read(into: $0)) ?? 0 }
      var masked =
        count > 0
        ? buffer.withUnsafeBytes { masks[index].filter(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        : masks[index].finish()
      masked.withUnsafeBytes { _ = try? destination.writeAll($0) }
      masked.withUnsafeMutableBytes { Memory.wipe($0) }
      if count == 0 {
        open[index] = false
        source.close()
      }
    }
  }
}

/// The child signals are passed on to. `nonisolated(unsafe)` is sound: it is written once,
/// before the handlers that read it are installed (sigaction orders the write before any
/// delivery), and never again.
nonisolated(unsafe) private var forwardedChild = ProcessID(rawValue: 0)

private func forwardToChild(_ number: CInt) {
  try? Signal(rawValue: number).send(to: forwardedChild)
}

private func ignoreSignal(_ number: CInt) {}
