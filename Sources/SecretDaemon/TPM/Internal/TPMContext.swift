// tpm2-tss's ESAPI: the only file of SecretDaemon that calls Esys_*, Tss2_TctiLdr_* or Tss2_MU_*;
// every response code becomes a TPMError here. Every call blocks until the TPM answers: callers
// run before secretd serves, or on a thread of their own, never on Swift's cooperative pool.
import CTPM2
import SecretMemory
import SystemCalls

/// An ESAPI handle of a transient object or session.
typealias TPMHandle = ESYS_TR

/// A connection to one TPM 2.0 through ESAPI, over the TCTI that tpm2-tss's loader makes from a
/// configuration string. Owns the TCTI and ESAPI contexts and finalises both in deinit (which
/// closes the connection: a resource manager such as /dev/tpmrm0 then flushes what is left).
final class TPMContext {
  private var tcti: OpaquePointer?
  private var esys: OpaquePointer?

  /// Connects to the TPM `configuration` names (`device:/dev/tpmrm0`, `swtpm:path=SOCKET`, …;
  /// nil: the loader's default). Wraps Tss2_TctiLdr_Initialize and Esys_Initialize.
  init(tcti configuration: String?) throws(TPMError) {
    let loaded = withOptionalCString(configuration) { name in
      var context: OpaquePointer?
      return (code: Tss2_TctiLdr_Initialize(name, &context), context: context)
    }
    guard loaded.code == TSS2_RC_SUCCESS, let loadedTCTI = loaded.context else {
      throw .unreachable(tcti: configuration, Self.response("Tss2_TctiLdr_Initialize", loaded.code))
    }
    tcti = loadedTCTI
    let code = Esys_Initialize(&esys, loadedTCTI, nil)
    guard code == TSS2_RC_SUCCESS, esys != nil else {
      Tss2_TctiLdr_Finalize(&tcti)
      tcti = nil
      throw .unreachable(tcti: configuration, Self.response("Esys_Initialize", code))
    }
  }

  deinit {
    if esys != nil { Esys_Finalize(&esys) }
    if tcti != nil { Tss2_TctiLdr_Finalize(&tcti) }
  }

  // MARK: Objects

  /// The primary key of the owner hierarchy that `template` describes: the TPM derives it from
  /// its owner seed, so the same template gives the same key on the same TPM. The owner's
  /// password is taken to be empty. Wraps Esys_CreatePrimary.
  func createPrimary(_ template: TPM2B_PUBLIC) throws(TPMError) -> TPMHandle {
    var inPublic = template
    var sensitive = TPM2B_SENSITIVE_CREATE()
    var outsideInfo = TPM2B_DATA()
    var creationPCR = TPML_PCR_SELECTION()
    var handle = ESYS_TR(ESYS_TR_NONE)
    let code = Esys_CreatePrimary(
      esys, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      &sensitive, &inPublic, &outsideInfo, &creationPCR, &handle, nil, nil, nil, nil)
    guard code == TSS2_RC_SUCCESS else { throw .noStorageKey(Self.response("Esys_CreatePrimary", code)) }
    return handle
  }

