// Counts the calls to malloc, calloc and realloc that one thread makes, in the manner of
// swift-nio's allocation counters. Linked into a test helper executable, whose malloc then
// stands in for the C library's for the whole process.
#ifndef ALLOCATION_COUNTING_H
#define ALLOCATION_COUNTING_H

/// Starts counting the calling thread's allocations from zero.
void allocation_counting_start(void);

/// Stops counting and returns how many allocations the calling thread made since the start.
long allocation_counting_stop(void);

#endif
