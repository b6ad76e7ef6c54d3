// What `status` shows of secretd's memory budget: one budget for secrets, attributes and
// labels, past which secretd refuses to store more.
import SecretClient
import SystemCalls

/// secretd's memory budget as far as secretctl can learn it.
///
/// Today that is only the limit when secretd was started with `--max-memory` (read from its
/// command line, which processes of the same user may read). How much is used, and so how much
/// is free, only secretd knows: ``reported(by:)`` is where `status` will read them once secretd
/// reports them on the bus.
struct MemoryBudget: Equatable {
  /// `--max-memory` as given on secretd's command line (`8M`, `1048576`); nil for its default.
  var configuredLimit: String?
  /// Bytes in use and bytes the budget allows, once secretd reports them.
  var used: Int?
  var limit: Int?

  init(of provider: ProviderInfo) {
    configuredLimit = provider.pid.flatMap(Self.maxMemoryArgument)
    (used, limit) = Self.reported(by: provider) ?? (nil, nil)
  }

  /// The budget's use, as secretd reports it: not yet, so nil. The seam for the daemon side
  /// (issue 30.7): when secretd exposes its budget, this reads it.
  static func reported(by provider: ProviderInfo) -> (used: Int, limit: Int)? { nil }

  var text: String {
    if let used, let limit {
      return "\(bytes(used)) used, \(bytes(max(0, limit - used))) free of \(bytes(limit))"
    }
    let limit = configuredLimit.map { "--max-memory \($0)" } ?? "secretd's default (from its locked-memory limit)"
    return "\(limit); used and free: not reported by this secretd"
  }

  var json: JSON {
    .object([
      ("configuredLimit", .string(configuredLimit)), ("limit", limit.map(JSON.number) ?? .null),
      ("used", used.map(JSON.number) ?? .null),
      ("free", used.flatMap { used in limit.map { .number($0 - used) } } ?? .null),
    ])
  }

  /// The value of `--max-memory` on the command line of process `pid`, when given.
  private static func maxMemoryArgument(_ pid: Int32) -> String? {
    guard let bytes = try? Files.read("/proc/\(pid)/cmdline") else { return nil }
    let words = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    for (index, word) in words.enumerated() {
      if word == "--max-memory", index + 1 < words.count { return words[index + 1] }
      if word.hasPrefix("--max-memory=") { return String(word.dropFirst("--max-memory=".count)) }
    }
    return nil
  }

  private func bytes(_ count: Int) -> String {
    count >= 1 << 20 ? "\(count >> 20) MiB" : count >= 1 << 10 ? "\(count >> 10) KiB" : "\(count) bytes"
  }
}
