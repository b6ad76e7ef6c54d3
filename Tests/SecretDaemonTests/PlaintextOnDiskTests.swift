// No plaintext on disk: a secretd --persistent, traced (strace) for every file it opens for
// writing, creates or renames into place, stores secrets in `login` and in `session`; then
// every file under its data home and its other folders, and every file it wrote anywhere, is
// scanned for any 8-byte run of any of those secrets, and every record of the log is unsealed
// to show that no session secret went into one, even sealed.
import Foundation
import GLibBridge
import SecretMemory
import SecretTestSupport
import SystemCalls
import Testing

@testable import SecretDaemon

@Suite("no plaintext on disk")
struct PlaintextOnDiskTests {
  static let passphrase = "on disk"
  static let sessionCollection = "/org/freedesktop/secrets/collection/session"
  /// The shortest run of a secret the scan looks for: long enough that random bytes (sealed
  /// records, keys) do not hold one by chance, short enough to find any piece of a secret.
  static let run = 8

  /// A program that runs secretd under strace (each thread's file calls to `traces`.PID) and
  /// passes SIGTERM on to it, so that the harness stops it as it stops secretd.
  static func tracingLauncher(in folder: String) throws -> URL {
    let launcher = folder + "/secretd"
    let script = """
      #!/bin/sh
      '\(try resolveExecutable("strace").path)' -ff -qq -o '\(folder)/trace' -e trace=%file '\(secretdPath())' "$@" &
      tracer=$!
      trap 'kill -TERM $(cat /proc/$tracer/task/$tracer/children)' TERM
      wait $tracer
      wait $tracer

      """
    // Written by a child: a descriptor of this process open for writing, inherited by a child
    // another test spawns meanwhile, would make running the launcher fail (ETXTBSY).
    let written = try runProcess(
      "sh", ["-c", "cat > \"$0\" && chmod 755 \"$0\"", launcher], input: Array(script.utf8),
      environment: environmentWithoutBus, in: URL(filePath: folder))
    guard written.status == 0 else { throw HarnessError("cannot write \(launcher): \(written.stderrText)") }
    return URL(filePath: launcher)
  }

  /// Every path the traced processes opened for writing, created, or renamed or linked into
  /// place, by successful calls.
  static func writtenPaths(tracedIn folder: String) throws -> Set<String> {
    let writing = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
    var paths: Set<String> = []
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasPrefix("trace.") {
      for line in try String(contentsOfFile: folder + "/" + name, encoding: .utf8).split(separator: "\n") {
        guard let open = line.firstIndex(of: "("), let result = line.range(of: ") = ", options: .backwards),
          line[result.upperBound...].first?.isNumber == true
        else { continue }
        // Paths are the quoted arguments (none here holds a quote).
        let quoted = line.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
          .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        switch line[..<open] {
        case "open", "openat", "openat2":
          if writing.contains(where: { line.contains($0) }), let path = quoted.first { paths.insert(path) }
        case "creat", "truncate": if let path = quoted.first { paths.insert(path) }
        case "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat":
          if let path = quoted.last { paths.insert(path) }
        default: break
        }
      }
    }
    return paths
  }

  /// Every `run`-byte window of `secrets`, as a number.
  static func runs(of secrets: [[UInt8]]) -> Set<UInt64> {
    var runs: Set<UInt64> = []
    for secret in secrets { forEachRun(secret) { runs.insert($0) } }
    return runs
  }

  static func forEachRun(_ bytes: [UInt8], _ body: (UInt64) -> Void) {
    var window: UInt64 = 0
    for (index, byte) in bytes.enumerated() {
      window = window << 8 | UInt64(byte)
      if index >= run - 1 { body(window) }
    }
  }

  static func holdsRun(_ bytes: [UInt8], of runs: Set<UInt64>) -> Bool {
    var found = false
    forEachRun(bytes) { if runs.contains($0) { found = true } }
    return found
  }

