// Counts a process's heap allocations into a file another process reads, in the manner of
// swift-nio's allocation counters: loaded with LD_PRELOAD, it replaces malloc and its family with
// versions that count and then call glibc's own allocator (__libc_malloc and the rest, which
// glibc exports for this purpose). The counters live in a page of the file named by
// ALLOCATION_COUNTER_FILE, mapped shared, so the test reads them while the process runs.
// SecretTestSupport (AllocationCounter.swift) compiles this file; it is not part of any target.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

// [0] allocations, [1] frees, [2] bytes allocated; in the shared page.
static uint64_t *counters;

__attribute__((constructor)) static void allocation_counter_start(void) {
  const char *path = getenv("ALLOCATION_COUNTER_FILE");
  if (path == NULL) return;
  int file = open(path, O_RDWR | O_CLOEXEC);
  if (file < 0) return;
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
  close(file);
  if (page != MAP_FAILED) counters = page;
}

static void counted(void *pointer, size_t size) {
  if (pointer != NULL && counters != NULL) {
    __atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&counters[2], size, __ATOMIC_RELAXED);
  }
}

void *malloc(size_t size) {
  void *pointer = __libc_malloc(size);
  counted(pointer, size);
  return pointer;
}

void free(void *pointer) {
  if (pointer != NULL && counters != NULL) __atomic_fetch_add(&counters[1], 1, __ATOMIC_RELAXED);
  __libc_free(pointer);
}

void *calloc(size_t count, size_t size) {
  void *pointer = __libc_calloc(count, size);
  counted(pointer, count * size);
  return pointer;
}

// A realloc that moves or resizes is a free and an allocation, as swift-nio counts it.
void *realloc(void *old, size_t size) {
  if (old == NULL) return malloc(size);
  if (size == 0) {
    free(old);
    return NULL;
  }
  void *pointer = __libc_realloc(old, size);
  if (pointer != NULL && counters != NULL) __atomic_fetch_add(&counters[1], 1, __ATOMIC_RELAXED);
  counted(pointer, size);
  return pointer;
}

void *memalign(size_t alignment, size_t size) {
  void *pointer = __libc_memalign(alignment, size);
  counted(pointer, size);
  return pointer;
}

void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *pointer = memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *result = pointer;
  return 0;
}

void *valloc(size_t size) {
  void *pointer = __libc_valloc(size);
  counted(pointer, size);
  return pointer;
}

void *pvalloc(size_t size) {
  void *pointer = __libc_pvalloc(size);
  counted(pointer, size);
  return pointer;
}
