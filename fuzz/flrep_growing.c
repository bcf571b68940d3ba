/* fuzz/flrep_growing.c — target: the growing reader (dg_flrep_reader_refresh, FORMAT-flrep.md §9.2).
 * The input is what follows a fixed valid preamble, as for flrep_recovery; the reader follows it as
 * if it were being written, refreshing at sizes taken from a hash of the input (growing, never
 * below what it scanned), playing every tick of each chunk it adds. It must: never lose a chunk it
 * had, repeat its first error on every later refresh, play every chunk it scanned, and at the end
 * hold exactly the chunks a recovering open of the same bytes keeps. */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

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

/* Plays the ticks the last refresh made reachable; returns how many. */
static uint64_t play_new(dg_flrep_reader *r)
{
    dg_flrep_tick t;
    dg_error err;
    dg_error_clear(&err);
    uint64_t n = 0;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        dg_fuzz_check_world(t.ents, t.ent_count);
        n++;
    }
    FUZZ_ASSERT(rc == 0, "a scanned chunk failed to play: %s: %s", err.where, err.msg);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pre = dg_fuzz_fixture_get()->layout.data_start, len = pre + size;
    uint8_t *file = malloc(len ? len : 1);
    FUZZ_ASSERT(file, "%s", "out of memory");
    memcpy(file, dg_fuzz_fixture_get()->file, pre);
    if (size)
        memcpy(file + pre, data, size);
    dg_flrep_reader_opts opts = {.max_decompressed = DG_FUZZ_DECOMP_CAP};
    dg_flrep_reader *g = NULL;
    dg_error err, first;
    dg_error_clear(&err);
    dg_error_clear(&first);
    FUZZ_ASSERT(dg_flrep__reader_open_growing_mem(&g, file, len, &opts, &err) == DG_OK,
                "a valid preamble did not open growing: %s: %s", err.where, err.msg);
    uint64_t seed = XXH3_64bits(data, size), at = pre, played = 0;
    size_t chunks = 0;
    dg_status failed = DG_OK;
    for (int step = 0; step < 8 && at < len; step++) {
        at += 1 + (seed >> (8 * step) & 0xFF) * (size / 256 + 1);   /* 8 growing sizes, then the whole */
        uint64_t cut = at < len ? at : len;
        size_t added = 0;
        dg_status st = dg_flrep_reader_refresh(g, step == 7 ? len : cut, &added, &err);
        const dg_flrep_file_info *fi = dg_flrep_reader_info(g);
        FUZZ_ASSERT(fi->chunk_count == chunks + added && fi->chunk_count >= chunks, "refresh lost chunks (%zu, then %zu)",
                    chunks, fi->chunk_count);
        chunks = fi->chunk_count;
        if (failed != DG_OK)
            FUZZ_ASSERT(st == failed && strcmp(err.msg, first.msg) == 0, "a later refresh forgot the error: %s",
                        first.msg);
        if (st != DG_OK && failed == DG_OK) {
            dg_fuzz_check_error(st, &err, UINT64_MAX); /* a tick's error is located in the chunk's content */
            failed = st;
            first = err;
        }
        played += play_new(g);
        FUZZ_ASSERT(played == fi->tick_count, "played %llu ticks of the %llu scanned", (unsigned long long)played,
                    (unsigned long long)fi->tick_count);
    }
    if (failed == DG_OK && dg_flrep_reader_refresh(g, len, NULL, &err) == DG_OK)
        played += play_new(g);
    /* the same bytes opened whole and recovered keep the same chunks (a trailer in the input is no
     * chunk data to the follower: compare only with a recovery) */
    dg_flrep_reader *r = NULL;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r, file, len, &opts, &err) == DG_OK && dg_flrep_reader_info(r)->recovered)
        FUZZ_ASSERT(dg_flrep_reader_info(r)->chunk_count == dg_flrep_reader_info(g)->chunk_count,
                    "recovery kept %zu chunks, the follower %zu", dg_flrep_reader_info(r)->chunk_count,
                    dg_flrep_reader_info(g)->chunk_count);
    dg_flrep_reader_close(r);
    dg_flrep_reader_close(g);
    free(file);
    return 0;
}
