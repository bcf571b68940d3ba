/* base/cursor.c — the fail-closed read cursor, the UTF-8 decoder and the growable write buffer. */
#include "cursor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dg_cur_init(dg_cur *c, const void *buf, size_t len, uint64_t base, const char *where, dg_error *err)
{
    c->p = (const uint8_t *)buf;
    c->len = buf ? len : 0;
    c->pos = 0;
    c->base = base;
    c->where = where ? where : "";
    c->err = err;
    c->ok = true;
}

void dg_cur_fail(dg_cur *c, dg_status code, const char *fmt, ...)
{
    if (!c->ok)
        return;
    c->ok = false;
    if (!c->err || c->err->code != DG_OK)
        return;
    char msg[sizeof c->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dg_error_set(c->err, code, c->base + c->pos, c->where, "%s", msg);
}

/* Claims n bytes or fails with a message naming the field and how many bytes were left. */
static const uint8_t *take(dg_cur *c, size_t n, const char *what)
{
    if (!c->ok)
        return NULL;
    if ((uint64_t)n > (uint64_t)(c->len - c->pos)) {
        dg_cur_fail(c, DG_E_TRUNCATED, "expected %s (%zu bytes), found %zu bytes left", what, n,
                    c->len - c->pos);
        return NULL;
    }
    const uint8_t *q = c->p + c->pos;
    c->pos += n;
    return q;
}

uint8_t dg_cur_u8(dg_cur *c, const char *what)
{
    const uint8_t *q = take(c, 1, what);
    return q ? q[0] : 0;
}
uint16_t dg_cur_u16(dg_cur *c, const char *what)
{
    const uint8_t *q = take(c, 2, what);
    return q ? dg_le16(q) : 0;
}
uint32_t dg_cur_u32(dg_cur *c, const char *what)
{
    const uint8_t *q = take(c, 4, what);
    return q ? dg_le32(q) : 0;
}
uint64_t dg_cur_u64(dg_cur *c, const char *what)
{
    const uint8_t *q = take(c, 8, what);
    return q ? dg_le64(q) : 0;
}
float dg_cur_f32(dg_cur *c, const char *what)
{
    uint32_t bits = dg_cur_u32(c, what);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
double dg_cur_f64(dg_cur *c, const char *what)
{
    uint64_t bits = dg_cur_u64(c, what);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
const uint8_t *dg_cur_bytes(dg_cur *c, size_t n, const char *what) { return take(c, n, what); }
void dg_cur_skip(dg_cur *c, size_t n, const char *what) { (void)take(c, n, what); }

dg_strview dg_cur_str16(dg_cur *c, const char *what)
{
    dg_strview v = {NULL, 0};
    uint64_t at = dg_cur_offset(c);
    uint16_t n = dg_cur_u16(c, what);
    const uint8_t *q = take(c, n, what);
    if (!q)
        return v;
    const uint8_t *nul = n ? memchr(q, 0, n) : NULL;
    if (nul) {
        c->pos = (size_t)(at - c->base);
        dg_cur_fail(c, DG_E_UTF8, "expected %s without NUL bytes (%u bytes), found a NUL at byte %zu of it", what, n,
                    (size_t)(nul - q));
        return v;
    }
    if (!dg_utf8_valid(q, n)) {
        c->pos = (size_t)(at - c->base);
        dg_cur_fail(c, DG_E_UTF8, "expected %s as UTF-8 (%u bytes), found invalid UTF-8", what, n);
        return v;
    }
    v.s = (const char *)q;
    v.len = n;
    return v;
}

void dg_cur_expect_end(dg_cur *c, const char *what)
{
    if (c->ok && c->pos != c->len)
        dg_cur_fail(c, DG_E_MALFORMED, "expected %s to end here, found %zu trailing bytes", what,
                    c->len - c->pos);
}

size_t dg_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp_out)
{
    if (n == 0)
        return 0;
    uint8_t b = s[0];
    if (b < 0x80) {
        *cp_out = b;
        return 1;
    }
    size_t need;
    uint32_t cp, min;
    if ((b & 0xE0) == 0xC0) { need = 1; cp = b & 0x1F; min = 0x80; }
    else if ((b & 0xF0) == 0xE0) { need = 2; cp = b & 0x0F; min = 0x800; }
    else if ((b & 0xF8) == 0xF0) { need = 3; cp = b & 0x07; min = 0x10000; }
    else return 0;
    if (n <= need)
        return 0;
    for (size_t k = 1; k <= need; k++) {
        uint8_t t = s[k];
        if ((t & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (t & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *cp_out = cp;
    return need + 1;
}

size_t dg_utf8_char(const uint8_t *s, size_t n)
{
    uint32_t cp;
    return dg_utf8_decode(s, n, &cp);
}

bool dg_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] == 0)
            return false; /* the formats' strings hold no NUL (a C consumer would cut them there) */
        size_t k = dg_utf8_char(s + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* ---- writing ------------------------------------------------------------------------------- */
void dg_buf_init(dg_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->ok = true;
}
void dg_buf_free(dg_buf *b)
{
    free(b->p);
    dg_buf_init(b);
}
void dg_buf_reset(dg_buf *b)
{
    b->len = 0;
    b->ok = true;
}

bool dg_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return false;
        nc *= 2;
    }
    if (elem && nc > SIZE_MAX / elem)
        return false;
    void *v = realloc(*arr, nc * elem);
    if (!v)
        return false;
    *arr = v;
    *cap = nc;
    return true;
}

bool dg_buf_reserve(dg_buf *b, size_t extra)
{
    if (!b->ok)
        return false;
    if (extra <= b->cap - b->len)
        return true;
    if (extra > SIZE_MAX - b->len || !dg_grow((void **)&b->p, &b->cap, b->len + extra, 1)) { /* no wrap */
        b->ok = false;
        return false;
    }
    return true;
}

void dg_buf_put(dg_buf *b, const void *src, size_t n)
{
    if (n == 0 || !dg_buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, src, n);
    b->len += n;
}
void dg_buf_u8(dg_buf *b, uint8_t v) { dg_buf_put(b, &v, 1); }
void dg_buf_u16(dg_buf *b, uint16_t v)
{
    uint8_t t[2];
    dg_put_le16(t, v);
    dg_buf_put(b, t, 2);
}
void dg_buf_u32(dg_buf *b, uint32_t v)
{
    uint8_t t[4];
    dg_put_le32(t, v);
    dg_buf_put(b, t, 4);
}
void dg_buf_u64(dg_buf *b, uint64_t v)
{
    uint8_t t[8];
    dg_put_le64(t, v);
    dg_buf_put(b, t, 8);
}
void dg_buf_f32(dg_buf *b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    dg_buf_u32(b, bits);
}
void dg_buf_f64(dg_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    dg_buf_u64(b, bits);
}
bool dg_buf_str16(dg_buf *b, const char *s, size_t n)
{
    if (n > UINT16_MAX) {
        b->ok = false;
        return false;
    }
    dg_buf_u16(b, (uint16_t)n);
    dg_buf_put(b, s, n);
    return b->ok;
}
