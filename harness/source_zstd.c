/* harness/source_zstd.c — a zstd-compressed state stream (`--states run.jsonl.zst`, a file of any
 * name or standard input starting with the zstd frame magic), read once and decompressed on the fly
 * (libzstd streaming) through a FILE the state stream parser reads, so neither the compressed nor the
 * decompressed stream is ever held whole. */
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
    bool failed, frame_open, owns_raw; /* owns_raw: a file this source opened (not stdin) */
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
                    z->why = ferror(z->raw) ? "read failed" : "the stream ends inside a frame (cut short)";
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
    if (z->raw && z->owns_raw)
        fclose(z->raw);
    ZSTD_freeDStream(z->ds);
    free(z->inbuf);
    free(z);
}

/* The zstd frame magic (RFC 8878 3.1.1: 0xFD2FB528 little-endian); no plain stream starts with its
 * first byte, '(' (CSV opens with a header name, JSON Lines with '{', binary with 0x89). */
static const unsigned char zst_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

bool dg_harness__is_zstd_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    bool yes = f && dg_harness__zstd_ahead(f); /* the rule of a stream read once: its first byte */
    if (f)
        fclose(f);
    return yes;
}

bool dg_harness__zstd_ahead(FILE *f)
{
    int c = getc(f);
    if (c != EOF)
        ungetc(c, f);
    return c == zst_magic[0];
}

/* The first 4 bytes, read into the decoder's input (not read again): the magic, or a refusal naming
 * what the stream starts with instead. */
static dg_status zst_check_magic(zst_impl *z, dg_error *err)
{
    unsigned char *m = z->inbuf;
    size_t n = fread(m, 1, 4, z->raw);
    z->in.size = n;
    if (n == 4 && memcmp(m, zst_magic, 4) == 0)
        return DG_OK;
    char found[16] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(found + 3 * i, sizeof found - 3 * i, "%02x%s", m[i], i + 1 < n ? " " : "");
    return dg_error_set(err, DG_E_MALFORMED, 0, z->path, "zstd: expected the frame magic 28 b5 2f fd, found %s%s",
                        found, n == 0 ? "the end of the stream" : n < 4 ? " and the end of the stream" : "");
}

/* raw: the compressed stream from its first byte; owned (closed with the source) when owns. */
static dg_status zst_open(harness__source **out, FILE *raw, bool owns, const char *label, const char *name,
                          uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    zst_impl *z = calloc(1, sizeof *z);
    harness__source *s = calloc(1, sizeof *s);
    if (!z || !s) {
        free(z);
        free(s);
        if (owns)
            fclose(raw);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    }
    *s = (harness__source){.impl = z, .next = zst_next, .rewind = zst_rewind, .destroy = zst_destroy};
    z->raw = raw;
    z->owns_raw = owns;
    snprintf(z->path, sizeof z->path, "%s", label);
    z->incap = ZSTD_DStreamInSize();
    z->inbuf = malloc(z->incap);
    z->ds = ZSTD_createDStream();
    z->in = (ZSTD_inBuffer){z->inbuf, 0, 0};
    dg_status st = DG_OK;
    if (!z->inbuf || !z->ds)
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    else if (!(z->out = fopencookie(z, "r", (cookie_io_functions_t){.read = zst_read})))
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    else
        st = zst_check_magic(z, err);
    if (st == DG_OK) {
        ZSTD_initDStream(z->ds);
        st = dg_harness__source_stream(&z->inner, z->out, label, name, keyframe, err);
        if (st != DG_OK && z->failed) {
            dg_error_clear(err);
            st = dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, label, "zstd: %s", z->why);
        }
    }
    if (st == DG_OK && !dg_harness__decl_copy(&s->decl, &z->inner->decl)) /* the stream's declared fields */
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    snprintf(s->name, sizeof s->name, "%s", z->inner->name);
    s->hdr = z->inner->hdr;
    *out = s;
    return DG_OK;
}

dg_status dg_harness__source_states_zst(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    FILE *raw = fopen(path, "rb");
    if (!raw)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    return zst_open(out, raw, true, path, path, keyframe, err);
}

dg_status dg_harness__source_zstd_stream(harness__source **out, FILE *raw, const char *label, const char *name,
                                       uint32_t keyframe, dg_error *err)
{
    return zst_open(out, raw, false, label, name, keyframe, err);
}
