// Wraps glibc's malloc family to count the calling thread's heap allocations.
//
// Defining these symbols in the executable makes every image (libswiftCore, Foundation, ...)
// resolve to them first; they forward to glibc's internal entry points, so no dlsym and no
// recursion. The count is thread-local: parallel tests and other threads do not disturb it.
// A process-wide count, for work spread over threads (a client and a server on event loops),
// is kept only while switched on, so that the other measurements pay no shared atomic.

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
static bool counting_process;
static uint64_t process_allocations;

static inline void count_allocation(void) {
    thread_allocations += 1;
    if (__atomic_load_n(&counting_process, __ATOMIC_RELAXED)) __atomic_fetch_add(&process_allocations, 1, __ATOMIC_RELAXED);
}

bool pushcore_allocation_counting_available(void) { return true; }

uint64_t pushcore_thread_allocation_count(void) { return thread_allocations; }

void pushcore_count_process_allocations(bool on) { __atomic_store_n(&counting_process, on, __ATOMIC_SEQ_CST); }

uint64_t pushcore_process_allocation_count(void) { return __atomic_load_n(&process_allocations, __ATOMIC_SEQ_CST); }

void *malloc(size_t size) {
    count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    // Growing in place is not a new allocation as far as callers can tell, but realloc may move;
    // count every call that asks for memory, as allocation profilers do.
    if (size != 0) count_allocation();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

#else

bool pushcore_allocation_counting_available(void) { return false; }

uint64_t pushcore_thread_allocation_count(void) { return 0; }

void pushcore_count_process_allocations(bool on) { (void)on; }

uint64_t pushcore_process_allocation_count(void) { return 0; }

#endif
