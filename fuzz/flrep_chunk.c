/* fuzz/flrep_chunk.c — target: one chunk as it sits in the file: the 36-byte FLCK framing
 * (dg_flrep__chunk_hdr_parse), its zstd frame (dg_flrep__chunk_decompress: declared size, checksum flag,
 * exact length) and the framing's promises about the ticks inside (dg_flrep__chunk_validate). */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static flrep_index_set g_types, g_factions;
static flrep_tick_ctx g_ctx;
static ZSTD_DCtx *g_dctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    dg_fuzz_tick_ctx(60, &g_types, &g_factions, &g_ctx);
    g_dctx = ZSTD_createDCtx();
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    ZSTD_DCtx_setParameter(g_dctx, ZSTD_d_experimentalParam3 /* forceIgnoreChecksum, as the reader */, 1);
#endif
    return 0;
}

/* Mutations reach the ticks inside the frame (and the framing's promises about them). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return dg_fuzz_flrep_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_dctx)
        LLVMFuzzerInitialize(NULL, NULL);
    if (size < FLREP_CHUNK_HDR_SIZE)
        return 0;
    dg_error err;
    dg_error_clear(&err);
    flrep_chunk_hdr h;
    uint64_t left = size - FLREP_CHUNK_HDR_SIZE;
    dg_status st = dg_flrep__chunk_hdr_parse(data, 0, left, DG_FLREP_KEYFRAME_MAX, DG_FUZZ_DECOMP_CAP, &h, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        return 0;
    }
    FUZZ_ASSERT(h.tick_count >= 1 && h.first_tick <= h.last_tick && h.compressed_size >= 1 &&
                    h.compressed_size <= left && h.decompressed_size <= DG_FUZZ_DECOMP_CAP &&
                    (uint64_t)h.decompressed_size >= (uint64_t)h.tick_count * FLREP_TICK_HDR_SIZE,
                "%s", "framing accepted against its own rules");
    uint8_t *content = malloc(h.decompressed_size ? h.decompressed_size : 1);
    st = dg_flrep__chunk_decompress(g_dctx, data + FLREP_CHUNK_HDR_SIZE, &h, content, 0, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
    } else {
        flrep_world w = {0};
        flrep_tick_scratch s;
        memset(&s, 0, sizeof s);
        st = dg_flrep__chunk_validate(content, &h, 0, 0, &g_ctx, &w, &s, &err);
        if (st != DG_OK)
            dg_fuzz_check_error(st, &err, UINT64_MAX);
        else
            dg_fuzz_check_world(w.ents, w.n);
        dg_flrep__world_free(&w);
        dg_flrep__tick_scratch_free(&s);
    }
    free(content);
    return 0;
}
