import Foundation
import Glibc
import Testing

/// Runs the `SharedStateChild` helper (built next to the test bundle) and talks to it through
/// its standard output.
final class ChildProcess {
  enum Status: Equatable {
    case exited(Int32)
    case signalled(Int32)
  }

  private let process = Process()
  private let output = Pipe()
  private var buffer = Data()

  init(_ arguments: [String]) throws {
    let executable = Self.helperURL()
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw TestFailure(message: "SharedStateChild not found at \(executable.path); build the package's test helper first")
    }
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = output
    try process.run()
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }

  static func helperURL() -> URL {
    let testBinary = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    return testBinary.deletingLastPathComponent().appending(component: "SharedStateChild")
  }

  /// Reads the next line of output, failing after `timeout`.
  func readLine(timeout: Duration = .seconds(20)) throws -> String {
    let descriptor = output.fileHandleForReading.fileDescriptor
    let deadline = ContinuousClock.now + timeout
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        return line
      }
      let remaining = deadline - ContinuousClock.now
      guard remaining > .zero else { throw TestFailure(message: "no output from the child within \(timeout)") }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
      let ready = poll(&poller, 1, max(1, milliseconds))
      if ready < 0 && errno != EINTR { throw TestFailure(message: "poll failed: errno \(errno)") }
      if ready > 0 {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &chunk, chunk.count)
        if count <= 0 { throw TestFailure(message: "the child closed its output; buffered: \(String(decoding: buffer, as: UTF8.self))") }
        buffer.append(contentsOf: chunk[0..<count])
      }
    }
  }

  func expectLine(_ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let line = try readLine()
    #expect(line == expected, sourceLocation: sourceLocation)
  }

  func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

  func wait() -> Status {
    process.waitUntilExit()
    switch process.terminationReason {
    case .exit: return .exited(process.terminationStatus)
    case .uncaughtSignal: return .signalled(process.terminationStatus)
    @unknown default: return .exited(-1)
    }
  }
}
