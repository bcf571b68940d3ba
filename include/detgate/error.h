/* detgate — error reporting shared by every module (prefix dg_).
 *
 * The library never prints. A failing call fills a dg_error: what went wrong (code + message
 * with expected vs found), where (file, byte offset, and the section / chunk / op / line it
 * was in). The CLI turns that into one line on stderr. */
#ifndef DETGATE_ERROR_H
#define DETGATE_ERROR_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One list generates the enum and the strings, so they cannot disagree. */
#define DG_STATUS_LIST(X)                                                    \
    X(DG_OK, 0, "ok")                                                        \
    X(DG_E_IO, 1, "I/O error")                                               \
    X(DG_E_NOMEM, 2, "out of memory")                                        \
    X(DG_E_TRUNCATED, 3, "truncated input")                                  \
    X(DG_E_MAGIC, 4, "bad magic")                                            \
    X(DG_E_VERSION, 5, "unsupported format version")                         \
    X(DG_E_MALFORMED, 6, "malformed input")                                  \
    X(DG_E_RANGE, 7, "value out of range")                                   \
    X(DG_E_CHECKSUM, 8, "checksum mismatch")                                 \
    X(DG_E_LIMIT, 9, "size limit exceeded")                                  \
    X(DG_E_UTF8, 10, "invalid UTF-8")                                        \
    X(DG_E_STATE, 11, "invalid state transition")                            \
    X(DG_E_USAGE, 12, "invalid argument")                                    \
    X(DG_E_COMPRESS, 13, "compression error")                                \
    X(DG_E_NOT_FOUND, 14, "not found")                                       \
    X(DG_E_SYNTAX, 15, "syntax error")

typedef enum dg_status {
#define DG_STATUS_ENUM(name, value, text) name = value,
    DG_STATUS_LIST(DG_STATUS_ENUM)
#undef DG_STATUS_ENUM
} dg_status;

#define DG_OFFSET_NONE UINT64_MAX

typedef struct dg_error {
    dg_status code;
    uint64_t offset;   /* byte offset in the file (or in the named chunk's content), DG_OFFSET_NONE if n/a */
    char where[96];    /* "header", "section 0x0002 (faction table)", "chunk 3 (ticks 360..479)", ... */
    char msg[320];     /* what, with expected vs found */
} dg_error;

/* Static text for a status code; never NULL. */
const char *dg_status_str(dg_status code);

/* Resets err to DG_OK. err may be NULL (then nothing happens). */
void dg_error_clear(dg_error *err);

/* Fills err (if non-NULL and still DG_OK — the first error wins) and returns code. */
dg_status dg_error_set(dg_error *err, dg_status code, uint64_t offset, const char *where,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Writes "<where> at byte <offset>: <status>: <msg>" into buf (always NUL-terminated). Control
 * bytes and bytes that are not well-formed UTF-8 come out as \xNN, so input quoted in a message
 * never reaches a terminal raw; a line longer than cap ends with "…" (U+2026). */
void dg_error_format(const dg_error *err, char *buf, size_t cap);

/* An excerpt of input bytes for a message: src[0..n) into dst[0..cap) (always NUL-terminated) with
 * control bytes, C1 controls and bytes that are not well-formed UTF-8 as \xNN and `\` `"` with a
 * backslash (so it can be quoted); what does not fit is cut on a character boundary and marked "…".
 * Returns the bytes written. A 64-byte dst shows at most 60 bytes of input. */
size_t dg_escape_bytes(char *dst, size_t cap, const void *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
