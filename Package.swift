// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("InternalImportsByDefault"),
  .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
  name: "swift-secrets",
  products: [
    .library(name: "SecretClient", targets: ["SecretClient"]),
    .executable(name: "secretd", targets: ["secretd"]),
    .executable(name: "secretctl", targets: ["secretctl"]),
  ],
  targets: [
    // C libraries, as Debian ships them (scripts/bootstrap installs them).
    .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
    .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),

    // Libraries.
    .target(name: "SecretClient", dependencies: ["CLibSecret"], swiftSettings: swiftSettings),
    .target(name: "SecretDaemon", dependencies: ["CLibSecret", "CGcrypt"], swiftSettings: swiftSettings),
    .target(name: "SecretCLI", dependencies: ["SecretClient"], swiftSettings: swiftSettings),

    // Executables.
    .executableTarget(name: "secretd", dependencies: ["SecretDaemon"], swiftSettings: swiftSettings),
    .executableTarget(name: "secretctl", dependencies: ["SecretCLI"], swiftSettings: swiftSettings),

    // Test support: private buses and real providers for every test target.
    .target(
      name: "SecretTestSupport", dependencies: ["SecretClient"], path: "Tests/SecretTestSupport",
      swiftSettings: swiftSettings),
    .testTarget(name: "SecretClientTests", dependencies: ["SecretClient", "SecretTestSupport"], swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretCLITests", dependencies: ["SecretCLI", "SecretClient", "SecretTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretDaemonTests", dependencies: ["SecretDaemon", "SecretClient", "SecretTestSupport"],
      swiftSettings: swiftSettings),

    // The README's examples.
    .executableTarget(
      name: "secret-client-example", dependencies: ["SecretClient"], path: "Examples/SecretClientExample",
      swiftSettings: swiftSettings),

    // Benchmarks (`make bench`).
    .executableTarget(
      name: "SecretClientBenchmark", dependencies: ["SecretClient", "CLibSecret", "SecretTestSupport"],
      path: "Benchmarks/SecretClientBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretctlBenchmark", dependencies: ["SecretCLI", "SecretClient", "SecretTestSupport"],
      path: "Benchmarks/SecretctlBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretdBenchmark", dependencies: ["CLibSecret", "SecretTestSupport"],
      path: "Benchmarks/SecretdBenchmark", swiftSettings: swiftSettings),
  ],
  swiftLanguageModes: [.v6]
)
