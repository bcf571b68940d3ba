/* codec/flrep/flrep_tick_avx2.c — the tick decoder's fast path (flrep_fast.h) and the encoder's record
 * loop (flrep_encode.h) built for AVX2: CMake compiles this file alone with -mavx2 -mbmi -mbmi2, and
 * flrep_tick.c calls it only on a CPU that has all three (ctx->fast_avx2). */
#include "flrep_encode.h"
#include "flrep_fast.h"

#if !FLREP_FAST_AVX2 || !defined(__BMI__) || !defined(__BMI2__)
#error "flrep_tick_avx2.c is built with -mavx2 -mbmi -mbmi2 (see codec/CMakeLists.txt)"
#endif

void dg_flrep__fast_run_avx2(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                         const flrep_world *world, flrep_world *nx, bool sparse)
{
    fast_run_pick(m, nrec, t3, ctx, world, nx, sparse);
}

bool dg_flrep__encode_records_avx2(dg_bitw *b, const flrep_tick_ctx *tc, const flrep_world *world, size_t wn,
                               flrep_world *next, const dg_qentity *cur, size_t n, size_t *nrec)
{
    /* two copies of the loop, each with its rdiv fixed: 1 Hz (the numerator) or the multiply-high */
    if (tc->tick_rate_hz == 1)
        return encode_records_body(b, tc, world, wn, next, cur, n, nrec, true);
    return encode_records_body(b, tc, world, wn, next, cur, n, nrec, false);
}
