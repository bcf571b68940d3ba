/* base/cursor.h — the byte cursor, UTF-8 and the growable buffer every module shares (private to
 * detgate: not installed as a header).
 *
 * Reading: a fail-closed cursor (after Box2D v3's recording reader). Every read is bounds-checked
 * in 64 bits; the first failure is sticky — later reads return zeros and change nothing — and is
 * recorded with its absolute byte offset, so a parser checks `ok` once at the end of a record.
 * Writing: a growable little-endian buffer with the same sticky failure (out of memory).
 * Integers are always assembled byte by byte: never a struct or word cast over file bytes. */
#ifndef DETGATE_BASE_CURSOR_H
#define DETGATE_BASE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"

/* ---- little-endian put/get on raw bytes ---------------------------------------------------- */
static inline uint16_t dg_le16(const uint8_t *p) { return (uint16_t)(p[0] | (uint16_t)p[1] << 8); }
static inline uint32_t dg_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t dg_le64(const uint8_t *p) { return (uint64_t)dg_le32(p) | (uint64_t)dg_le32(p + 4) << 32; }
static inline void dg_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void dg_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void dg_put_le64(uint8_t *p, uint64_t v) { dg_put_le32(p, (uint32_t)v); dg_put_le32(p + 4, (uint32_t)(v >> 32)); }

/* ---- reading ------------------------------------------------------------------------------- */
typedef struct dg_cur {
    const uint8_t *p;   /* first byte of the buffer */
    size_t len;         /* bytes in the buffer */
    size_t pos;         /* next byte to read */
    uint64_t base;      /* absolute file offset of p[0], for error messages */
    const char *where;  /* context named in errors ("header", "section 0x0001 ...") */
    dg_error *err;      /* first failure lands here (may be NULL) */
    bool ok;
} dg_cur;

void dg_cur_init(dg_cur *c, const void *buf, size_t len, uint64_t base, const char *where, dg_error *err);
static inline size_t dg_cur_left(const dg_cur *c) { return c->ok ? c->len - c->pos : 0; }
static inline uint64_t dg_cur_offset(const dg_cur *c) { return c->base + c->pos; }

/* Fails the cursor (if still ok) with code and a printf message at the current offset. */
void dg_cur_fail(dg_cur *c, dg_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* `what` names the field in the truncation message ("u32 tickRateHz"). */
uint8_t dg_cur_u8(dg_cur *c, const char *what);
uint16_t dg_cur_u16(dg_cur *c, const char *what);
uint32_t dg_cur_u32(dg_cur *c, const char *what);
uint64_t dg_cur_u64(dg_cur *c, const char *what);
float dg_cur_f32(dg_cur *c, const char *what);
double dg_cur_f64(dg_cur *c, const char *what);
/* Returns a pointer to n bytes inside the buffer (no copy), or NULL on failure. */
const uint8_t *dg_cur_bytes(dg_cur *c, size_t n, const char *what);
void dg_cur_skip(dg_cur *c, size_t n, const char *what);

/* A string (u16 byte length + UTF-8, no NUL). The view points into the buffer; it is validated
 * as UTF-8 (an error otherwise). On failure *out is {NULL, 0}. */
typedef struct dg_strview {
    const char *s;
    uint16_t len;
} dg_strview;
dg_strview dg_cur_str16(dg_cur *c, const char *what);

/* Fails unless the cursor consumed exactly its buffer (records that must end where they say). */
void dg_cur_expect_end(dg_cur *c, const char *what);

/* True when bytes[0..n) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without NUL. */
bool dg_utf8_valid(const uint8_t *s, size_t n);
/* Length (1..4) of the well-formed UTF-8 character at s[0..n), 0 when it is ill-formed or n == 0. */
size_t dg_utf8_char(const uint8_t *s, size_t n);
/* The same, and *cp set to the character's code point (untouched when 0 is returned): the one
 * UTF-8 decoder of detgate (reports and the JSON escaper decode with it too). */
size_t dg_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);

/* ---- growing ------------------------------------------------------------------------------- */
/* *arr, an array of *cap elements of elem bytes each, grown to hold at least need (its capacity
 * doubled from 16 until it does): the one growth rule of detgate's arrays and buffers. False, *arr
 * and *cap untouched, when out of memory or need elements do not fit size_t. */
bool dg_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* ---- writing ------------------------------------------------------------------------------- */
typedef struct dg_buf {
    uint8_t *p;
    size_t len;
    size_t cap;
    bool ok;    /* false after an allocation failed; later puts do nothing */
} dg_buf;

void dg_buf_init(dg_buf *b);
void dg_buf_free(dg_buf *b);
void dg_buf_reset(dg_buf *b);              /* len = 0, keeps the allocation */
bool dg_buf_reserve(dg_buf *b, size_t extra);
void dg_buf_put(dg_buf *b, const void *src, size_t n);
void dg_buf_u8(dg_buf *b, uint8_t v);
void dg_buf_u16(dg_buf *b, uint16_t v);
void dg_buf_u32(dg_buf *b, uint32_t v);
void dg_buf_u64(dg_buf *b, uint64_t v);
void dg_buf_f32(dg_buf *b, float v);
void dg_buf_f64(dg_buf *b, double v);
/* Writes u16 length + bytes; fails the buffer (returns false) if n > 65535. */
bool dg_buf_str16(dg_buf *b, const char *s, size_t n);

#endif
