// The only C that PushCore sees of xxHash; imported by Sources/PushCore/Streaming/XXH3.swift alone.
//
// On x86-64 Debian's libxxhash also exports runtime-dispatched entry points (SSE2/AVX2/AVX-512
// chosen by CPUID at first call); the portable ones are compiled for the baseline CPU and run at
// SSE2 speed there. Elsewhere (arm64, Homebrew builds without dispatch) the portable entry points
// are the only ones and already use the best vector unit the build targets.
#ifndef PUSHCORE_CXXHASH_H
#define PUSHCORE_CXXHASH_H

#include <stddef.h>
#include <xxhash.h>

// xxh_x86dispatch.h renames the portable entry points to their `_dispatch` twins with macros
// (unless XXH_DISPATCH_DISABLE_REPLACE is defined), so the shims below, which Swift calls because
// it cannot see macros, reach the dispatched code whenever the header is there.
#if defined(__x86_64__) && defined(__linux__) && defined(__has_include)
#  if __has_include(<xxh_x86dispatch.h>)
#    undef XXH_DISPATCH_DISABLE_REPLACE
#    include <xxh_x86dispatch.h>
#    define PUSHCORE_XXH_DISPATCH 1
#  endif
#endif

static inline XXH64_hash_t pushcore_xxh3_64(const void *input, size_t length, XXH64_hash_t seed) {
    return XXH3_64bits_withSeed(input, length, seed);
}

static inline XXH128_hash_t pushcore_xxh3_128(const void *input, size_t length, XXH64_hash_t seed) {
    return XXH3_128bits_withSeed(input, length, seed);
}

static inline XXH_errorcode pushcore_xxh3_64_update(XXH3_state_t *state, const void *input, size_t length) {
    return XXH3_64bits_update(state, input, length);
}

static inline XXH_errorcode pushcore_xxh3_128_update(XXH3_state_t *state, const void *input, size_t length) {
    return XXH3_128bits_update(state, input, length);
}

/// 1 when the runtime-dispatched entry points are in use.
static inline int pushcore_xxh_uses_dispatch(void) {
#ifdef PUSHCORE_XXH_DISPATCH
    return 1;
#else
    return 0;
#endif
}

#endif