  /// The regular files under `folder`, and those of `more` that are regular files.
  static func regularFiles(under folder: URL, and more: Set<String>) -> Set<String> {
    var files = more.filter { Files.isRegularFile($0) && !["/dev/", "/proc/", "/sys/"].contains(where: $0.hasPrefix) }
    let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
    while let url = walker?.nextObject() as? URL {
      if (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true { files.insert(url.path) }
    }
    return files
  }

  static func secret(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

  @Test(
    "no 8-byte run of any secret stored, replaced or deleted in login or stored in session is in any file under secretd's data home and folders or in any file it wrote, and no session secret is in any record of the log, even sealed (the scan finds a run planted in the data home; the unsealed records hold login's)"
  )
  func noPlaintextOnDisk() async throws {
    let tracing = try Files.makeTemporaryDirectory(in: "/tmp", prefix: "secretd-trace-")
    defer { Files.removeDirectory(tracing) }
    let launcher = try Self.tracingLauncher(in: tracing)
    try await withProvider(.secretd, arguments: ["--persistent"], secretd: launcher) { instance in
      let folder = PersistentCollectionTests.dataFolder(instance)
      var client = try RawClient(address: instance.busAddress)
      func unlock() throws {
        try client.call(
          ObjectPaths.root, Interfaces.secretd, "UnlockWithPassphrase", .tuple([.bytes(Array(Self.passphrase.utf8))]))
      }
      try unlock()
      var session = try client.openPlainSession()
      var login = (0..<4).map { _ in Self.secret(64) } + [Array(randomToken(24).utf8)]
      for (index, secret) in login.enumerated() {
        try client.createPlainItem(session: session, attributes: ["login": "\(index)"], secret: secret)
      }
      login.append(Self.secret(64))
      try client.createPlainItem(session: session, attributes: ["login": "0"], secret: login[login.count - 1])
      for path in try client.search(["login": "1"]) { try client.call(path, Interfaces.item, "Delete", .tuple([])) }
      let sessionSecrets = (0..<3).map { _ in Self.secret(1024) }
      for (index, secret) in sessionSecrets.enumerated() {
        try client.createPlainItem(
          session: session, collection: Self.sessionCollection, attributes: ["session": "\(index)"], secret: secret)
      }
      // A restart: what secretd writes when it opens the files again, and after.
      instance.stopProvider()
      try instance.startProvider()
      client = try RawClient(address: instance.busAddress)
      try unlock()
      session = try client.openPlainSession()
      let kept = try #require(try client.search(["login": "0"]).first)
      #expect(try client.plainSecret(kept, session: session) == login[login.count - 1])
      login.append(Self.secret(64))
      try client.createPlainItem(session: session, attributes: ["login": "after"], secret: login[login.count - 1])
      instance.stopProvider()

      let written = try Self.writtenPaths(tracedIn: tracing)
      #expect(written.contains(folder + "/login.log") && written.contains(folder + "/login.key"), "\(written)")
      #expect(written.allSatisfy { $0.hasPrefix("/") }, "a path the scan cannot place: \(written)")
      let runs = Self.runs(of: login + sessionSecrets)
      // The positive control: one run of a session secret, planted in the data home, is found.
      let control = instance.bus.directory.appending(path: "data/control")
      try Data([0x78] + sessionSecrets[1][100..<(100 + Self.run)] + [0x79]).write(to: control)
      let planted = Self.regularFiles(under: instance.bus.directory, and: written).filter {
        Self.holdsRun((try? fileBytes($0)) ?? [], of: runs)
      }
      #expect(planted == [control.path])
      try FileManager.default.removeItem(at: control)
      for file in Self.regularFiles(under: instance.bus.directory, and: written) {
        #expect(!Self.holdsRun(try fileBytes(file), of: runs), "\(file)")
      }
      try Self.expectRecordsHoldOnly(login, not: sessionSecrets, in: folder, writes: login.count + 1)
    }
  }

  /// Unseals every record of the log (none was compacted away: `writes` puts and deletes):
  /// each is `login`'s, none holds a run of a session secret, and each login secret is in one.
  static func expectRecordsHoldOnly(
    _ login: [[UInt8]], not sessionSecrets: [[UInt8]], in folder: String, writes: Int
  ) throws {
    let keyFile = try #require(try KeyFile.load(from: folder + "/login.key"))
    let key = try keyFile.unlock(passphrase: plaintext(passphrase))
    let scan = try RecordLogFormat.scan(try fileBytes(folder + "/login.log"), path: "login.log")
    #expect(scan.records.count == writes)
    let sessionRuns = runs(of: sessionSecrets)
    var sealedSecrets = Set<[UInt8]>()
    for record in scan.records {
      #expect(record.identity.collection == "login")
      let opened = Array(try key.open(record.sealed, as: record.identity, kind: record.kind))
      #expect(!holdsRun(opened, of: sessionRuns), "\(record.identity)")
      for secret in login where opened.firstRange(of: secret) != nil { sealedSecrets.insert(secret) }
    }
    #expect(sealedSecrets.count == login.count, "every login secret is in a record: the unsealing works")
  }
}
