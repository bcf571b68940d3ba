/* fuzz/flrep_ticks.c — target: a chunk's decompressed tick stream: tick headers, the bit-packed
 * entity records (FULL, DELTA with prediction, REMOVE) and the event records, through
 * dg_flrep__decode_tick tick after tick. Checks that a tick that fails leaves the world untouched and
 * that every world it hands out is well-formed. */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

static flrep_index_set g_types, g_factions;
static flrep_tick_ctx g_ctx;
static int g_ready;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    dg_fuzz_tick_ctx(60, &g_types, &g_factions, &g_ctx);
    g_ready = 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_ready)
        LLVMFuzzerInitialize(NULL, NULL);
    static flrep_world w;
    static flrep_tick_scratch s;
    static dg_qentity *before;   /* the world before the tick being decoded (a copy: cheaper than a hash) */
    static size_t before_cap;
    w.n = 0;  /* keeps its allocation from run to run, as the reader does from tick to tick */
    dg_error err;
    dg_error_clear(&err);
    dg_cur c;
    dg_cur_init(&c, data, size, 0, "ticks", &err);
    for (uint32_t seq = 0; c.pos < size && seq < 4096; seq++) {
        if (w.n > before_cap) {
            before_cap = w.n * 2;
            before = realloc(before, before_cap * sizeof *before);
        }
        size_t before_n = w.n;
        if (w.n)
            memcpy(before, w.ents, w.n * sizeof *before);
        uint64_t tick;
        bool kf;
        const dg_event *ev;
        size_t nev;
        size_t at = c.pos;
        dg_status st = dg_flrep__decode_tick(&c, seq, &g_ctx, &w, &s, &tick, &kf, &ev, &nev, &err);
        if (st != DG_OK) {
            dg_fuzz_check_error(st, &err, UINT64_MAX);
            FUZZ_ASSERT(w.n == before_n && (w.n == 0 || memcmp(before, w.ents, w.n * sizeof *before) == 0),
                        "tick %u: a failed tick changed the world", seq);
            break;
        }
        FUZZ_ASSERT(c.pos > at && c.pos <= size, "tick %u: cursor did not advance within the input", seq);
        FUZZ_ASSERT(kf == (seq == 0), "tick %u: keyframe flag %d accepted", seq, kf);
        dg_fuzz_check_world(w.ents, w.n);
        for (size_t i = 0; i < nev; i++)
            FUZZ_ASSERT(ev[i].kind >= 1 && ev[i].kind <= 5 && ev[i].tick == tick &&
                            (ev[i].text_len == 0 || dg_utf8_valid((const uint8_t *)ev[i].text, ev[i].text_len)),
                        "tick %llu event %zu malformed", (unsigned long long)tick, i);
    }
    return 0;
}