  /// Seals `data` (at most 128 bytes) in a new object of `template` under `parent`, the command
  /// authorised by `session`; returns the object's public and private areas, marshalled. The
  /// data is written into locked memory for the command, wiped when the call returns.
  /// Wraps Esys_Create.
  func create(sealing data: SecretBytes, template: TPM2B_PUBLIC, parent: TPMHandle, session: TPMHandle)
    throws(TPMError) -> (publicArea: [UInt8], privateArea: [UInt8])
  {
    let layout = MemoryLayout<TPM2B_SENSITIVE_CREATE>.self
    guard let sensitive = SecretBytes(lockedCount: layout.size) else { throw .noLockedMemory(bytes: layout.size) }
    guard let dataOffset = layout.offset(of: \.sensitive.data.buffer),
      data.count <= layout.size - dataOffset
    else { throw .malformed("\(data.count) bytes are more than a sealed object holds") }
    var inPublic = template
    var outsideInfo = TPM2B_DATA()
    var creationPCR = TPML_PCR_SELECTION()
    var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
    var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
    let code = try sensitive.withUnsafeMutableBytes { (raw) throws(TPMError) -> TSS2_RC in
      guard let base = raw.baseAddress else { throw .noLockedMemory(bytes: layout.size) }
      data.withUnsafeBytes { source in
        guard let start = source.baseAddress else { return }
        base.advanced(by: dataOffset).copyMemory(from: start, byteCount: source.count)
      }
      return base.withMemoryRebound(to: TPM2B_SENSITIVE_CREATE.self, capacity: 1) { request in
        request.pointee.sensitive.data.size = UInt16(data.count)
        return Esys_Create(
          esys, parent, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), request, &inPublic, &outsideInfo,
          &creationPCR, &outPrivate, &outPublic, nil, nil, nil)
      }
    }
    defer {
      Esys_Free(outPrivate)
      Esys_Free(outPublic)
    }
    guard code == TSS2_RC_SUCCESS else { throw .refused(Self.response("Esys_Create", code)) }
    guard let outPrivate, let outPublic else { throw .malformed("Esys_Create returned no object") }
    return (
      try Self.marshal(outPublic, "Tss2_MU_TPM2B_PUBLIC_Marshal", Tss2_MU_TPM2B_PUBLIC_Marshal),
      try Self.marshal(outPrivate, "Tss2_MU_TPM2B_PRIVATE_Marshal", Tss2_MU_TPM2B_PRIVATE_Marshal)
    )
  }

  /// Loads a sealed object from its marshalled areas under `parent`. A TPM that did not seal it
  /// under this parent (another TPM, or a cleared owner hierarchy) refuses its integrity.
  /// Wraps Tss2_MU_TPM2B_PUBLIC_Unmarshal, Tss2_MU_TPM2B_PRIVATE_Unmarshal and Esys_Load.
  func load(publicArea: [UInt8], privateArea: [UInt8], parent: TPMHandle) throws(TPMError) -> TPMHandle {
    var inPublic = try Self.unmarshal(publicArea, as: TPM2B_PUBLIC(), "public area", Tss2_MU_TPM2B_PUBLIC_Unmarshal)
    var inPrivate = try Self.unmarshal(
      privateArea, as: TPM2B_PRIVATE(), "private area", Tss2_MU_TPM2B_PRIVATE_Unmarshal)
    var handle = ESYS_TR(ESYS_TR_NONE)
    let code = Esys_Load(
      esys, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &inPrivate, &inPublic,
      &handle)
    guard code == TSS2_RC_SUCCESS else {
      let response = Self.response("Esys_Load", code)
      throw Self.isIntegrityFailure(code) ? .foreignObject(response) : .refused(response)
    }
    return handle
  }

  /// The data sealed in `object`, into locked memory; ESAPI's copy is wiped and freed.
  /// Wraps Esys_Unseal.
  func unseal(_ object: TPMHandle, session: TPMHandle) throws(TPMError) -> SecretBytes {
    var output: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
    let code = Esys_Unseal(esys, object, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &output)
    let layout = MemoryLayout<TPM2B_SENSITIVE_DATA>.self
    defer {
      if let output { Memory.wipe(UnsafeMutableRawBufferPointer(start: output, count: layout.size)) }
      Esys_Free(output)
    }
    guard code == TSS2_RC_SUCCESS else { throw .refused(Self.response("Esys_Unseal", code)) }
    guard let output, let offset = layout.offset(of: \.buffer) else { throw .malformed("Esys_Unseal returned nothing") }
    let count = Int(output.pointee.size)
    guard count <= layout.size - offset else { throw .malformed("Esys_Unseal returned \(count) bytes") }
    guard let secret = SecretBytes(lockedCount: count) else { throw .noLockedMemory(bytes: count) }
    secret.withUnsafeMutableBytes { target in
      guard let start = target.baseAddress else { return }
      start.copyMemory(from: UnsafeRawPointer(output).advanced(by: offset), byteCount: count)
    }
    return secret
  }

  /// Forgets a transient object or session in the TPM. A failure is not reported: the TPM drops
  /// transient objects when the connection closes (resource manager) or at its next start.
  /// Wraps Esys_FlushContext.
  func flush(_ handle: TPMHandle) {
    _ = Esys_FlushContext(esys, handle)
  }

  // MARK: Sessions

  /// An HMAC session salted with `key` (so its session key never crosses the wire in clear)
  /// that encrypts parameters with AES-128-CFB. Wraps Esys_StartAuthSession.
  func startEncryptedSession(saltedTo key: TPMHandle) throws(TPMError) -> TPMHandle {
    var symmetric = TPMT_SYM_DEF()
    symmetric.algorithm = TPM2_ALG_AES
    symmetric.keyBits.aes = 128
    symmetric.mode.aes = TPM2_ALG_CFB
    var session = ESYS_TR(ESYS_TR_NONE)
    let code = Esys_StartAuthSession(
      esys, key, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
      TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, &session)
    guard code == TSS2_RC_SUCCESS else { throw .refused(Self.response("Esys_StartAuthSession", code)) }
    return session
  }

  /// Which parameter the session encrypts in the next command: the command's first (the
  /// secret sent) or the response's first (the secret returned); the session stays open.
  /// Wraps Esys_TRSess_SetAttributes.
  func encrypt(_ session: TPMHandle, command: Bool = false, response: Bool = false) throws(TPMError) {
    let attributes =
      TPMA_SESSION(TPMA_SESSION_CONTINUESESSION) | (command ? TPMA_SESSION(TPMA_SESSION_DECRYPT) : 0)
      | (response ? TPMA_SESSION(TPMA_SESSION_ENCRYPT) : 0)
    let code = Esys_TRSess_SetAttributes(esys, session, attributes, 0xff)
    guard code == TSS2_RC_SUCCESS else { throw .refused(Self.response("Esys_TRSess_SetAttributes", code)) }
  }

  // MARK: Codes and bytes

  private static func response(_ call: String, _ code: TSS2_RC) -> TPMResponse {
    TPMResponse(call: call, code: code, text: Tss2_RC_Decode(code).map { String(cString: $0) } ?? "unknown")
  }

  /// TPM_RC_INTEGRITY from the TPM itself, whatever handle, session or parameter it names
  /// (the low bits of a format-one code).
  private static func isIntegrityFailure(_ code: TSS2_RC) -> Bool {
    let formatOne = TSS2_RC(TPM2_RC_FMT1)
    return code & ctpm2_rc_layer_mask == ctpm2_tpm_rc_layer && code & formatOne != 0
      && code & (formatOne | 0x3f) == ctpm2_rc_integrity
  }

  private static func marshal<Value>(
    _ value: UnsafePointer<Value>, _ call: String,
    _ function: (UnsafePointer<Value>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
  ) throws(TPMError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MemoryLayout<Value>.size)
    var offset = 0
    let code = function(value, &bytes, bytes.count, &offset)
    guard code == TSS2_RC_SUCCESS else { throw .refused(response(call, code)) }
    return Array(bytes.prefix(offset))
  }

  /// `bytes` read whole as one marshalled value; anything left over is refused.
  private static func unmarshal<Value>(
    _ bytes: [UInt8], as initial: Value, _ what: String,
    _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Value>?) -> TSS2_RC
  ) throws(TPMError) -> Value {
    var value = initial
    var offset = 0
    let code = function(bytes, bytes.count, &offset, &value)
    guard code == TSS2_RC_SUCCESS else {
      throw .malformed("the sealed object's \(what) does not read (\(response("Tss2_MU", code).text))")
    }
    guard offset == bytes.count else { throw .malformed("\(bytes.count - offset) bytes after its \(what)") }
    return value
  }
}

/// `body` with a C string of `text`, or NULL.
private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
  guard let text else { return body(nil) }
  return text.withCString { body($0) }
}
