/* fuzz/flrep_trailer.c — target: the index trailer (FLIX, entries, indexCheck, tableOffset) behind
 * a fixed valid preamble and the fixture's valid chunks, through the public reader opened with
 * require_trailer, so that a rejected trailer is a clean error rather than a recovery scan (that
 * path has its own target, flrep_recovery, and decoding every chunk on each run held this one at
 * 3.5 k exec/s). A trailer that is accepted must index exactly the fixture's chunks; then one seek
 * lands where the index says. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const dg_fuzz_fixture *fx = dg_fuzz_fixture_get();
    size_t pre = fx->layout.table_offset, len;
    uint8_t *file;
    dg_flrep_reader *r;
    dg_error err;
    dg_status st = dg_fuzz_open_behind_prefix(pre, data, size, true, &file, &len, &r, &err);
    if (st != DG_OK) {
        /* the trailer's own error, or an intact index naming a chunk over the cap */
        FUZZ_ASSERT(strncmp(err.where, "trailer", 7) == 0 || st == DG_E_LIMIT,
                    "a valid preamble with valid chunks failed outside the trailer: %s: %s", err.where, err.msg);
        dg_fuzz_check_error(st, &err, len);
        free(file);
        return 0;
    }
    FUZZ_ASSERT(!dg_flrep_reader_info(r)->recovered, "%s", "require_trailer opened by recovery");
    dg_fuzz_check_reader_info(r, len);
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    FUZZ_ASSERT(fi->chunk_count == fx->layout.nchunks, "trailer accepted with %zu chunks, the file has %zu",
                fi->chunk_count, fx->layout.nchunks);
    if (fi->chunk_count && size) {
        uint64_t span = fi->last_tick - fi->first_tick + 1;
        uint64_t target = fi->first_tick + data[size - 1] % span;
        st = dg_flrep_reader_seek(r, target, &err);
        FUZZ_ASSERT(st == DG_OK, "seek to %llu inside the index failed: %s", (unsigned long long)target, err.msg);
        dg_flrep_tick t;
        FUZZ_ASSERT(dg_flrep_reader_next(r, &t, &err) == 1 && t.tick >= target, "%s", "seek landed wrong");
    }
    dg_flrep_reader_close(r);
    free(file);
    return 0;
}
