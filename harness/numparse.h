/* harness/numparse.h — decimal text to double as strtod gives it, fast for plain decimals
 * (harness/numparse.c); used by the CSV and JSON Lines state stream parsers. */
#ifndef DETGATE_HARNESS_NUMPARSE_H
#define DETGATE_HARNESS_NUMPARSE_H

#include <stdbool.h>
#include <stddef.h>

/* s[0..len) as [+-]digits[.digits][(e|E)[+-]digits]: true with *out exactly strtod's value when one
 * of the exact fast paths applies; false (out untouched) for any other text or case, where strtod
 * must decide. Never reads past len. */
bool dg_harness__decimal_fast(const char *s, size_t len, double *out);

/* The number dg_harness__decimal_fast takes at the start of s[0..len), wherever it ends: true with
 * its value and *used its bytes (decimal_fast(s, *used) gives the same); false as decimal_fast.
 * Finds a CSV cell's end and its value in one scan. Never reads past len. */
bool dg_harness__decimal_prefix(const char *s, size_t len, double *out, size_t *used);

/* strtod of s[0..len) (not NUL-terminated): the value, *ok when it took all len bytes, *erange when
 * strtod set ERANGE. errno is left as it was. */
double dg_harness__strtod_n(const char *s, size_t len, bool *ok, int *erange);

/* A CSV number: true when strtod takes all of s[0..len) (0 < len < 64) without ERANGE. */
bool dg_harness__parse_f64(const char *s, size_t len, double *out);

#endif
