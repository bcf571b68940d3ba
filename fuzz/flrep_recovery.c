/* fuzz/flrep_recovery.c — target: forward-scan recovery. The input is what follows a fixed valid
 * preamble (the chunk bytes, usually without a trailer); the reader must always open it, and every
 * tick of every chunk recovery kept must play (recovery keeps only chunks whose ticks all decode).
 * Uses the structure-aware mutator so mutations reach the ticks inside the zstd frames. */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    dg_fuzz_fixture_get();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return dg_fuzz_flrep_mutate(data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pre = dg_fuzz_fixture_get()->layout.data_start, len;
    uint8_t *file;
    dg_flrep_reader *r;
    dg_error err;
    dg_status st = dg_fuzz_open_behind_prefix(pre, data, size, false, &file, &len, &r, &err);
    /* the refusals left (FORMAT-flrep.md §8, "Faults"): a chunk over the cap (the reader does not
     * "recover" around it), and an intact trailer whose chunks do not match it (its errors are
     * located at the trailer) */
    FUZZ_ASSERT(st == DG_OK || st == DG_E_LIMIT || strncmp(err.where, "trailer", 7) == 0,
                "a valid preamble did not open: %s: %s", err.where, err.msg);
    if (st != DG_OK) {
        free(file);
        return 0;
    }
    dg_fuzz_check_reader_info(r, len);
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    dg_flrep_tick t;
    uint64_t n = 0;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        dg_fuzz_check_world(t.ents, t.ent_count);
        n++;
    }
    if (fi->recovered)
        FUZZ_ASSERT(rc == 0 && n == fi->tick_count, "a recovered chunk failed to play at tick %llu: %s: %s",
                    (unsigned long long)n, err.where, err.msg);
    dg_flrep_reader_close(r);
    free(file);
    return 0;
}
