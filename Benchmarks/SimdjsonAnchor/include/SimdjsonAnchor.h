#ifndef PUSHCORE_SIMDJSON_ANCHOR_H
#define PUSHCORE_SIMDJSON_ANCHOR_H

// The bench's anchor: simdjson's DOM parser (Debian's libsimdjson-dev) behind a C interface.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The bytes simdjson may read past the end of a document; every input needs them allocated.
size_t simdjson_anchor_padding(void);

/// A DOM parser, reused for every document as a simdjson user would.
typedef struct simdjson_anchor_parser simdjson_anchor_parser;
simdjson_anchor_parser *simdjson_anchor_parser_create(void);
/// A parser pinned to one of simdjson's kernels ("icelake", "haswell", "westmere", "fallback"),
/// whatever the machine's best is; NULL when this machine cannot run that kernel.
simdjson_anchor_parser *simdjson_anchor_parser_create_with_kernel(const char *kernel);
/// The kernel simdjson picks on this machine: its name and description ("icelake", "Intel/AMD AVX512").
const char *simdjson_anchor_best_kernel(void);
const char *simdjson_anchor_best_kernel_description(void);
void simdjson_anchor_parser_destroy(simdjson_anchor_parser *parser);

/// Parses `length` bytes at `bytes` (followed by at least the padding) and reads every value:
/// keys and strings as simdjson hands them out (unescaped), numbers, booleans, nulls. Returns a
/// checksum of what it read, or -1 when simdjson refuses the document.
int64_t simdjson_anchor_parse_walk(simdjson_anchor_parser *parser, const uint8_t *bytes, size_t length);

#ifdef __cplusplus
}
#endif

#endif
