/* harness/text.c — small text helpers the harness's parsers share: the edit distance behind their
 * "did you mean" hints (the project file's keys, the state streams' members), and the "a, b or c"
 * lists of the formats and engines tables' names. */
#include "harness_internal.h"

#include <stdio.h>
#include <string.h>

void dg_harness__join_names(char *out, size_t cap, const char *const *names, size_t n, const char *sep,
                            const char *last)
{
    size_t len = 0;
    if (cap)
        out[0] = 0;
    for (size_t i = 0; i < n && len < cap; i++) {
        int w = snprintf(out + len, cap - len, "%s%s", i == 0 ? "" : i + 1 == n ? last : sep, names[i]);
        len += w > 0 ? (size_t)w : 0;
    }
}

size_t dg_harness__edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (lb >= 64 || la >= 64)
        return 64; /* names are short: anything this long is near nothing */
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}
