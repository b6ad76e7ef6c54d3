// Every figure the README gives comes from Benchmarks/RESULTS.md, the transcript `make bench`
// writes: each is the figure of one labelled line there, its median and both ends of its
// spread, and none is given without its spread. Nothing is typed in by hand or picked from a run.
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("benchmark figures")
struct BenchmarkFigureTests {
  static func text(_ path: String) throws -> String {
    try String(contentsOf: packageRoot.appending(path: path), encoding: .utf8)
  }

  /// Where each figure of the README's table comes from: for each row (by its first cell), the
  /// figure of RESULTS.md that each of its figures quotes, in order: the section, words of the
  /// lines it sits under or in (a heading, a table row, the line an indented line continues),
  /// and its own label (a table column, or the words just before it).
  static let sources: [String: [FigureSource]] = [
    "stores/s at 1,300 items": [
      FigureSource("SecretdBenchmark", ["At 1300 items", "secretd (memory)"], "stores/s"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "gnome-keyring session (memory)"], "stores/s, secretd is × faster"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "gnome-keyring login (disk)"], "stores/s, secretd is × faster"),
    ],
    "lookups/s at 1,300 items": [
      FigureSource("SecretdBenchmark", ["At 1300 items", "secretd (memory)"], "lookups/s"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "gnome-keyring session (memory)"], "lookups/s, secretd is × faster"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "gnome-keyring login (disk)"], "lookups/s, secretd is × faster"),
    ],
    "creates/s at 300 items (new items, not replacing)": [
      FigureSource("SecretdBenchmark", ["At 300 items", "secretd (memory)"], "creates/s"),
      FigureSource(
        "SecretdBenchmark", ["At 300 items", "gnome-keyring session (memory)"], "creates/s, secretd is × faster"),
    ],
    "secretd against its build before the arena (6ce752f), at 1,300 items": [
      FigureSource("SecretdBenchmark", ["At 1300 items", "secretd 6ce752f (memory)"], "stores/s, secretd is × faster"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "secretd 6ce752f (memory)"], "lookups/s, secretd is × faster"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "secretd 6ce752f (memory)"], "creates/s, secretd is × faster"),
    ],
    "from exec to serving, handed back 10,000 items": [
      FigureSource("SecretdRestartBenchmark", ["secretd handed 10000 items"], "ms to serving"),
      FigureSource("SecretdRestartBenchmark", ["secretd, empty"], "ms to serving"),
    ],
    "an honest client's lookup while two processes flood the provider (5,000 items)": [
      FigureSource("SecretdFairnessBenchmark", ["1. 5000 items", "secretd: idle"], "secretd: idle"),
      FigureSource("SecretdFairnessBenchmark", ["1. 5000 items", "secretd: idle"], "under flood"),
      FigureSource("SecretdFairnessBenchmark", ["1. 5000 items", "gnome-keyring: idle"], "gnome-keyring: idle"),
      FigureSource("SecretdFairnessBenchmark", ["1. 5000 items", "gnome-keyring: idle"], "under flood"),
    ],
    "the same while another lists 100,000 items, four calls at a time": [
      FigureSource("SecretdFairnessBenchmark", ["2. 100000 items", "secretd: idle"], "secretd: idle"),
      FigureSource("SecretdFairnessBenchmark", ["2. 100000 items", "secretd: idle"], "under flood"),
    ],
    "`secretctl get` against `secret-tool lookup`, and `secretctl git-credential get` against git's libsecret helper, process start to exit":
      [
        FigureSource("SecretctlBenchmark", ["secretd"], "ratio secretctl / secret-tool, run by run"),
        FigureSource("SecretctlBenchmark", ["gnome-keyring"], "ratio secretctl / secret-tool, run by run"),
        FigureSource("SecretctlBenchmark", ["secretd"], "ratio secretctl / git's helper, run by run"),
        FigureSource("SecretctlBenchmark", ["gnome-keyring"], "ratio secretctl / git's helper, run by run"),
      ],
    "SecretKey `save()` against one plain SecretClient write, on secretd": [
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "save()"),
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "one plain SecretClient write"),
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "save() / plain write, pair by pair"),
    ],
    "SharedState `withLock` against a `Mutex` with Observation's registrar told around it": [
      FigureSource("SharedStateBenchmark", ["1 thread"], "Shared/Mutex with registrar")
    ],
    "SecretKey over OpenBao against the same requests from python's `http.client`, both on one kept-alive connection": [
      FigureSource("OpenBaoBenchmark", ["save() vs a check-and-set POST"], "ratio SecretKey / plain, round by round"),
      FigureSource("OpenBaoBenchmark", ["load() vs a GET"], "ratio SecretKey / plain, round by round"),
    ],
  ]

  @Test(
    "every figure the README gives is the figure of its labelled line in Benchmarks/RESULTS.md, median and both ends of its spread, and none is without its spread"
  )
  func readmeFiguresAreTheirLinesOfTheTranscript() throws {
    let readme = try Self.text("README.md")
    let results = try Self.text("Benchmarks/RESULTS.md")
    let rows = BenchmarkFigures.readmeRows(readme)
    #expect(rows.flatMap(\.figures).count > 20, "the README's table of figures was not found")
    #expect(BenchmarkFigures.resultsFigures(results).count > 100, "the transcript's figures were not found")
    let problems = BenchmarkFigures.problems(readme: readme, results: results, sources: Self.sources)
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
  }

  /// A transcript and a README in the shape of the real ones, for the checker's controls.
  static let sampleResults = """
    ## SecretdBenchmark

    ```
    At 300 items:
    | | stores/s | secretd is × faster | lookups/s | secretd is × faster |
    |---|---|---|---|---|
    | secretd (memory) | 2137 (IQR 1942–2252, n=11) |  | 2080 (IQR 1734–2201, n=11) |  |
    | gnome-keyring session (memory) | 697 (IQR 638–734, n=11) | 3.11 (IQR 2.79–3.48, n=11) | 1308 (IQR 1161–1399, n=11) | 1.49 (IQR 1.37–1.75, n=11) |

    At 1300 items:
    | | stores/s | secretd is × faster | lookups/s | secretd is × faster |
    |---|---|---|---|---|
    | secretd (memory) | 1976 (IQR 1760–2149, n=11) |  | 2231 (IQR 1902–2742, n=11) |  |
    | gnome-keyring session (memory) | 176 (IQR 167–215, n=11) | 9.48 (IQR 9.16–12.28, n=11) | 1027 (IQR 967–1043, n=11) | 2.45 (IQR 1.98–2.55, n=11) |
    ```

    ## SecretsBenchmark

    ```
    SecretKey against secretd:
      save(): 0.76 (IQR 0.63–0.93, n=200) ms; one plain SecretClient write: 1.59 (IQR 1.34–1.95, n=200) ms
    SecretKey against gnome-keyring:
      save(): 1.76 (IQR 1.58–1.88, n=200) ms; one plain SecretClient write: 3.75 (IQR 3.33–4.54, n=200) ms
    ```
    """

  static let sampleSources: [String: [FigureSource]] = [
    "stores/s at 1,300 items": [
      FigureSource("SecretdBenchmark", ["At 1300 items", "secretd (memory)"], "stores/s"),
      FigureSource(
        "SecretdBenchmark", ["At 1300 items", "gnome-keyring session (memory)"], "stores/s, secretd is × faster"),
    ],
    "SecretKey `save()` against a plain write": [
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "save()"),
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "one plain SecretClient write"),
    ],
  ]

  static func sampleReadme(stores: String, save: String = "0.76 ms (IQR 0.63–0.93) against 1.59 ms (IQR 1.34–1.95)")
    -> String
  {
    """
    # A README

    ## Benchmarks

    Each figure is a median with its IQR.

    | what | figure |
    |---|---|
    | stores/s at 1,300 items | \(stores) |
    | SecretKey `save()` against a plain write | \(save) |

    ## Layout
    """
  }

  @Test(
    "the checker finds a median quoted from its spread, a figure without its spread, one from another line, a line it cannot tell apart and a row without a source"
  )
  func checkerControls() {
    func problems(_ readme: String, _ sources: [String: [FigureSource]] = Self.sampleSources) -> [String] {
      BenchmarkFigures.problems(readme: readme, results: Self.sampleResults, sources: sources)
    }
    let right = "secretd 1,976 (IQR 1,760–2,149): 9.48× (IQR 9.16–12.28) gnome-keyring's"
    #expect(problems(Self.sampleReadme(stores: right)) == [])
    // The upper end quoted as the median: every number is in the transcript, the figure is not.
    #expect(
      problems(Self.sampleReadme(stores: "secretd 2,149 (IQR 1,760–2,149): 9.48× (IQR 9.16–12.28)")) == [
        "stores/s at 1,300 items: 2149 (IQR 1760–2149) where RESULTS.md has 1976 (IQR 1760–2149) at SecretdBenchmark › At 1300 items › secretd (memory) › stores/s"
      ])
    #expect(
      problems(Self.sampleReadme(stores: right, save: "0.76 ms (IQR 0.63–0.93) against 1.59 ms")).contains(
        "SecretKey `save()` against a plain write: without a spread: [\"1.59\"]"))
    // The 300-item line's figures, named as such, under a row that says 1,300 items.
    var fromThe300Line = Self.sampleSources
    fromThe300Line["stores/s at 1,300 items"] = [
      FigureSource("SecretdBenchmark", ["At 300 items", "secretd (memory)"], "stores/s"),
      FigureSource(
        "SecretdBenchmark", ["At 300 items", "gnome-keyring session (memory)"], "stores/s, secretd is × faster"),
    ]
    #expect(
      problems(Self.sampleReadme(stores: "secretd 2,137 (IQR 1,942–2,252): 3.11× (IQR 2.79–3.48)"), fromThe300Line) == [
        "stores/s at 1,300 items: [\"1300\"] not stated by the lines of its figures"
      ])
    var ambiguous = Self.sampleSources
    ambiguous["SecretKey `save()` against a plain write"] = [
      FigureSource("SecretsBenchmark", ["SecretKey"], "save()"),
      FigureSource("SecretsBenchmark", ["SecretKey against secretd"], "one plain SecretClient write"),
    ]
    #expect(
      problems(Self.sampleReadme(stores: right), ambiguous) == [
        "SecretKey `save()` against a plain write: 2 figures of RESULTS.md at SecretsBenchmark › SecretKey › save()"
      ])
    var missing = Self.sampleSources
    missing["stores/s at 1,300 items"] = nil
    #expect(
      problems(Self.sampleReadme(stores: right), missing) == [
        "stores/s at 1,300 items: no source in RESULTS.md is named for this row"
      ])
  }

  @Test("RESULTS.md says where, when and with what it was measured, and how many rounds")
  func transcriptSaysHowItWasMade() throws {
    let results = try Self.text("Benchmarks/RESULTS.md")
    for field in [
      "- date: ", "- machine: ", "- toolchain: Swift version", "- commit: ", "- load average before the run: ",
    ] {
      #expect(results.contains("\n\(field)"), "RESULTS.md lacks \(field)")
    }
    #expect(results.contains("n="), "no figure says its number of rounds")
    #expect(results.contains("## SecretdBenchmark") && results.contains("## SecretsBenchmark"))
  }
}
