/* hash/hash_internal.h — what hash.c and its AVX2 twin (hash_avx2.c) share; private to hash/. */
#ifndef DETGATE_HASH_INTERNAL_H
#define DETGATE_HASH_INTERNAL_H

#include <stddef.h>

/* XXH3_64bits_update on state (an XXH3_state_t), built for AVX2 (hash_avx2.c, where DG_HASH_AVX2).
 * Call it only on a CPU that runs AVX2 (dg_codec_cpu_build() says "avx2"). */
void dg_hash__xxh3_update_avx2(void *state, const void *p, size_t n);

#endif
