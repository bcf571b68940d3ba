/* fuzz/harness_fuzz.h — what the harness's fuzz targets share: the input put in a file (the CLI's
 * parsers open paths, and tell a stream's kind by its name and first bytes), and every element of a
 * tick a source hands out touched (so ASan checks the lengths the source claims). */
#ifndef DETGATE_FUZZ_HARNESS_FUZZ_H
#define DETGATE_FUZZ_HARNESS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "harness_internal.h"

/* The input written to a file called name in this process's own temporary folder (TMPDIR, else
 * /dev/shm, else /tmp; removed at exit); its path, or NULL when it cannot be written. */
const char *dg_fuzz_input_file(const char *name, const uint8_t *data, size_t size);

/* Reads every entity, extra slot, raw value and event text the frame points at (field_count: the
 * source's decl.field_count); a checksum, so that the reads are not optimized away. */
uint64_t dg_fuzz_touch_frame(const harness__frame *f, size_t field_count);

#endif
