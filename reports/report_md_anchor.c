/* reports/report_md_anchor.c — the anchor GitHub and GitLab give a Markdown heading, so the
 * Markdown report's summary table links to each scenario's section without raw HTML. The rule
 * and where the two generators differ: docs/REPORT-SCHEMA.md, "Markdown anchors". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* Lower case of the cased letters a scenario name is likely to hold: ASCII, Latin-1, Latin
 * Extended-A, basic Greek and Cyrillic (anchor_classify calls the other cased letters UNSURE). */
static uint32_t anchor_lower(uint32_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c + 32;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
        return c + 32;
    if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x138 && c != 0x149 && c != 0x17F) {
        bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
        if (c == 0x178)
            return 0xFF;
        if (odd_upper ? (c & 1) : !(c & 1))
            return c + 1;
        return c;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2)
        return c + 32;
    if (c >= 0x410 && c <= 0x42F)
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    return c;
}

/* How a non-ASCII code point fares. GitHub and GitLab keep letters, marks, decimal digits and
 * connector punctuation (\p{L}\p{M}\p{Nd}\p{Pc}, Ruby's \p{Word}) and drop the rest; dropped here
 * are the blocks of punctuation, symbols and other numbers a name may carry — Latin-1's signs,
 * general punctuation, super- and subscripts, currency, arrows to dingbats, CJK and full-width
 * punctuation, emoji — and anything the report replaces with U+FFFD. UNSURE: a cased letter this
 * file does not lower-case, or a block mixing kinds (letter-like symbols, number forms): the
 * heading then does not carry the name. Anything else (the letters of caseless scripts, marks,
 * digits) is kept as it is. */
typedef enum { ANCHOR_DROP, ANCHOR_KEEP, ANCHOR_UNSURE } anchor_fate;

static anchor_fate anchor_classify(uint32_t c)
{
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF || c == 0xFFFD || c == 0xFFFE || c == 0xFFFF || c < 0x20)
        return ANCHOR_DROP;
    if (c >= 0x80 && c <= 0xBF) /* but ª µ º */
        return c == 0xAA || c == 0xB5 || c == 0xBA ? ANCHOR_KEEP : ANCHOR_DROP;
    if (c == 0xD7 || c == 0xF7)
        return ANCHOR_DROP;
    if (c == 0x130 || (c >= 0x180 && c <= 0x24F) || (c >= 0x370 && c <= 0x390) || c == 0x3AA || c == 0x3AB || (c >= 0x3CF && c <= 0x3FF) ||
        (c >= 0x460 && c <= 0x556) || (c >= 0x10A0 && c <= 0x10FF) || (c >= 0x13A0 && c <= 0x13FF) ||
        (c >= 0x1C80 && c <= 0x1CBF) || (c >= 0x1E00 && c <= 0x1FFF) || (c >= 0x2070 && c <= 0x209F) ||
        (c >= 0x2100 && c <= 0x218F) || (c >= 0x2C00 && c <= 0x2D2F) || (c >= 0xA640 && c <= 0xA69F) ||
        (c >= 0xA720 && c <= 0xA7FF) || (c >= 0xAB70 && c <= 0xABBF) || (c >= 0xFF21 && c <= 0xFF3A) ||
        (c >= 0x10400 && c <= 0x104FF) || (c >= 0x1D400 && c <= 0x1D7FF) || c == 0x3007 ||
        (c >= 0x3021 && c <= 0x3029) || (c >= 0x1E900 && c <= 0x1E95F))
        return ANCHOR_UNSURE;
    if (c >= 0x2000 && c <= 0x206F) /* but the connector punctuation ‿ ⁀ ⁔ */
        return c == 0x203F || c == 0x2040 || c == 0x2054 ? ANCHOR_KEEP : ANCHOR_DROP;
    if ((c >= 0x20A0 && c <= 0x20CF) || (c >= 0x2190 && c <= 0x2BFF))
        return ANCHOR_DROP;
    if ((c >= 0x3000 && c <= 0x3004) || (c >= 0x3008 && c <= 0x3020) || c == 0x3030 || (c >= 0x303D && c <= 0x303F))
        return ANCHOR_DROP;
    if ((c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40 && c != 0xFF3F) ||
        (c >= 0xFF5B && c <= 0xFF65))
        return ANCHOR_DROP;
    if ((c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0xE0000 && c <= 0xE007F))
        return ANCHOR_DROP;
    return ANCHOR_KEEP;
}

static bool anchor_put(char *out, size_t cap, size_t *n, uint32_t c)
{
    char b[4];
    size_t k;
    if (c < 0x80) {
        b[0] = (char)c;
        k = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xC0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3F));
        k = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[2] = (char)(0x80 | (c & 0x3F));
        k = 3;
    } else {
        b[0] = (char)(0xF0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[3] = (char)(0x80 | (c & 0x3F));
        k = 4;
    }
    if (*n + k >= cap)
        return false;
    memcpy(out + *n, b, k);
    *n += k;
    return true;
}

