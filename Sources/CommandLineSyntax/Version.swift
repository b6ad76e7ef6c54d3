/// The version of this package's programs (`secretd --version`, `secretctl --version`).
package let swiftSecretsVersion = "0.1.0"
