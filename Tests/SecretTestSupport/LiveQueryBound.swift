/// The most searches a live query (`.secretItems`) may make for a stream of changes lasting
/// `elapsed`, with refresh window `window`: the first change is searched at once and opens a
/// window; each window that closes with changes in it gives one search and opens the next, so
/// windows follow one another while changes keep coming; one more may close after the last change.
/// The burst test asserts it and `make bench` prints it beside the searches it counts.
public func liveQuerySearchBound(elapsed: Duration, window: Duration) -> Int {
  let windows = (elapsed / window).rounded(.up)
  return Int(windows) + 2
}