size_t dg_rep__md_slug(const char *text, char *out, size_t cap, bool *sure)
{
    if (sure)
        *sure = true;
    if (!cap)
        return 0;
    out[0] = 0;
    if (!text)
        return 0;
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text), i = 0, n = 0, trail = 0;
    bool started = false, fits = true; /* the heading's text is trimmed of its spaces first */
    while (i < len) {
        uint32_t c;
        i += dg_rep__utf8_next(p + i, len - i, &c);
        if (c == '\t' || c == '\n' || c == '\r') /* how the report writes them in a heading */
            c = ' ';
        if (c == ' ') {
            trail += started;
            continue;
        }
        for (; trail > 0; trail--) /* spaces inside the text: one hyphen each */
            fits = fits && anchor_put(out, cap, &n, '-');
        started = true;
        anchor_fate f = c < 0x80 ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                            c == '-' || c == '_'
                                        ? ANCHOR_KEEP
                                        : ANCHOR_DROP)
                                 : anchor_classify(c);
        if (f == ANCHOR_UNSURE && sure)
            *sure = false;
        if (f != ANCHOR_DROP)
            fits = fits && anchor_put(out, cap, &n, anchor_lower(c));
    }
    if (!fits)
        n = 0;
    out[n] = 0;
    return n;
}

/* GitHub numbers a repeated anchor a-1, a-2, … skipping any already taken. taken[0..n_taken) are
 * the anchors before it. */
static void anchor_github(char (*taken)[DG_REP_ANCHOR_CAP], size_t n_taken, char *slug)
{
    char base[DG_REP_ANCHOR_CAP];
    snprintf(base, sizeof base, "%s", slug);
    for (unsigned k = 1;; k++) {
        bool used = false;
        for (size_t i = 0; i < n_taken && !used; i++)
            used = strcmp(taken[i], slug) == 0;
        if (!used)
            return;
        char num[16];
        int m = snprintf(num, sizeof num, "-%u", k);
        size_t b = strlen(base);
        if (b + (size_t)m >= DG_REP_ANCHOR_CAP)
            b = DG_REP_ANCHOR_CAP - 1 - (size_t)m;
        snprintf(slug, DG_REP_ANCHOR_CAP, "%.*s%s", (int)b, base, num);
    }
}

/* GitLab numbers it by how many headings before had the same base anchor, without the skip. */
static void anchor_gitlab(char (*bases)[DG_REP_ANCHOR_CAP], size_t n_before, const char *base, char *out)
{
    unsigned k = 0;
    for (size_t i = 0; i < n_before; i++)
        k += strcmp(bases[i], base) == 0;
    if (k == 0)
        snprintf(out, DG_REP_ANCHOR_CAP, "%s", base);
    else
        snprintf(out, DG_REP_ANCHOR_CAP, "%.*s-%u", DG_REP_ANCHOR_CAP - 16, base, k);
}

/* The heading text "❌ " + name: usable when its anchor is certain, holds no hyphen run (GitLab
 * folds one, GitHub does not) and the name fits. */
static bool anchor_name_ok(const char *name, char *heading, size_t cap, char *slug)
{
    if (!name || strlen(name) + sizeof "❌ " > cap)
        return false;
    snprintf(heading, cap, "❌ %s", name);
    bool sure;
    size_t n = dg_rep__md_slug(heading, slug, DG_REP_ANCHOR_CAP, &sure);
    return n > 1 && sure && !strstr(slug, "--");
}

bool dg_rep__md_anchors(const char *const *names, size_t n, char (*heading)[DG_REP_HEADING_CAP],
                        char (*anchor)[DG_REP_ANCHOR_CAP])
{
    /* the scenarios' headings in document order, each anchor both as GitHub and as GitLab number
     * it (the report's other headings start with a letter: they never meet these, which start
     * with the hyphen of "❌ ") */
    char (*taken)[DG_REP_ANCHOR_CAP] = malloc((2 * n + 1) * sizeof *taken);
    if (!taken)
        return false;
    char (*bases)[DG_REP_ANCHOR_CAP] = taken + n;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        heading[i][0] = anchor[i][0] = 0;
        if (!names[i])
            continue;
        char base[DG_REP_ANCHOR_CAP], gh[DG_REP_ANCHOR_CAP], gl[DG_REP_ANCHOR_CAP];
        bool ok = false;
        for (int attempt = 0; attempt < 2 && !ok; attempt++) {
            if (attempt == 0) {
                if (!anchor_name_ok(names[i], heading[i], DG_REP_HEADING_CAP, base))
                    continue;
            } else {
                snprintf(heading[i], DG_REP_HEADING_CAP, "❌ Scenario %zu", i + 1);
                dg_rep__md_slug(heading[i], base, sizeof base, NULL);
            }
            memcpy(gh, base, sizeof gh);
            anchor_github(taken, k, gh);
            anchor_gitlab(bases, k, base, gl);
            ok = strcmp(gh, gl) == 0;
        }
        /* the heading is written either way; linked only where both generators agree */
        memcpy(taken[k], gh, sizeof gh);
        memcpy(bases[k], base, sizeof base);
        k++;
        if (ok)
            memcpy(anchor[i], gh, sizeof gh);
    }
    free(taken);
    return true;
}
