#ifndef C_ALLOCATION_COUNTER_H
#define C_ALLOCATION_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

/// True when this build counts allocations: Linux with glibc and no sanitizer runtime
/// (the sanitizers interpose the malloc family themselves).
bool pushcore_allocation_counting_available(void);

/// Heap allocations (malloc, calloc, realloc of a new block, posix_memalign, aligned_alloc,
/// memalign) made by the calling thread since it started. Always 0 where counting is unavailable.
uint64_t pushcore_thread_allocation_count(void);

/// Starts or stops counting every thread's allocations in one process-wide total.
void pushcore_count_process_allocations(bool on);

/// Allocations made by any thread while process-wide counting was on. Always 0 where counting is unavailable.
uint64_t pushcore_process_allocation_count(void);

#endif
