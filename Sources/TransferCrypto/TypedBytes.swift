// An array's bytes lent to a body whose error type is kept: `withUnsafeBytes` rethrows untyped
// errors, so the typed one is carried out in a Result (as SystemCalls does).

extension Array where Element == UInt8 {
  package func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }.get()
  }

  package mutating func withMutableRawBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R)
    throws(E)
    -> R
  {
    try withUnsafeMutableBytes { raw in Result { () throws(E) in try body(raw) } }.get()
  }
}
