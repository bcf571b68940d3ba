/* fuzz/states_stream.c — fuzz target: a state stream read once (dg_harness__source_stream: binary by its
 * first byte, else CSV or JSON Lines) on arbitrary bytes, every tick pulled until the end or an
 * error — the parsers a process engine's output goes through. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20))
        return 0;
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f)
        return 0;
    harness__source *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__source_stream(&s, f, "fuzz", "fuzz", 0, &err) == DG_OK) {
        harness__frame fr;
        for (int k = 0; k < 100000 && s->next(s, &fr, &err) == 1; k++) {
        }
    }
    dg_harness__source_free(s);
    fclose(f);
    return 0;
}
