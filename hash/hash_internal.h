/* hash/hash_internal.h — what hash.c, hash_rply.c and the AVX2 twin (hash_avx2.c) share: the
 * streaming state's layout behind the public dg_hash_stream's opaque bytes; private to hash/. */
#ifndef DETGATE_HASH_INTERNAL_H
#define DETGATE_HASH_INTERNAL_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/hash.h"

/* What a dg_hash_stream holds (include/detgate/hash.h keeps it opaque, at a fixed size). */
typedef struct hash__stream_state {
    DG_HASH_ALIGN64 unsigned char xxh[640]; /* an XXH3_state_t */
    uint8_t batch[1024];                     /* pending bytes not yet fed to XXH3 */
    uint32_t batch_len;
    uint32_t count;        /* entities added */
    uint64_t tick;
    uint64_t last_id;      /* previous id + 1 (0 before the first), for the order check */
    uint32_t order_errors; /* entities added out of order or with id 0 */
    uint32_t magic;
} hash__stream_state;
_Static_assert(sizeof(hash__stream_state) <= sizeof(dg_hash_stream), "dg_hash_stream too small for its state");
_Static_assert(alignof(dg_hash_stream) >= alignof(hash__stream_state), "dg_hash_stream under-aligned");

static inline hash__stream_state *dg_hash__state(dg_hash_stream *s) { return (hash__stream_state *)(void *)s->opaque; }
static inline const hash__stream_state *dg_hash__cstate(const dg_hash_stream *s)
{
    return (const hash__stream_state *)(const void *)s->opaque;
}

/* XXH3_64bits_update on state (an XXH3_state_t), built for AVX2 (hash_avx2.c, where DG_HASH_AVX2).
 * Call it only on a CPU that runs AVX2 (dg_codec_cpu_build() says "avx2"). */
void dg_hash__xxh3_update_avx2(void *state, const void *p, size_t n);

#endif
