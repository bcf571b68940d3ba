/* fuzz/rply_player.c — target: the RPLY player over a whole file: play to the end (tick-atomic), then
 * seek back to an input-chosen tick through the keyframe checkpoints; the state must equal what a
 * fresh player rebuilds by playing forward to that tick. */
#include "fuzz_common.h"

#include "detgate/rply.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_rply_file f;
    memset(&f, 0, sizeof f);
    dg_error err;
    dg_error_clear(&err);
    if (dg_rply_file_open(&f, data, size, 0, &err) != DG_OK || f.hdr.tick_count == 0) {
        dg_rply_file_close(&f);
        return 0;
    }
    /* a replay plays tickCount ticks: bounded by what the file holds (FORMAT-rply.md §2.1) */
    FUZZ_ASSERT(f.hdr.tick_count <= dg_rply_max_tick_count(f.hdr.op_bytes), "opened with tickCount %u for %u op bytes",
                f.hdr.tick_count, f.hdr.op_bytes);
    uint32_t last = f.hdr.tick_count - 1;
    uint32_t target = (uint32_t)(data[size - 1] | data[size / 2] << 8) % f.hdr.tick_count;
    dg_rply_player *a = dg_rply_player_new(&f, 1u << 20, &err), *b = dg_rply_player_new(&f, 1u << 20, &err);
    FUZZ_ASSERT(a && b, "player new: %s", err.msg);
    /* forward to the target on a fresh player: the reference */
    dg_status fwd = dg_rply_player_advance(b, target, &err);
    if (fwd != DG_OK)
        dg_fuzz_check_error(fwd, &err, UINT64_MAX);
    /* the other plays as far as it can, then seeks back */
    dg_status all = dg_rply_player_advance(a, last, &err);
    if (all != DG_OK) {
        /* tick-atomic: a failed advance leaves a state that the reference can reach too */
        const dg_rply_state *as = dg_rply_player_state(a);
        FUZZ_ASSERT(!dg_rply_state_started(as) || dg_rply_state_tick(as) < f.hdr.tick_count, "%s", "state tick out of range");
    }
    if (fwd == DG_OK) {
        dg_error serr;
        dg_error_clear(&serr);
        dg_status sk = dg_rply_player_seek(a, target, &serr);
        FUZZ_ASSERT(sk == DG_OK, "seek to %u failed where playing forward succeeded: %s: %s", target, serr.where,
                    serr.msg);
        FUZZ_ASSERT(dg_rply_state_equal(dg_rply_player_state(a), dg_rply_player_state(b)),
                    "seek to tick %u rebuilt another state than playing forward", target);
    }
    dg_rply_player_free(a);
    dg_rply_player_free(b);
    dg_rply_file_close(&f);
    return 0;
}
