// The allocation counter of the benchmarks (Benchmarks/CAllocationCounter) as a library to
// LD_PRELOAD into a server: it counts every thread's heap allocations from the start, and writes
// the count so far to $ALLOCATION_COUNT_FILE on SIGUSR2. scripts/load-writes reads it before and
// after a wrk run to give allocations per request.
#include "../Benchmarks/CAllocationCounter/AllocationCounter.c"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static const char *count_file;

// Only async-signal-safe calls: open, write, close, and digits made by hand.
static void write_count(int signal) {
    (void)signal;
    char digits[24];
    int length = 0;
    uint64_t count = pushcore_process_allocation_count();
    char reversed[24];
    do {
        reversed[length++] = (char)('0' + count % 10);
        count /= 10;
    } while (count > 0);
    for (int index = 0; index < length; index++) digits[index] = reversed[length - 1 - index];
    digits[length++] = '\n';
    int file = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file < 0) return;
    ssize_t written = write(file, digits, (size_t)length);
    (void)written;
    close(file);
}

__attribute__((constructor)) static void start_counting(void) {
    count_file = getenv("ALLOCATION_COUNT_FILE");
    if (count_file == NULL) return;
    pushcore_count_process_allocations(true);
    signal(SIGUSR2, write_count);
}
