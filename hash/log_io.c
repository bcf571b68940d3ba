/* hash/log_io.c — byte source and sink under the hash log: plain or zstd, file or memory.
 * Decompression is streaming with a capped window, so a hostile .zst cannot make us allocate more
 * than a few MiB however large it claims to be. */
#include "log_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#define IO__CHUNK (64u * 1024u)
#define IO__WINDOW_LOG_MAX 24 /* 16 MiB: far above what level 3 uses, far below what a bomb wants */
#define IO__ZSTD_LEVEL 3

/* ---- source -------------------------------------------------------------------------------------- */
struct hash__src {
    FILE *fp;                 /* file source, or NULL */
    bool own_fp;              /* close fp with the source */
    const uint8_t *mem;       /* memory source */
    size_t mem_len, mem_pos;
    uint8_t *raw;             /* IO__CHUNK bytes of compressed input (zstd only) */
    ZSTD_inBuffer zin;
    ZSTD_DCtx *dctx;          /* non-NULL when the input is zstd */
    uint64_t raw_consumed;    /* compressed bytes handed to zstd before the current raw chunk */
    size_t frame_left;        /* last ZSTD_decompressStream hint: 0 = between frames */
    uint8_t peek[4];          /* first bytes, read to sniff the magic, replayed to the reader */
    size_t peek_len, peek_pos;
    bool raw_eof;
};

/* Reads undecoded bytes from the file or memory. */
static dg_status io__raw_read(hash__src *s, uint8_t *buf, size_t cap, size_t *got, dg_error *err)
{
    if (s->fp) {
        size_t n = fread(buf, 1, cap, s->fp);
        if (n < cap && ferror(s->fp))
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, "hash log", "read failed: %s",
                                strerror(errno));
        *got = n;
        return DG_OK;
    }
    size_t n = s->mem_len - s->mem_pos;
    if (n > cap)
        n = cap;
    memcpy(buf, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    *got = n;
    return DG_OK;
}

static dg_status io__sniff(hash__src *s, dg_error *err)
{
    static const uint8_t zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
    dg_status st = io__raw_read(s, s->peek, sizeof s->peek, &s->peek_len, err);
    if (st != DG_OK || s->peek_len < 4 || memcmp(s->peek, zstd_magic, 4) != 0)
        return st;
    s->dctx = ZSTD_createDCtx();
    s->raw = malloc(IO__CHUNK);
    if (!s->dctx || !s->raw)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash log", "zstd decoder allocation");
    ZSTD_DCtx_setParameter(s->dctx, ZSTD_d_windowLogMax, IO__WINDOW_LOG_MAX);
    memcpy(s->raw, s->peek, 4);
    s->zin.src = s->raw;
    s->zin.size = 4;
    s->zin.pos = 0;
    s->peek_len = 0;
    return DG_OK;
}

static dg_status io__src_new(hash__src **out, FILE *fp, bool own_fp, const void *mem, size_t len,
                             dg_error *err)
{
    hash__src *s = calloc(1, sizeof *s);
    if (!s) {
        if (fp && own_fp)
            fclose(fp);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash log", "reader allocation");
    }
    s->fp = fp;
    s->own_fp = own_fp;
    s->mem = mem;
    s->mem_len = len;
    dg_status st = io__sniff(s, err);
    if (st != DG_OK) {
        dg_hash__src_close(s);
        return st;
    }
    *out = s;
    return DG_OK;
}

dg_status dg_hash__src_open_file(hash__src **out, const char *path, dg_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open for reading: %s",
                            strerror(errno));
    return io__src_new(out, fp, true, NULL, 0, err);
}

dg_status dg_hash__src_open_fp(hash__src **out, FILE *fp, dg_error *err)
{
    return io__src_new(out, fp, false, NULL, 0, err);
}

dg_status dg_hash__src_open_mem(hash__src **out, const void *buf, size_t len, dg_error *err)
{
    return io__src_new(out, NULL, false, buf ? buf : "", buf ? len : 0, err);
}

static dg_status io__zstd_read(hash__src *s, void *buf, size_t cap, size_t *got, const char *name,
                               dg_error *err)
{
    ZSTD_outBuffer zout = {buf, cap, 0};
    while (zout.pos == 0) {
        if (s->zin.pos == s->zin.size && !s->raw_eof) {
            size_t n = 0;
            s->raw_consumed += s->zin.size;
            dg_status st = io__raw_read(s, s->raw, IO__CHUNK, &n, err);
            if (st != DG_OK)
                return st;
            s->zin.size = n;
            s->zin.pos = 0;
            s->raw_eof = n == 0;
        }
        if (s->zin.pos == s->zin.size && s->raw_eof) {
            if (s->frame_left != 0)
                return dg_error_set(err, DG_E_TRUNCATED, s->raw_consumed, name,
                                    "zstd stream ends inside a frame (expected more compressed data)");
            break;
        }
        size_t r = ZSTD_decompressStream(s->dctx, &zout, &s->zin);
        if (ZSTD_isError(r))
            return dg_error_set(err, DG_E_COMPRESS, s->raw_consumed + s->zin.pos, name,
                                "zstd: %s", ZSTD_getErrorName(r));
        s->frame_left = r;
    }
    *got = zout.pos;
    return DG_OK;
}

