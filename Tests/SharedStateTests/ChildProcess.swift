import Foundation
import Glibc
import SecretTestSupport
import Testing

/// A program built next to the test bundle (the `SharedStateChild` helper by default, or an
/// example), started with the harness's `ChildProcess` (signals unblocked, no descriptor leaking
/// into other tests' children), talked to through its standard output.
final class HelperProcess {
  private let child: ChildProcess
  private let output: Int32
  private var buffer = Data()

  init(
    program: String = "SharedStateChild", _ arguments: [String],
    environment: [String: String] = environmentWithoutBus
  ) throws {
    let executable = try builtExecutable(program)
    let pipe = try ChildProcess.makePipe()
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer {
      close(null)
      close(pipe.write)
    }
    child = try ChildProcess(
      executable, arguments, environment: environment, stdin: null, stdout: pipe.write,
      stderr: STDERR_FILENO)
    output = pipe.read
  }

  deinit {
    if child.isRunning { child.signal(SIGKILL) }
    close(output)
  }

  /// Reads the next line of output, failing after `timeout`.
  func readLine(timeout: Duration = .seconds(20)) throws -> String {
    let deadline = ContinuousClock.now + timeout
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        return line
      }
      let remaining = deadline - ContinuousClock.now
      guard remaining > .zero else { throw TestFailure(message: "no output from the child within \(timeout)") }
      var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(
        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
      let ready = poll(&poller, 1, max(1, milliseconds))
      if ready < 0 && errno != EINTR { throw TestFailure(message: "poll failed: errno \(errno)") }
      if ready > 0 {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(output, &chunk, chunk.count)
        if count <= 0 {
          throw TestFailure(
            message: "the child closed its output; buffered: \(String(decoding: buffer, as: UTF8.self))")
        }
        buffer.append(contentsOf: chunk[0..<count])
      }
    }
  }

  func expectLine(_ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let line = try readLine()
    #expect(line == expected, sourceLocation: sourceLocation)
  }

  func signal(_ signal: Int32) { child.signal(signal) }

  func wait() -> ChildProcess.Termination { child.waitForTermination() }
}
