/* fuzz/flrep_mutator.c — structure-aware mutation of .flrep inputs (see flrep_mutator.h). Without
 * it nearly every mutation dies in zstd (libpng's and Google's structure-aware fuzzing advice): here
 * the bytes LLVMFuzzerMutate changes are the decompressed ticks, and the framing, the sizes, the
 * header check and the trailer's offsets and check are recomputed around them. */
#include "flrep_mutator.h"

#include "flrep_internal.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#define MUT_MAX_CHUNKS 64
#define MUT_MAX_CONTENT (1u << 20)

DG_FUZZ_NO_COVERAGE static uint32_t mut_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* Offsets of everything that looks like a chunk whose frame lies inside the input. */
DG_FUZZ_NO_COVERAGE static size_t find_chunks(const uint8_t *d, size_t size, size_t *at)
{
    size_t n = 0;
    if (size < FLREP_CHUNK_HDR_SIZE + 6)
        return 0;
    size_t last = size - FLREP_CHUNK_HDR_SIZE - 6;
    for (size_t i = 0; i <= last && n < MUT_MAX_CHUNKS; i++) {
        const uint8_t *f = memchr(d + i, 'F', last - i + 1);
        if (!f)
            break;
        i = (size_t)(f - d);
        if (memcmp(d + i, "FLCK", 4) != 0)
            continue;
        uint32_t cs = dg_le32(d + i + 24);
        if (cs >= 6 && cs <= size - i - FLREP_CHUNK_HDR_SIZE && dg_le32(d + i + 36) == 0xFD2FB528u)
            at[n++] = i;
    }
    return n;
}

/* When data ends in a trailer that indexes chunks, shifts the entries after the chunk at `p` (and
 * the table offset) by delta and recomputes the index check, so the mutated file still opens
 * through its trailer instead of falling into recovery every time. */
typedef struct trailer_view {
    size_t toff;
    uint32_t n;
    int ok;
} trailer_view;

DG_FUZZ_NO_COVERAGE static trailer_view find_trailer(const uint8_t *d, size_t size)
{
    trailer_view t = {0, 0, 0};
    if (size < FLREP_TRAILER_FIXED)
        return t;
    uint64_t toff = dg_le64(d + size - 8);
    if (toff > size - FLREP_TRAILER_FIXED || memcmp(d + toff, "FLIX", 4) != 0)
        return t;
    uint32_t n = dg_le32(d + toff + 4);
    if ((uint64_t)n * 16 + FLREP_TRAILER_FIXED != size - toff)
        return t;
    t.toff = (size_t)toff;
    t.n = n;
    t.ok = 1;
    return t;
}

DG_FUZZ_NO_COVERAGE static void fix_trailer(uint8_t *d, trailer_view t, size_t p, long long delta)
{
    size_t toff = (size_t)((long long)t.toff + delta);
    for (uint32_t i = 0; i < t.n; i++) {
        uint8_t *e = d + toff + 40 + 16 * (size_t)i;
        uint64_t off = dg_le64(e);
        if (off > p)  /* unsigned: a mutated entry may hold any value; wrapping is harmless */
            dg_put_le64(e, off + (uint64_t)delta);
    }
    size_t body = 32 + 16 * (size_t)t.n;
    dg_put_le64(d + toff + body, XXH3_64bits(d + toff, body));
    dg_put_le64(d + toff + body + 8, toff);
}

DG_FUZZ_NO_COVERAGE static size_t mutate_chunk(uint8_t *d, size_t size, size_t max_size, size_t p)
{
    static ZSTD_CCtx *cctx;
    static ZSTD_DCtx *dctx;
    if (!cctx) {
        cctx = ZSTD_createCCtx();
        dctx = ZSTD_createDCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    }
    uint32_t old_cs = dg_le32(d + p + 24);
    unsigned long long dsize = ZSTD_getFrameContentSize(d + p + 36, old_cs);
    if (dsize >= ZSTD_CONTENTSIZE_ERROR || dsize > MUT_MAX_CONTENT)
        return 0;
    size_t inner_cap = (size_t)dsize + 256;
    uint8_t *inner = malloc(inner_cap);
    size_t bound = ZSTD_compressBound(inner_cap);
    uint8_t *comp = malloc(bound);
    size_t out = 0;
    size_t got = inner && comp ? ZSTD_decompressDCtx(dctx, inner, inner_cap, d + p + 36, old_cs) : 1;
    if (inner && comp && !ZSTD_isError(got) && got == dsize) {
        size_t m = LLVMFuzzerMutate(inner, got, inner_cap);
        size_t cs = ZSTD_compress2(cctx, comp, bound, inner, m);
        size_t old_len = FLREP_CHUNK_HDR_SIZE + old_cs, new_len = FLREP_CHUNK_HDR_SIZE + cs;
        if (!ZSTD_isError(cs) && size - old_len + new_len <= max_size) {
            trailer_view t = find_trailer(d, size);
            flrep_chunk_hdr h = {dg_le32(d + p + 4), dg_le64(d + p + 8), dg_le64(d + p + 16), (uint32_t)cs,
                                 (uint32_t)m};
            memmove(d + p + new_len, d + p + old_len, size - p - old_len);
            dg_flrep__chunk_hdr_encode(d + p, &h);
            memcpy(d + p + FLREP_CHUNK_HDR_SIZE, comp, cs);
            out = size - old_len + new_len;
            if (t.ok && t.toff >= p + old_len)
                fix_trailer(d, t, p, (long long)new_len - (long long)old_len);
        }
    }
    free(inner);
    free(comp);
    return out;
}

DG_FUZZ_NO_COVERAGE size_t dg_fuzz_flrep_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t r = seed;
    size_t at[MUT_MAX_CHUNKS];
    if (mut_rand(&r) % 8 >= 3) {
        size_t n = find_chunks(data, size, at);
        if (n) {
            size_t got = mutate_chunk(data, size, max_size, at[mut_rand(&r) % n]);
            if (got)
                return got;
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
