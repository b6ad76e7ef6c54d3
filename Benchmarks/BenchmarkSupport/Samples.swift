import Foundation

/// Measurements of one quantity over several rounds: printed as the median and the
/// interquartile range, so one noisy round neither makes nor breaks a figure.
public struct Samples: CustomStringConvertible, Sendable {
  public private(set) var values: [Double] = []

  public init(_ values: [Double] = []) { self.values = values }

  public mutating func append(_ value: Double) { values.append(value) }

  public var median: Double { quantile(0.5) }

  /// The value below which `fraction` of the samples lie (linear between neighbours).
  public func quantile(_ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let position = fraction * Double(sorted.count - 1)
    let below = Int(position.rounded(.down))
    let above = min(below + 1, sorted.count - 1)
    return sorted[below] + (sorted[above] - sorted[below]) * (position - Double(below))
  }

  /// `median (IQR low–high, n)` with the given number of decimals.
  public func formatted(_ decimals: Int = 0) -> String {
    let format = "%.\(decimals)f"
    return String(format: format, median) + " (IQR " + String(format: format, quantile(0.25)) + "–"
      + String(format: format, quantile(0.75)) + ", n=\(values.count))"
  }

  public var description: String { formatted() }

  /// The ratio of two quantities measured in the same rounds, round by round.
  public static func ratios(_ numerator: Samples, _ denominator: Samples) -> Samples {
    Samples(zip(numerator.values, denominator.values).map { $0 / $1 })
  }
}

/// Rounds in which every side runs once, in an order that rotates from round to round and runs
/// backwards every other round, so no side always runs first or always follows the same other side.
public func alternating(rounds: Int, sides: Int, _ body: (_ round: Int, _ side: Int) throws -> Void) rethrows {
  for round in 0..<rounds {
    for step in 0..<sides {
      let offset = round.isMultiple(of: 2) ? step : sides - step
      try body(round, (round + offset) % sides)
    }
  }
}

/// The wall time of `body`, in seconds.
public func seconds(_ body: () throws -> Void) rethrows -> Double {
  let clock = ContinuousClock()
  let elapsed = try clock.measure(body)
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The wall time of `body`, in seconds.
public func secondsAwaiting(_ body: () async throws -> Void) async rethrows -> Double {
  let clock = ContinuousClock()
  let start = clock.now
  try await body()
  let elapsed = clock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
