/* base/json.h — the one JSON string escaper: the rule every JSON writer in detgate follows
 * (reports, `dump --json`, `info --json`). Private to detgate (not an installed header). */
#ifndef DETGATE_BASE_JSON_H
#define DETGATE_BASE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The escape of code point cp inside a JSON string, written to out (NUL-terminated, at most 7
 * bytes) and returned; NULL when cp goes out as its own UTF-8. Escaped: `"` and `\`, the short
 * forms \b \f \n \r \t, every other C0 control and DEL as \u00XX, and U+2028/U+2029 (legal JSON,
 * but they end a JavaScript string literal). */
const char *dg_json_escape_cp(uint32_t cp, char out[8]);

/* Writes s[0..n) to f as a quoted JSON string: ill-formed UTF-8 becomes U+FFFD, one per bad byte
 * (the decoder's rule, base/cursor.h). */
void dg_json_fput_str(FILE *f, const char *s, size_t n);

#endif
