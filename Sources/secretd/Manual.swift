// secretd(8), generated from the option table, as --help is.
import CommandLineSyntax
import SecretDaemon

extension Options {
  /// What `secretd --manual` prints: the manual page in man(7) markup. Defaults that depend on
  /// the machine (the memory budget) are described, not given, since the page is made once.
  static var manualPage: String {
    let flags =
      flags.filter { flag in !Limit.allCases.contains { $0.flag == flag.name } }
      + Limit.allCases.map { limitFlag($0, here: false) }
    return ManualPage(
      name: "secretd", section: 8, summary: "an in-memory freedesktop Secret Service provider",
      source: "swift-secrets \(swiftSecretsVersion)",
      sections: [
        .init(
          "SYNOPSIS",
          [
            .synopsis("secretd", "[OPTION...]"), .synopsis("secretd", "run [OPTION...] -- COMMAND [ARGUMENT...]"),
            .synopsis("secretd", "--agent [-s|-c|--fish] [--kill] [OPTION...]"),
          ]),
        .init("DESCRIPTION", [.text(description), .paragraph(activation), .text(headless)]),
        .init("OPTIONS", [.options(flags.map(\.spec) + [help, versionOption, manualOption])]),
        .init("FILES", [.definitions(files)]),
        .init("SEE ALSO", [.paragraph("`secretctl`(1), `secret-tool`(1), `systemd.exec`(5)")]),
      ]
    ).roff
  }

  private static let activation = """
    Installed from the package, secretd serves no one until a user chooses it: `secretctl setup` \
    makes it that user's Secret Service (the D-Bus activation file in the user's own data \
    folder, and the user unit enabled), `secretctl setup --undo` gives the name back to \
    whichever provider the system offers (gnome-keyring, for one).
    """

  private static let files: [(term: String, description: String)] = [
    (
      "/usr/lib/systemd/user/secretd.service",
      "The user unit, with its sandbox. Its LimitMEMLOCK (8 MiB on stock Debian) sets the memory budget: "
        + "raise it with `systemctl edit user@.service`, as root."
    ),
    (
      "/usr/lib/systemd/user/secretd-credentials.socket",
      "The socket at $XDG_RUNTIME_DIR/secretd/credentials from which units load credentials "
        + "(LoadCredential=ID:%t/secretd/credentials; see `secretctl credential`)."
    ),
    (
      "~/.local/share/dbus-1/services/org.freedesktop.secrets.service",
      "The activation file `secretctl setup` writes: the session bus starts secretd.service for the first client."
    ),
  ]
}
