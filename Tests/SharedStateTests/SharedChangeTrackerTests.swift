import SharedState
import Synchronization
import Testing

/// A tracker records changes while code runs; an assertion then states them.
@Suite("SharedChangeTracker")
struct SharedChangeTrackerTests {
  @Test func insideAssertAHandleShowsTheValueFromBeforeTheTrackedChange() {
    let log = IssueLog()
    testEnvironment(log: log).withValue {
      @Shared(value: 10) var score
      let tracker = SharedChangeTracker()
      tracker.track { $score.withLock { $0 += 5 } }
      #expect(score == 15)
      #expect(tracker.hasChanges)
      tracker.assert {
        #expect(score == 10, "the snapshot is the value before the change")
        #expect($score != $score, "the snapshot and the value differ until the change is stated")
        $score.withLock { $0 += 5 }
        #expect($score == $score)
      }
      #expect(score == 15, "an assertion changed the real value")
    }
    #expect(log.all.isEmpty, "\(log.all)")
  }

  @Test func aChangeNoAssertionCoveredIsReportedWhenTheTrackerGoes() {
    let log = IssueLog()
    testEnvironment(log: log).withValue {
      @Shared(value: 1) var level
      do {
        let tracker = SharedChangeTracker()
        tracker.track { $level.withLock { $0 = 2 } }
      }
    }
    let report = log.all.first
    #expect(report?.contains("Shared<Int>(value: 2)") == true, "\(log.all)")
    #expect(report?.contains("from 1 to 2") == true, "\(log.all)")
    #expect(report?.contains("SharedChangeTrackerTests.swift:") == true, "the report does not say where")
  }

  @Test func aTrackerMadeNotToReportStaysSilent() {
    let log = IssueLog()
    testEnvironment(log: log).withValue {
      @Shared(value: 1) var level
      do {
        let tracker = SharedChangeTracker(reportUnassertedChanges: false)
        tracker.track { $level.withLock { $0 = 2 } }
        #expect(tracker.hasChanges)
      }
    }
    #expect(log.all.isEmpty)
  }

  @Test func resetForgetsTheChanges() {
    let log = IssueLog()
    testEnvironment(log: log).withValue {
      @Shared(value: 1) var level
      let tracker = SharedChangeTracker()
      tracker.track { $level.withLock { $0 = 2 } }
      tracker.reset()
      #expect(!tracker.hasChanges)
      tracker.assert { #expect(level == 2) }
    }
    #expect(log.all.isEmpty)
  }

  @Test func membersOfOneValueAreComparedWithTheirOwnPartOfTheSnapshot() {
    struct Flags: Equatable, Sendable {
      var sound = false
      var haptics = false
    }
    testEnvironment().withValue {
      @Shared(value: Flags()) var flags
      let tracker = SharedChangeTracker()
      tracker.track { $flags.sound.withLock { $0 = true } }
      tracker.assert {
        #expect($flags.sound != $flags.sound)
        #expect($flags.haptics == $flags.haptics)
        #expect($flags.sound == $flags.haptics, "two members compare their snapshots")
        $flags.sound.withLock { $0 = true }
        #expect($flags == $flags)
      }
    }
  }

  @Test func handlesOfOtherValuesAreComparedByValueAndLeftUnasserted() {
    let log = IssueLog()
    testEnvironment(log: log).withValue {
      @Shared(value: 0) var changed
      @Shared(value: 0) var untouched
      let tracker = SharedChangeTracker()
      tracker.track { $changed.withLock { $0 = 1 } }
      tracker.assert {
        #expect($changed == $untouched, "the snapshot of one and the value of the other")
      }
    }
    #expect(log.all.count == 1, "comparing two values asserted a change: \(log.all)")
  }

  @Test func outsideAnyScopeHandlesReadAndWriteTheRealValue() {
    @Shared(value: 1) var plain
    let tracker = SharedChangeTracker(reportUnassertedChanges: false)
    tracker.track { $plain.withLock { $0 = 2 } }
    $plain.withLock { $0 = 3 }
    #expect(plain == 3)
    #expect($plain == $plain)
  }
}
