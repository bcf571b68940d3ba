/* harness/text.c — small text helpers the harness's parsers share: the edit distance behind their
 * "did you mean" hints (the project file's keys, the state streams' members). */
#include "harness_internal.h"

#include <string.h>

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
