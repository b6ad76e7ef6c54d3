#include "AllocationCounting.h"

#include <stddef.h>

// The C library's own allocator, which the functions below call.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);

// Per thread, so that other threads of the process are never counted.
static __thread int counting;
static __thread long allocations;

void *malloc(size_t size) {
  if (counting) allocations += 1;
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  if (counting) allocations += 1;
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  if (counting) allocations += 1;
  return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void allocation_counting_start(void) {
  allocations = 0;
  counting = 1;
}

long allocation_counting_stop(void) {
  counting = 0;
  return allocations;
}
