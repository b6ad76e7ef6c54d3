// errno as a typed error, in the manner of swift-system's `Errno`.
import Glibc

/// A failed system call's error number, with the system's text for it.
///
/// Match on the static members in `catch` clauses:
///
/// ```swift
/// do { try descriptor.writeAll(bytes) } catch Errno.brokenPipe { … }
/// ```
package struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  package let code: CInt

  package init(code: CInt) { self.code = code }

  /// The calling thread's `errno` right now.
  package static var current: Errno { Errno(code: errno) }

  /// The system's text, such as "No such file or directory". Wraps strerror_r.
  package var description: String {
    var buffer = [CChar](repeating: 0, count: 256)
    let text = buffer.withUnsafeMutableBufferPointer { buffer -> String? in
      guard let base = buffer.baseAddress else { return nil }
      // The XSI strerror_r: 0 when it wrote the text into the buffer.
      return strerror_r(code, base, buffer.count) == 0 ? String(cString: base) : nil
    }
    return text ?? "error \(code)"
  }

  package static let notPermitted = Errno(code: EPERM)
  package static let noSuchFile = Errno(code: ENOENT)
  package static let interrupted = Errno(code: EINTR)
  package static let ioError = Errno(code: EIO)
  package static let badDescriptor = Errno(code: EBADF)
  package static let wouldBlock = Errno(code: EAGAIN)
  package static let timedOut = Errno(code: ETIMEDOUT)
  package static let noMemory = Errno(code: ENOMEM)
  package static let permissionDenied = Errno(code: EACCES)
  package static let exists = Errno(code: EEXIST)
  package static let notDirectory = Errno(code: ENOTDIR)
  package static let invalidArgument = Errno(code: EINVAL)
  package static let tooManyOpenFiles = Errno(code: EMFILE)
  package static let systemTooManyOpenFiles = Errno(code: ENFILE)
  package static let noSpace = Errno(code: ENOSPC)
  package static let readOnlyFileSystem = Errno(code: EROFS)
  package static let brokenPipe = Errno(code: EPIPE)
  package static let quotaExceeded = Errno(code: EDQUOT)
  /// What `open` with `O_NOFOLLOW` gives for a symbolic link, and any path for a loop of them.
  package static let symbolicLinkLoop = Errno(code: ELOOP)

  package static func ~= (pattern: Errno, error: any Error) -> Bool {
    (error as? Errno) == pattern
  }
}

/// Runs `call` again while it fails with EINTR, and throws the errno of any other failure.
/// `call` reports failure the C way: a negative result with errno set.
package func retryingOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) throws(Errno) -> T {
  while true {
    let result = call()
    if result >= 0 { return result }
    let error = Errno.current
    if error != .interrupted { throw error }
  }
}
