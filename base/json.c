/* base/json.c — the JSON string escaper (rules in json.h). */
#include "json.h"

#include "cursor.h"

const char *dg_json_escape_cp(uint32_t cp, char out[8])
{
    static const char hex[] = "0123456789abcdef";
    const char *s = NULL;
    switch (cp) {
    case '"': s = "\\\""; break;
    case '\\': s = "\\\\"; break;
    case '\b': s = "\\b"; break;
    case '\f': s = "\\f"; break;
    case '\n': s = "\\n"; break;
    case '\r': s = "\\r"; break;
    case '\t': s = "\\t"; break;
    default:
        if (!(cp < 0x20 || cp == 0x7F || cp == 0x2028 || cp == 0x2029))
            return NULL;
        out[0] = '\\', out[1] = 'u';
        for (int i = 0; i < 4; i++)
            out[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xFu];
        out[6] = '\0';
        return out;
    }
    size_t i = 0;
    for (; s[i]; i++)
        out[i] = s[i];
    out[i] = '\0';
    return out;
}

void dg_json_fput_str(FILE *f, const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    char esc[8];
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = dg_utf8_decode(p + i, n - i, &cp);
        if (k == 0) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD */
            i++;
            continue;
        }
        const char *e = dg_json_escape_cp(cp, esc);
        if (e)
            fputs(e, f);
        else
            fwrite(p + i, 1, k, f);
        i += k;
    }
    fputc('"', f);
}
