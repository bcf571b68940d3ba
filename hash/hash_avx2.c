/* hash/hash_avx2.c — XXH3-64's streaming update built for AVX2: CMake compiles this file alone with
 * -mavx2 (where the codec's AVX2 builds are made), and hash.c calls it only where the codec runs its
 * own AVX2 builds (dg_codec_cpu_build), for the long inputs of the raw hash. XXH3's value does not
 * depend on the instruction set it is computed with; only its speed does. */
#include "hash_internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#if !defined(__AVX2__) || XXH_VECTOR != XXH_AVX2
#error "hash_avx2.c is built with -mavx2 (see hash/CMakeLists.txt), so that XXH3 takes its AVX2 path"
#endif

void dg_hash__xxh3_update_avx2(void *state, const void *p, size_t n)
{
    XXH3_64bits_update((XXH3_state_t *)state, p, n);
}
