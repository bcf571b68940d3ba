/* fuzz/states_file.c — fuzz target: `--states FILE` on arbitrary bytes, opened by the engines table's
 * stream row as the CLI opens it (harness/engines.c: a name ending in .zst is decompressed on the fly,
 * else binary by its first byte 0x89, else CSV or JSON Lines read twice: a validating pass at open,
 * then the frames). An input that starts with zstd's magic is put in a file named .zst, every other
 * in one without. Every frame is pulled and all it points at read; a text source is then rewound
 * and read again, as the record pass does. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engines.h"
#include "harness_fuzz.h"
#include "project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_FRAMES 100000

static volatile uint64_t g_sink;

static void pull_all(harness__source *s, dg_error *err)
{
    harness__frame fr;
    for (int k = 0; k < FUZZ_MAX_FRAMES && s->next(s, &fr, err) == 1; k++)
        g_sink += dg_fuzz_touch_frame(&fr, s->decl.field_count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20))
        return 0;
    static const uint8_t zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    bool zst = size >= 4 && memcmp(data, zstd_magic, 4) == 0;
    const char *path = dg_fuzz_input_file(zst ? "in.states.zst" : "in.states", data, size);
    if (!path)
        return 0;
    harness__engine_args a = {.states = path};
    harness__source *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__engine_stream.open(&s, &a, &err) == DG_OK) {
        pull_all(s, &err);
        dg_error_clear(&err);
        if (s->rewind(s, &err) == DG_OK)
            pull_all(s, &err);
    }
    dg_harness__source_free(s);
    return 0;
}