dg_status dg_hash__src_read(hash__src *s, void *buf, size_t cap, size_t *got, const char *name,
                         dg_error *err)
{
    *got = 0;
    if (s->dctx)
        return io__zstd_read(s, buf, cap, got, name, err);
    if (s->peek_pos < s->peek_len) {
        size_t n = s->peek_len - s->peek_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, s->peek + s->peek_pos, n);
        s->peek_pos += n;
        *got = n;
        return DG_OK;
    }
    return io__raw_read(s, buf, cap, got, err);
}

void dg_hash__src_close(hash__src *s)
{
    if (!s)
        return;
    if (s->fp && s->own_fp)
        fclose(s->fp);
    ZSTD_freeDCtx(s->dctx);
    free(s->raw);
    free(s);
}

/* ---- sink ------------------------------------------------------------------------------------------ */
struct hash__sink {
    FILE *fp;
    bool own_fp;
    ZSTD_CCtx *cctx;   /* non-NULL when compressing */
    uint8_t *buf;      /* IO__CHUNK bytes of pending text */
    size_t len;
    uint8_t *zbuf;     /* compressed output staging */
    size_t zcap;
};

static dg_status io__fwrite(hash__sink *s, const void *p, size_t n, dg_error *err)
{
    if (n && fwrite(p, 1, n, s->fp) != n)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, "hash log", "write failed: %s",
                            strerror(errno));
    return DG_OK;
}

static dg_status io__compress(hash__sink *s, const void *p, size_t n, ZSTD_EndDirective mode,
                              dg_error *err)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {s->zbuf, s->zcap, 0};
        size_t r = ZSTD_compressStream2(s->cctx, &out, &in, mode);
        if (ZSTD_isError(r))
            return dg_error_set(err, DG_E_COMPRESS, DG_OFFSET_NONE, "hash log", "zstd: %s",
                                ZSTD_getErrorName(r));
        dg_status st = io__fwrite(s, s->zbuf, out.pos, err);
        if (st != DG_OK)
            return st;
        bool done = mode == ZSTD_e_continue ? in.pos == in.size : r == 0;
        if (done)
            return DG_OK;
    }
}

static dg_status io__flush(hash__sink *s, dg_error *err)
{
    dg_status st = s->cctx ? io__compress(s, s->buf, s->len, ZSTD_e_continue, err)
                           : io__fwrite(s, s->buf, s->len, err);
    s->len = 0;
    return st;
}

dg_status dg_hash__sink_open_fp(hash__sink **out, FILE *fp, bool zstd, dg_error *err)
{
    hash__sink *s = calloc(1, sizeof *s);
    if (s)
        s->buf = malloc(IO__CHUNK);
    if (s && zstd) {
        s->cctx = ZSTD_createCCtx();
        s->zcap = ZSTD_CStreamOutSize();
        s->zbuf = malloc(s->zcap);
    }
    if (!s || !s->buf || (zstd && (!s->cctx || !s->zbuf))) {
        if (s) {
            ZSTD_freeCCtx(s->cctx);
            free(s->zbuf);
            free(s->buf);
            free(s);
        }
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash log", "writer allocation");
    }
    if (zstd) {
        ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel, IO__ZSTD_LEVEL);
        ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_checksumFlag, 1);
    }
    s->fp = fp;
    *out = s;
    return DG_OK;
}

dg_status dg_hash__sink_open_file(hash__sink **out, const char *path, bool zstd, dg_error *err)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open for writing: %s",
                            strerror(errno));
    dg_status st = dg_hash__sink_open_fp(out, fp, zstd, err);
    if (st != DG_OK) {
        fclose(fp);
        return st;
    }
    (*out)->own_fp = true;
    return DG_OK;
}

dg_status dg_hash__sink_write(hash__sink *s, const void *p, size_t n, dg_error *err)
{
    const uint8_t *b = p;
    while (n) {
        if (s->len == IO__CHUNK) {
            dg_status st = io__flush(s, err);
            if (st != DG_OK)
                return st;
        }
        size_t k = IO__CHUNK - s->len;
        if (k > n)
            k = n;
        memcpy(s->buf + s->len, b, k);
        s->len += k;
        b += k;
        n -= k;
    }
    return DG_OK;
}

dg_status dg_hash__sink_close(hash__sink *s, dg_error *err)
{
    if (!s)
        return DG_OK;
    dg_status st = io__flush(s, err);
    if (st == DG_OK && s->cctx)
        st = io__compress(s, NULL, 0, ZSTD_e_end, err);
    if (st == DG_OK && fflush(s->fp) != 0)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, "hash log", "flush failed: %s", strerror(errno));
    /* a log file is renamed into place after this: its bytes on disk first, as the recording's */
    if (st == DG_OK && s->own_fp && fsync(fileno(s->fp)) != 0 && errno != EINVAL)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, "hash log", "sync failed: %s", strerror(errno));
    if (s->own_fp && fclose(s->fp) != 0 && st == DG_OK)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, "hash log", "close failed: %s", strerror(errno));
    ZSTD_freeCCtx(s->cctx);
    free(s->zbuf);
    free(s->buf);
    free(s);
    return st;
}
