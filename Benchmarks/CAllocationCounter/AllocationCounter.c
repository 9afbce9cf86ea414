// Wraps glibc's malloc family to count the calling thread's heap allocations.
//
// Defining these symbols in the executable makes every image (libswiftCore, Foundation, ...)
// resolve to them first; they forward to glibc's internal entry points, so no dlsym and no
// recursion. The count is thread-local: parallel tests and other threads do not disturb it.

#include "CAllocationCounter.h"

#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#    define PUSHCORE_SANITIZED 1
#  endif
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(PUSHCORE_SANITIZED)

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread uint64_t thread_allocations __attribute__((tls_model("initial-exec")));

bool pushcore_allocation_counting_available(void) { return true; }

uint64_t pushcore_thread_allocation_count(void) { return thread_allocations; }

void *malloc(size_t size) {
    thread_allocations += 1;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    thread_allocations += 1;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    // Growing in place is not a new allocation as far as callers can tell, but realloc may move;
    // count every call that asks for memory, as allocation profilers do.
    if (size != 0) thread_allocations += 1;
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    thread_allocations += 1;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    thread_allocations += 1;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    thread_allocations += 1;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

#else

bool pushcore_allocation_counting_available(void) { return false; }

uint64_t pushcore_thread_allocation_count(void) { return 0; }

#endif
