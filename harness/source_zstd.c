/* harness/source_zstd.c — a zstd-compressed state stream file (`--states run.jsonl.zst`), read once
 * and decompressed on the fly (libzstd streaming) through a FILE the state stream parser reads, so
 * neither the compressed nor the decompressed stream is ever held whole. */
#define _GNU_SOURCE
#include "project.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

typedef struct zst_impl {
    harness__source *inner;
    FILE *raw, *out; /* the compressed file, and the decompressed FILE over it */
    ZSTD_DStream *ds;
    ZSTD_inBuffer in;
    void *inbuf;
    size_t incap;
    bool failed, frame_open;
    const char *why; /* what the decompression said when it failed */
    char path[HARNESS_PROJECT_PATH_MAX];
} zst_impl;

/* The decompressed FILE's read: refills the input as the frames need it. */
static ssize_t zst_read(void *cookie, char *buf, size_t size)
{
    zst_impl *z = cookie;
    ZSTD_outBuffer o = {buf, size, 0};
    while (o.pos == 0 && !z->failed) {
        if (z->in.pos == z->in.size) {
            z->in.size = fread(z->inbuf, 1, z->incap, z->raw);
            z->in.pos = 0;
            if (z->in.size == 0) {
                if (ferror(z->raw) || z->frame_open) { /* a file cut inside a frame is not a whole stream */
                    z->failed = true, errno = ferror(z->raw) ? EIO : EPROTO;
                    z->why = ferror(z->raw) ? "read failed" : "the file ends inside a frame (cut short)";
                }
                return z->failed ? -1 : 0;
            }
        }
        size_t r = ZSTD_decompressStream(z->ds, &o, &z->in);
        if (ZSTD_isError(r)) {
            z->failed = true;
            z->why = ZSTD_getErrorName(r);
            errno = EPROTO;
            return -1;
        }
        z->frame_open = r != 0;
    }
    return (ssize_t)o.pos;
}

static int zst_next(harness__source *s, harness__frame *f, dg_error *err)
{
    zst_impl *z = s->impl;
    int rc = z->inner->next(z->inner, f, err);
    if (rc < 0 && z->failed) { /* the parser saw a read error: say it was the compression */
        dg_error_clear(err);
        dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, z->path, "zstd: %s", z->why);
    }
    return rc;
}

static dg_status zst_rewind(harness__source *s, dg_error *err)
{
    zst_impl *z = s->impl;
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, z->path, "a compressed stream is read once");
}

static void zst_destroy(harness__source *s)
{
    zst_impl *z = s->impl;
    if (!z)
        return;
    dg_harness__source_free(z->inner);
    if (z->out)
        fclose(z->out);
    if (z->raw)
        fclose(z->raw);
    ZSTD_freeDStream(z->ds);
    free(z->inbuf);
    free(z);
}

dg_status dg_harness__source_states_zst(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    zst_impl *z = calloc(1, sizeof *z);
    harness__source *s = calloc(1, sizeof *s);
    if (!z || !s) {
        free(z);
        free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    *s = (harness__source){.impl = z, .next = zst_next, .rewind = zst_rewind, .destroy = zst_destroy};
    snprintf(z->path, sizeof z->path, "%s", path);
    z->incap = ZSTD_DStreamInSize();
    z->inbuf = malloc(z->incap);
    z->ds = ZSTD_createDStream();
    z->in = (ZSTD_inBuffer){z->inbuf, 0, 0};
    dg_status st = DG_OK;
    if (!z->inbuf || !z->ds)
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    else if (!(z->raw = fopen(path, "rb")))
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    else if (!(z->out = fopencookie(z, "r", (cookie_io_functions_t){.read = zst_read})))
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    if (st == DG_OK) {
        ZSTD_initDStream(z->ds);
        st = dg_harness__source_stream(&z->inner, z->out, path, path, keyframe, err);
        if (st != DG_OK && z->failed) {
            dg_error_clear(err);
            st = dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, path, "zstd: %s", z->why);
        }
    }
    if (st == DG_OK && !dg_harness__decl_copy(&s->decl, &z->inner->decl)) /* the stream's declared fields */
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    snprintf(s->name, sizeof s->name, "%s", z->inner->name);
    s->hdr = z->inner->hdr;
    *out = s;
    return DG_OK;
}
