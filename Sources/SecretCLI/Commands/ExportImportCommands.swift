// export and import: a collection's items carried to another provider or machine, or kept as a
// backup, in one file sealed to a passphrase (ExportFile); and import straight from another
// provider that runs on another bus, such as gnome-keyring's login keyring while secretd takes
// over. An item is written to the address its attributes name, so importing twice duplicates
// nothing.
import CommandLineSyntax
import SecretAddress
import SecretClient
import SystemCalls
import TransferCrypto

enum ExportImportCommands {
  static let file = ArgumentSpec("FILE", "The export file.")
  static let collection = OptionSpec(
    "collection", value: "NAME", completions: ["default", "session"],
    help: "The collection to export from or import into: default, session, or an object path (default: default).")
  static let fromBus = OptionSpec(
    "from-bus", value: "ADDRESS",
    help: "Copy from the provider on this bus (its default collection, or --from-collection) instead of a file.")
  static let fromCollection = OptionSpec(
    "from-collection", value: "NAME", completions: ["default", "session"],
    help: "With --from-bus: the collection to copy (default: default).")
  /// A file larger than this is not an export (a million small items fit).
  static let largestFile = 512 * 1024 * 1024

  static let export = CommandSpec(
    "export", summary: "Write a collection's items to a file sealed to a passphrase.",
    discussion: """
      Every item of the collection (the default one unless --collection says) goes into FILE:
      labels, attributes, content types and secrets, sealed whole with AES-256-GCM under a key
      Argon2id derives from a passphrase, asked twice on the terminal with echo off or read
      from stdin with --password-stdin. Only Argon2id's costs are readable without it. FILE
      is made new, with mode 0600: an existing file is never replaced. `secretctl import FILE` reads it
      back, into any provider, on any machine. The collection must be unlocked.
      Exit status: 0 written, 1 no such collection, 2 usage error, 3 Secret Service error.
      """,
    arguments: [file], options: [collection, CollectionCommands.passwordStdin]
  ) { arguments, console throws(CLIError) in
    guard let path = arguments.argument(file.name) else { throw .usage("FILE is required") }
    guard !Files.exists(path) else { throw .usage("\(path.visible) exists: export writes a new file only") }
    let target = CollectionID(arguments.option(collection.long) ?? "default")
    let items = try readItems(from: console.client(), in: target)
    let passphrase = try CollectionCommands.readPassphrase(
      arguments, console: console, creating: true, prompt: "Passphrase for \(path): ")
    let sealed: [UInt8]
    do throws(SealingError) { sealed = try ExportFile.seal(items, passphrase: passphrase) } catch {
      throw .service("cannot seal the export: \(error); nothing was written")
    }
    try writeNew(path, sealed)
    console.report("exported \(count(items.count)) from \(target) to \(path)")
    return .success
  }

  static let `import` = CommandSpec(
    "import", summary: "Copy items from an export file, or from another provider, into a collection.",
    discussion: """
      Reads FILE, which `secretctl export` wrote, with its passphrase (asked on the terminal or
      read from stdin with --password-stdin), or with --from-bus ADDRESS the items of another
      running provider (gnome-keyring on another session bus, say), and writes each into the
      collection (the default one unless --collection says): the same label, attributes,
      content type and secret. An item whose attributes name one already there replaces it,
      so importing twice leaves one of each; an item that no attribute names (a note, with only
      its schema), or a second one named alike, is added beside the others each time.
      Exit status: 0 imported, 1 no such collection or file, 2 usage error (a wrong passphrase among
      them), 3 Secret Service error.
      """,
    arguments: [ArgumentSpec("FILE", "The export file (not with --from-bus).", optional: true)],
    options: [collection, CollectionCommands.passwordStdin, fromBus, fromCollection]
  ) { arguments, console throws(CLIError) in
    let items: [ExportedItem]
    if let address = arguments.option(fromBus.long) {
      guard arguments.argument(file.name) == nil else { throw .usage("give FILE or --from-bus, not both") }
      let source = CollectionID(arguments.option(fromCollection.long) ?? "default")
      items = try readItems(
        from: SecretClient(bus: .address(address)), in: source,
        unlocking: "DBUS_SESSION_BUS_ADDRESS='\(address)' secretctl unlock \(source)")
    } else {
      guard let path = arguments.argument(file.name) else { throw .usage("FILE (or --from-bus ADDRESS) is required") }
      items = try readFile(path, arguments, console)
    }
    let target = CollectionID(arguments.option(collection.long) ?? "default")
    let client = console.client()
    var written = Set<[String: String]>()
    for (index, item) in items.enumerated() {
      let address = AddressRule.address(of: item.attributes)
      // An item no address names (a note: only its schema), or a second one named alike (which
      // a provider may hold), is added: written by address, it would replace the one before.
      let adds = address.isEmpty || written.contains(address)
      written.insert(address)
      do throws(SecretError) {
        if adds {
          _ = try client.add(item.value, attributes: item.attributes, label: item.label, in: target)
        } else {
          try client.write(item.value, attributes: item.attributes, label: item.label, in: target, exactly: true)
        }
      } catch {
        let done = CLIError(error)
        throw CLIError(status: done.status, "\(done.message) (after \(count(index)) of \(items.count) were imported)")
      }
    }
    console.report("imported \(count(items.count)) into \(target)")
    return .success
  }

