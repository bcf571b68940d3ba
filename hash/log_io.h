/* hash/log_io.h — private byte plumbing under the hash log: a byte source (file or memory, zstd
 * decoded transparently when the bytes start with the zstd magic) and a byte sink (file, plain or
 * zstd-compressed). The log format itself lives in hash_log.c and never sees compression. */
#ifndef DETGATE_HASH_LOG_IO_H
#define DETGATE_HASH_LOG_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "detgate/error.h"

typedef struct hash__src hash__src;
typedef struct hash__sink hash__sink;

/* Sources. `name` is used in error messages. Both return DG_OK or an error (DG_E_IO, DG_E_NOMEM). */
dg_status dg_hash__src_open_file(hash__src **out, const char *path, dg_error *err);
dg_status dg_hash__src_open_mem(hash__src **out, const void *buf, size_t len, dg_error *err);
/* Reads from an open stream that the source does not close. */
dg_status dg_hash__src_open_fp(hash__src **out, FILE *fp, dg_error *err);
/* Reads up to cap decoded bytes; *got = 0 means end of input. A truncated or corrupt zstd stream is
 * an error (DG_E_COMPRESS / DG_E_TRUNCATED) with the compressed byte offset. */
dg_status dg_hash__src_read(hash__src *s, void *buf, size_t cap, size_t *got, const char *name,
                         dg_error *err);
void dg_hash__src_close(hash__src *s);

/* Sinks: writes go through a buffer; close flushes (and ends the zstd frame). */
dg_status dg_hash__sink_open_file(hash__sink **out, const char *path, bool zstd, dg_error *err);
dg_status dg_hash__sink_open_fp(hash__sink **out, FILE *fp, bool zstd, dg_error *err);
dg_status dg_hash__sink_write(hash__sink *s, const void *p, size_t n, dg_error *err);
/* Flushes, ends the frame, closes the file when the sink opened it, frees s (also on error). */
dg_status dg_hash__sink_close(hash__sink *s, dg_error *err);

#endif
