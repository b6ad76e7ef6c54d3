// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("InternalImportsByDefault"),
  .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
  name: "swift-secrets",
  products: [
    .library(name: "Secrets", targets: ["Secrets"]),
    .library(name: "SharedState", targets: ["SharedState"]),
    .library(name: "SecretClient", targets: ["SecretClient"]),
    .library(name: "SecretsOpenBao", targets: ["SecretsOpenBao"]),
    .executable(name: "secretd", targets: ["secretd"]),
    .executable(name: "secretctl", targets: ["secretctl"]),
    .executable(name: "secretctl-bao", targets: ["secretctl-bao"]),
  ],
  targets: [
    // C libraries, as Debian ships them (scripts/bootstrap installs them).
    .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
    .systemLibrary(name: "CGio", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
    .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),
    // tpm2-tss's ESAPI, for the persistent collection's TPM unlocker.
    .systemLibrary(name: "CTPM2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
    // The few system calls Swift cannot make itself (variadic syscall, SCM_RIGHTS), as inline C.
    .systemLibrary(name: "CSystemCalls"),

    // Libraries.
    .target(
      name: "SecretClient",
      dependencies: ["CLibSecret", "GLibBridge", "SecretAddress", "SecretMemory", "SystemCalls", "TransferCrypto"],
      swiftSettings: swiftSettings),
    // Which item an address names: one rule for the client and secretd, which does not link the client.
    .target(name: "SecretAddress", swiftSettings: swiftSettings),
    // The transfer algorithm both ends of a Secret Service session run (DH, HKDF, AES), over libgcrypt.
    .target(
      name: "TransferCrypto", dependencies: ["CGcrypt", "SecretMemory", "SystemCalls"], swiftSettings: swiftSettings),
    // Secret bytes (SecretBytes) in locked memory that is wiped when released, for every module.
    .target(name: "SecretMemory", dependencies: ["SystemCalls"], swiftSettings: swiftSettings),
    // GErrors and GVariants in Swift, for the client and the daemon (GIO alone).
    .target(name: "GLibBridge", dependencies: ["CGio"], swiftSettings: swiftSettings),
    .target(name: "SharedState", dependencies: ["SystemCalls"], swiftSettings: swiftSettings),
    // The operating system's calls, typed (errno, descriptors, files, signals, time, processes, memory, locks,
    // terminals), for every module.
    .target(name: "SystemCalls", dependencies: ["CSystemCalls"], swiftSettings: swiftSettings),
    .target(
      name: "Secrets", dependencies: ["SharedState", "SecretClient", "SystemCalls"], swiftSettings: swiftSettings),
    // The same keys over OpenBao's KV v2 (its own HTTP/1.1 client over GIO), for fleets; its own
    // module so that nothing else carries an OpenBao client.
    .target(
      name: "SecretsOpenBao",
      dependencies: ["CGio", "GLibBridge", "Secrets", "SecretClient", "SecretMemory", "SharedState", "SystemCalls"],
      swiftSettings: swiftSettings),
    .target(
      name: "SecretDaemon",
      dependencies: [
        "CGio", "CSystemCalls", "CTPM2", "GLibBridge", "SecretAddress", "SecretMemory", "SystemCalls", "TransferCrypto",
      ],
      swiftSettings: swiftSettings),
    // The command-line parser and help of secretctl and secretd, and their version.
    .target(name: "CommandLineSyntax", swiftSettings: swiftSettings),
    .target(
      name: "SecretCLI",
      dependencies: [
        "SecretAddress", "SecretClient", "SecretMemory", "SystemCalls", "TransferCrypto", "CommandLineSyntax",
      ],
      swiftSettings: swiftSettings),

    // Executables.
    .executableTarget(
      name: "secretd", dependencies: ["SecretDaemon", "SystemCalls", "CommandLineSyntax"], swiftSettings: swiftSettings),
    .executableTarget(name: "secretctl", dependencies: ["SecretCLI", "SystemCalls"], swiftSettings: swiftSettings),
    // secretctl with OpenBao linked; secretctl hands it the commands that need OpenBao.
    .executableTarget(
      name: "secretctl-bao", dependencies: ["SecretCLI", "SecretMemory", "SecretsOpenBao"], swiftSettings: swiftSettings
    ),

    // Test support: private buses and real providers for every test target.
    .target(
      name: "SecretTestSupport", dependencies: ["SecretClient"], path: "Tests/SecretTestSupport",
      exclude: ["AllocationCounter", "SecretScan"], swiftSettings: swiftSettings),
    // Which tests may run here (root, mounting) and how a container check that cannot is reported.
    .target(
      name: "TestGates", dependencies: ["SecretTestSupport"], path: "Tests/TestGates", swiftSettings: swiftSettings),
    // Counts one thread's mallocs (allocation guards in the manner of swift-nio's): linked into
    // SharedStateChild only, whose process it replaces malloc for.
    .target(name: "AllocationCounting", path: "Tests/AllocationCounting"),
    .executableTarget(
      name: "SharedStateChild", dependencies: ["SharedState", "AllocationCounting"], path: "Tests/SharedStateChild",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "secrets-child", dependencies: ["Secrets", "SecretTestSupport"], path: "Tests/SecretsChild",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "secret-client-child", dependencies: ["SecretClient"], path: "Tests/SecretClientChild",
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SharedStateTests",
      dependencies: ["SharedState", "SharedStateChild", "SecretTestSupport", "favourites-example"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretsTests",
      dependencies: [
        "Secrets", "SecretsOpenBao", "SecretTestSupport", "secrets-child", "login-example", "shared-state-example",
        "credential-service", "secretctl",
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretsOpenBaoTests",
      dependencies: ["SecretsOpenBao", "Secrets", "SecretTestSupport", "secretctl", "secretctl-bao"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretClientTests", dependencies: ["SecretClient", "SecretTestSupport", "secret-client-child"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretCLITests", dependencies: ["SecretCLI", "SecretClient", "SecretTestSupport", "CommandLineSyntax"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "SecretDaemonTests",
      dependencies: [
        "GLibBridge", "SecretDaemon", "SecretClient", "SecretTestSupport", "TestGates", "TransferCrypto", "secretctl",
        "secretctl-bao", "credential-service",
      ],
      swiftSettings: swiftSettings),
    // What `make deb`, `make install`, the manual pages, the Makefile and the benchmark results promise.
    .testTarget(
      name: "PackagingTests", dependencies: ["SecretTestSupport", "TestGates", "secretctl", "secretd"],
      swiftSettings: swiftSettings),

    // The README's examples.
    .executableTarget(
      name: "secret-client-example", dependencies: ["SecretClient"], path: "Examples/SecretClientExample",
      swiftSettings: swiftSettings),

    .executableTarget(
      name: "openbao-example", dependencies: ["Secrets", "SecretsOpenBao"], path: "Examples/OpenBaoExample",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "shared-state-example", dependencies: ["SharedState"], path: "Examples/SharedStateExample",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "favourites-example", dependencies: ["SharedState"], path: "Examples/FavouritesExample",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "login-example", dependencies: ["Secrets"], path: "Examples/LoginExample", swiftSettings: swiftSettings),
    .executableTarget(
      name: "account-picker", dependencies: ["Secrets"], path: "Examples/AccountPicker", swiftSettings: swiftSettings),
    // A service that reads its secret as a systemd credential; its user unit lies beside it.
    .executableTarget(
      name: "credential-service", dependencies: ["Secrets"], path: "Examples/CredentialService",
      exclude: ["credential-service.service"], swiftSettings: swiftSettings),

    // Benchmarks (`make bench`).
    .target(name: "BenchmarkSupport", path: "Benchmarks/BenchmarkSupport", swiftSettings: swiftSettings),
    // A libsecret client, the sides of a comparison (Subject) and a provider process's CPU and memory, for the
    // benchmarks of providers.
    .target(
      name: "ProviderBenchmarkSupport", dependencies: ["BenchmarkSupport", "CLibSecret", "SecretTestSupport"],
      path: "Benchmarks/ProviderBenchmarkSupport",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretClientBenchmark",
      dependencies: ["SecretClient", "CLibSecret", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretClientBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SharedStateBenchmark", dependencies: ["SharedState", "BenchmarkSupport"],
      path: "Benchmarks/SharedStateBenchmark",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretsBenchmark", dependencies: ["Secrets", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretsBenchmark",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "OpenBaoBenchmark", dependencies: ["Secrets", "SecretsOpenBao", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/OpenBaoBenchmark", swiftSettings: swiftSettings),
    // The least a lookup costs within secretctl's design, timed by SecretctlBenchmark.
    .executableTarget(
      name: "lookup-floor", dependencies: ["CLibSecret", "SecretMemory", "TransferCrypto"],
      path: "Benchmarks/LookupFloor",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretctlBenchmark", dependencies: ["SecretCLI", "SecretClient", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretctlBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "TrustComparison", dependencies: ["SecretTestSupport"], path: "Benchmarks/TrustComparison",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretdFairnessBenchmark", dependencies: ["CGio", "CLibSecret", "SecretTestSupport"],
      path: "Benchmarks/SecretdFairnessBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretdBenchmark", dependencies: ["ProviderBenchmarkSupport", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretdBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretdRestartBenchmark",
      dependencies: ["CLibSecret", "ProviderBenchmarkSupport", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretdRestartBenchmark", swiftSettings: swiftSettings),
    .executableTarget(
      name: "SecretdPersistenceBenchmark",
      dependencies: ["CLibSecret", "ProviderBenchmarkSupport", "SecretTestSupport", "BenchmarkSupport"],
      path: "Benchmarks/SecretdPersistenceBenchmark", swiftSettings: swiftSettings),
  ],
  swiftLanguageModes: [.v6]
)