  static let all = [export, `import`]

  /// Every item of `source`, secrets included; items without attributes cannot be written
  /// again, and a locked one cannot be read (`unlocking` is the command that unlocks it): either
  /// is an error.
  private static func readItems(
    from client: SecretClient, in source: CollectionID, unlocking: String = "secretctl unlock"
  ) throws(CLIError)
    -> [ExportedItem]
  {
    let found = try service(client) { () throws(SecretError) in
      try client.search([:], includeSecrets: true, in: source)
    }
    return try found.map { (item) throws(CLIError) in
      guard let value = item.secret else {
        throw .service("\(item.path) is locked: unlock \(source) (`\(unlocking)`) and try again")
      }
      guard !item.attributes.isEmpty else {
        throw .service("\(item.path) has no attributes, so no address to write it to; give it some first")
      }
      return ExportedItem(label: item.label, attributes: item.attributes, value: value)
    }
  }

  /// Writes `bytes` to a file made now at `path` (never one that exists by then), mode 0600,
  /// synced before it is reported written.
  private static func writeNew(_ path: String, _ bytes: [UInt8]) throws(CLIError) {
    let file: FileDescriptor
    do throws(Errno) {
      file = try FileDescriptor.open(
        path, .writeOnly, options: [.create, .exclusiveCreate], permissions: .ownerReadWrite)
    } catch {
      throw .usage("cannot create \(path.visible) (\(error)): export writes a new file only; nothing was written")
    }
    defer { file.close() }
    do throws(Errno) {
      try bytes.withRawBytes { (raw) throws(Errno) in try file.writeAll(raw) }
      try file.sync()
    } catch {
      try? Files.remove(path)
      throw .service("cannot write \(path.visible): \(error); nothing was written")
    }
  }

  private static func readFile(_ path: String, _ arguments: ParsedArguments, _ console: Console) throws(CLIError)
    -> [ExportedItem]
  {
    let file: FileDescriptor
    do throws(Errno) { file = try FileDescriptor.open(path, .readOnly) } catch .noSuchFile {
      throw .notFound("no file \(path.visible)")
    } catch {
      throw .usage("cannot read \(path.visible): \(error)")
    }
    defer { file.close() }
    // Read no further than an export can be: a FIFO or a device never fills memory.
    let bytes: [UInt8]
    do throws(Errno) { bytes = try file.readAll(limit: largestFile) } catch {
      throw .usage("cannot read \(path.visible): \(error)")
    }
    guard bytes.count <= largestFile else { throw .usage("\(path.visible) is too large to be an export") }
    let passphrase = try CollectionCommands.readPassphrase(
      arguments, console: console, creating: false, prompt: "Passphrase for \(path): ")
    do throws(ExportFileError) { return try ExportFile.open(bytes, passphrase: passphrase) } catch {
      throw .usage("cannot import \(path.visible): \(error); nothing was imported")
    }
  }

  private static func count(_ items: Int) -> String { items == 1 ? "1 item" : "\(items) items" }
}
