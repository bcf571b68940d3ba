/* base/error.c — dg_error helpers (the one place that turns codes into text) and the escaping
 * that keeps input bytes quoted in a message from reaching a terminal raw. */
#include "detgate/error.h"

#include "cursor.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *dg_status_str(dg_status code)
{
    switch (code) {
#define DG_STATUS_CASE(name, value, text) \
    case name:                             \
        return text;
        DG_STATUS_LIST(DG_STATUS_CASE)
#undef DG_STATUS_CASE
    }
    return "unknown error";
}

void dg_error_clear(dg_error *err)
{
    if (!err)
        return;
    err->code = DG_OK;
    err->offset = DG_OFFSET_NONE;
    err->where[0] = '\0';
    err->msg[0] = '\0';
}

dg_status dg_error_set(dg_error *err, dg_status code, uint64_t offset, const char *where,
                       const char *fmt, ...)
{
    if (!err || err->code != DG_OK)
        return code;
    err->code = code;
    err->offset = offset;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

#define DG_ELLIPSIS "\xE2\x80\xA6" /* U+2026, what a cut excerpt ends with */

/* One piece of escaped output for the input at s[0..n): a well-formed UTF-8 character that is not
 * a control character passes as itself, a byte that is not one becomes \xNN; with quote, `\` and
 * `"` get a backslash. Returns the input bytes consumed, the piece in piece[] (<= 4 bytes + NUL). */
static size_t escape_piece(const uint8_t *s, size_t n, bool quote, char piece[8])
{
    size_t k = dg_utf8_char(s, n);
    bool c1 = k == 2 && s[0] == 0xC2 && s[1] < 0xA0; /* U+0080..U+009F: C1 controls */
    if (k == 1 && (s[0] < 0x20 || s[0] == 0x7F))
        k = 0;
    if (k == 0 || c1) {
        snprintf(piece, 8, "\\x%02x", s[0]);
        return 1;
    }
    if (quote && k == 1 && (s[0] == '\\' || s[0] == '"')) {
        piece[0] = '\\', piece[1] = (char)s[0], piece[2] = '\0';
        return 1;
    }
    memcpy(piece, s, k);
    piece[k] = '\0';
    return k;
}

/* Escapes src[0..n) into dst[0..cap) (always NUL-terminated when cap > 0); when the whole does not
 * fit it stops on a piece boundary and ends with "…". */
static size_t escape_into(char *dst, size_t cap, const uint8_t *src, size_t n, bool quote)
{
    size_t o = 0, i = 0;
    if (cap == 0)
        return 0;
    while (i < n) {
        char piece[8];
        size_t used = escape_piece(src + i, n - i, quote, piece);
        size_t len = strlen(piece);
        /* the last piece may use the room the ellipsis would need; any other must leave it */
        size_t room = i + used == n ? cap - 1 - o : (cap - 1 - o > 3 ? cap - 1 - o - 3 : 0);
        if (len > room) {
            if (cap - 1 - o >= 3) {
                memcpy(dst + o, DG_ELLIPSIS, 3);
                o += 3;
            }
            break;
        }
        memcpy(dst + o, piece, len);
        o += len;
        i += used;
    }
    dst[o] = '\0';
    return o;
}

size_t dg_escape_bytes(char *dst, size_t cap, const void *src, size_t n)
{
    if (!dst)
        return 0;
    return escape_into(dst, cap, src ? (const uint8_t *)src : (const uint8_t *)"", src ? n : 0, true);
}

void dg_error_format(const dg_error *err, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return;
    if (!err) {
        snprintf(buf, cap, "unknown error");
        return;
    }
    char off[40] = "";
    if (err->offset != DG_OFFSET_NONE)
        snprintf(off, sizeof off, " at byte %llu", (unsigned long long)err->offset);
    /* where and msg may quote input bytes: control bytes and ill-formed UTF-8 leave as \xNN, so the
     * one line on stderr stays one line of text whatever the input held */
    char raw[sizeof err->where + sizeof err->msg + 128];
    int n = snprintf(raw, sizeof raw, "%s%s: %s: %s", err->where[0] ? err->where : "input", off,
                     dg_status_str(err->code), err->msg);
    if (n < 0)
        n = 0;
    escape_into(buf, cap, (const uint8_t *)raw, (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1, false);
}
