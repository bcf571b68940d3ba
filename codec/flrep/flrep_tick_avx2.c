/* codec/flrep/flrep_tick_avx2.c — the tick decoder's fast path (flrep_fast.h) built for AVX2: CMake
 * compiles this file alone with -mavx2, and flrep_tick.c calls it only on a CPU that has AVX2. */
#include "flrep_fast.h"

#if !FLREP_FAST_AVX2
#error "flrep_tick_avx2.c is built with -mavx2 (see codec/CMakeLists.txt)"
#endif

void flrep_fast_run_avx2(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                         const flrep_world *world, flrep_world *nx, bool sparse)
{
    fast_run_pick(m, nrec, t3, ctx, world, nx, sparse);
}
