/* fuzz/hash_log.c — fuzz target: a hash log (docs/STATE-HASH.md §7; plain or zstd, told by its magic)
 * on arbitrary bytes, read as `detgate diff` and `gate` read a golden log: dg_harness__load_log on a
 * file holding the input; then the reader walked again with every entity line's id, hash, raw hash
 * and raw values read (the lengths its header and tick lines claim), and the log compared with itself
 * (dg_hash_log_compare: equal logs, or the same error twice). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "fuzz_common.h"
#include "harness_fuzz.h"
#include "harness_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t g_sink;

static void walk(const char *path)
{
    dg_hash_log_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_hash_log_reader_open(&r, path, &err) != DG_OK)
        return;
    const dg_hash_log_header *h = dg_hash_log_reader_header(r);
    dg_hash_log_tick t;
    while (dg_hash_log_reader_next(r, &t, &err) == 1) {
        uint64_t sum = t.tick ^ t.state ^ t.events ^ t.raw;
        for (uint32_t i = 0; t.ids && i < t.entity_count; i++) {
            sum += t.ids[i] ^ t.hashes[i];
            if (t.raw_hashes)
                sum += t.raw_hashes[i];
            for (uint32_t v = 0; t.raw_bits && v < h->n_values; v++)
                sum += t.raw_bits[(size_t)i * h->n_values + v];
        }
        g_sink += sum;
    }
    dg_hash_log_reader_close(r);
}

static void compare_with_itself(const char *path)
{
    dg_hash_log_reader *a = NULL, *b = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_hash_log_reader_open(&a, path, &err) == DG_OK && dg_hash_log_reader_open(&b, path, &err) == DG_OK) {
        dg_hash_log_cmp c;
        if (dg_hash_log_compare(a, b, &c, &err) == DG_OK) {
            char line[512];
            dg_hash_log_cmp_summary(&c, line, sizeof line);
            FUZZ_ASSERT(c.verdict == DG_HASH_SAME, "a log compared with itself: %s", line);
        }
    }
    dg_hash_log_reader_close(a);
    dg_hash_log_reader_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20))
        return 0;
    const char *path = dg_fuzz_input_file("in.hashlog", data, size);
    if (!path)
        return 0;
    harness__stream s = {0};
    dg_hash_log_header hdr;
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__load_log(path, &s, &hdr, &err) == DG_OK)
        g_sink += s.n + s.entity_ticks;
    dg_harness__stream_free(&s);
    walk(path);
    compare_with_itself(path);
    return 0;
}
