/* sim_stub/scenario.c — the .scn parser: strict, line-oriented, every error names file:line:column
 * and says what was expected and what was found. Any byte sequence is valid input (it either
 * parses or yields one clean error); nothing is allocated from a count the text claims. */
#include "sim_internal.h"
#include "dmath.h"
#include "cursor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCN_LINE_MAX 4096
#define SCN_TOKENS_MAX 48
#define SCN_FILE_MAX (16u << 20)
#define SCN_ENTITIES_MAX 200000u

typedef struct tok {
    const char *key;     /* bare word, or the part before '=' */
    size_t key_len;
    const char *val;     /* after '=' (NULL for a bare word) */
    size_t val_len;
    int quoted;
    int used;
    unsigned col;        /* column of the token */
    unsigned val_col;    /* column of the value */
} tok;

typedef struct parser {
    const char *name;
    const char *line;
    size_t line_len;
    unsigned lineno;
    tok toks[SCN_TOKENS_MAX];
    size_t ntok;
    dg_error *err;
    dg_sim_scenario *s;
    size_t cap_types, cap_factions, cap_entities, cap_roster, cap_objects, cap_pilots, cap_inputs,
        cap_events, cap_text;
    unsigned have_session; /* bit per session key seen */
    uint64_t assignments;  /* entity selections by pilot/input lines so far */
    int have_scenario;
    int at_end;            /* 1 past the last line (the whole-file checks), 2 when the file is empty */
    char unescaped[SCN_LINE_MAX];
} parser;

/* ---------- errors ---------- */

static void show_found(const char *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    if (!p || n == 0) {
        snprintf(out, cap, "end of line");
        return;
    }
    out[o++] = '\'';
    for (size_t i = 0; i < n && o + 6 < cap; i++) {
        unsigned char c = (unsigned char)p[i];
        if (i >= 40) {
            o += (size_t)snprintf(out + o, cap - o, "...");
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '\'')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    if (o + 2 <= cap) {
        out[o++] = '\'';
        out[o] = '\0';
    } else {
        out[cap - 1] = '\0';
    }
}

/* "expected <what>, found '<text>'" at line:col. */
static dg_status fail_at(parser *P, unsigned col, const char *found, size_t found_len, const char *fmt,
                         ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static dg_status fail_at(parser *P, unsigned col, const char *found, size_t found_len, const char *fmt,
                         ...)
{
    char where[96], what[200], shown[140];
    snprintf(where, sizeof where, "%.60s:%u:%u", P->name, P->lineno, col);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!found && P->at_end)   /* a whole-file check: nothing on a line is to blame */
        snprintf(shown, sizeof shown, "%s", P->at_end == 2 ? "an empty file" : "the end of the file");
    else
        show_found(found, found_len, shown, sizeof shown);
    return dg_error_set(P->err, DG_E_SYNTAX, DG_OFFSET_NONE, where, "expected %s, found %s", what, shown);
}

static dg_status fail_tok(parser *P, const tok *t, const char *fmt, const char *what)
{
    if (t->val)
        return fail_at(P, t->val_col, t->val, t->val_len, fmt, what);
    return fail_at(P, t->col, t->key, t->key_len, fmt, what);
}

static dg_status nomem(parser *P)
{
    return dg_error_set(P->err, DG_E_NOMEM, DG_OFFSET_NONE, P->name, "out of memory while parsing");
}

/* ---------- growable arrays ---------- */

/* dg_grow, the new items zeroed */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t was = *cap;
    if (!dg_grow(arr, cap, need, elem))
        return 0;
    memset((char *)*arr + was * elem, 0, (*cap - was) * elem);
    return 1;
}
#define GROW(P, field, capf, n) grow((void **)&(P)->s->field, &(P)->capf, (n), sizeof *(P)->s->field)

/* ---------- tokenizer ---------- */

static int is_word_char(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != '"' && c != '#' && c != '=';
}

/* Splits the current line into tokens: words and key=value pairs (value bare or "quoted"). */
static dg_status tokenize(parser *P)
{
    const char *l = P->line;
    size_t n = P->line_len, i = 0;
    P->ntok = 0;
    while (i < n) {
        unsigned char c = (unsigned char)l[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        if (c == '#')
            break;
        if (!is_word_char(c))
            return fail_at(P, (unsigned)i + 1, l + i, 1, "a keyword, a value or key=value");
        if (P->ntok == SCN_TOKENS_MAX)
            return fail_at(P, (unsigned)i + 1, l + i, n - i, "at most %d tokens on a line", SCN_TOKENS_MAX);
        tok *t = &P->toks[P->ntok++];
        memset(t, 0, sizeof *t);
        t->key = l + i;
        t->col = (unsigned)i + 1;
        while (i < n && is_word_char((unsigned char)l[i]))
            i++;
        t->key_len = (size_t)(l + i - t->key);
        if (i < n && l[i] == '=') {
            i++;
            t->val_col = (unsigned)i + 1;
            if (i < n && l[i] == '"') {
                size_t start = ++i;
                while (i < n && l[i] != '"') {
                    if (l[i] == '\\' && i + 1 < n)
                        i++;
                    i++;
                }
                if (i >= n)
                    return fail_at(P, t->val_col, l + start - 1, n - start + 1, "a closing '\"'");
                t->val = l + start;
                t->val_len = i - start;
                t->quoted = 1;
                i++;
            } else {
                t->val = l + i;
                while (i < n && is_word_char((unsigned char)l[i]))
                    i++;
                t->val_len = (size_t)(l + i - t->val);
                if (t->val_len == 0)
                    return fail_at(P, t->val_col, l + i, i < n ? 1 : 0, "a value after '='");
            }
            if (i < n && !(l[i] == ' ' || l[i] == '\t' || l[i] == '\r' || l[i] == '#'))
                return fail_at(P, (unsigned)i + 1, l + i, 1, "whitespace after a value");
            for (size_t k = 0; k + 1 < P->ntok; k++) {
                tok *o = &P->toks[k];
                if (o->val && o->key_len == t->key_len && memcmp(o->key, t->key, t->key_len) == 0)
                    return fail_at(P, t->col, t->key, t->key_len, "each key once per line (first at column %u)",
                                   o->col);
            }
        }
    }
    return DG_OK;
}

static int tok_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p, word, n) == 0;
}

static tok *kv(parser *P, const char *key)
{
    for (size_t i = 0; i < P->ntok; i++) {
        tok *t = &P->toks[i];
        if (t->val && tok_is(t->key, t->key_len, key)) {
            t->used = 1;
            return t;
        }
    }
    return NULL;
}

static dg_status need_kv(parser *P, const char *key, const char *stmt, tok **out)
{
    *out = kv(P, key);
    if (*out)
        return DG_OK;
    return fail_at(P, (unsigned)P->line_len + 1, NULL, 0, "key '%s=' in a %s statement", key, stmt);
}

/* Every key=value must have been consumed by the statement; anything else is unknown. */
static dg_status check_all_used(parser *P, size_t first, const char *stmt, const char *keys)
{
    for (size_t i = first; i < P->ntok; i++) {
        tok *t = &P->toks[i];
        if (!t->val)
            return fail_at(P, t->col, t->key, t->key_len, "key=value (a %s statement has no more positional values)",
                           stmt);
        if (!t->used)
            return fail_at(P, t->col, t->key, t->key_len, "one of the %s keys (%s)", stmt, keys);
    }
    return DG_OK;
}

/* ---------- values ---------- */

/* Splits "a..b" into two pieces; a single value gives a == b. */
static int split_range(const char *p, size_t n, size_t *alen, const char **b, size_t *blen)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '.' && p[i + 1] == '.') {
            *alen = i;
            *b = p + i + 2;
            *blen = n - i - 2;
            return 1;
        }
    }
    *alen = n;
    *b = p;
    *blen = n;
    return 0;
}

/* Strict decimal number with an optional alphabetic suffix returned in *suf. */
static int scan_number(const char *p, size_t n, double *out, const char **suf, size_t *suf_len)
{
    size_t i = 0, digits = 0;
    char buf[64];
    if (i < n && (p[i] == '-' || p[i] == '+'))
        i++;
    if (n - i > 2 && p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X')) {
        uint64_t v = 0;
        size_t j = i + 2;
        for (; j < n; j++) {
            char c = p[j];
            unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0')
                       : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                       : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10) : 99u;
            if (d == 99u || j - i - 2 >= 16)
                return 0;
            v = v * 16 + d;
        }
        if (j == i + 2)
            return 0;
        *out = (double)v * (p[0] == '-' ? -1.0 : 1.0);
        *suf = p + n;
        *suf_len = 0;
        return 1;
    }
    while (i < n && p[i] >= '0' && p[i] <= '9')
        i++, digits++;
    if (i < n && p[i] == '.' && !(i + 1 < n && p[i + 1] == '.')) {
        i++;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E') && i + 1 < n &&
        ((p[i + 1] >= '0' && p[i + 1] <= '9') ||
         ((p[i + 1] == '-' || p[i + 1] == '+') && i + 2 < n && p[i + 2] >= '0' && p[i + 2] <= '9'))) {
        i += 2;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i >= sizeof buf)
        return 0;
    memcpy(buf, p, i);
    buf[i] = '\0';
    errno = 0;
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + i || errno == ERANGE || !(v == v) || v > 1e300 || v < -1e300)
        return 0;
    *out = v;
    *suf = p + i;
    *suf_len = n - i;
    return 1;
}

static dg_status val_double_in(parser *P, const char *p, size_t n, unsigned col, double lo,
                               double hi, const char *what, double *out)
{
    double v;
    const char *suf;
    size_t sl;
    if (!scan_number(p, n, &v, &suf, &sl) || sl != 0)
        return fail_at(P, col, p, n, "%s (a number)", what);
    if (v < lo || v > hi)
        return fail_at(P, col, p, n, "%s in %g..%g", what, lo, hi);
    *out = v;
    return DG_OK;
}

static dg_status val_u64_in(parser *P, const char *p, size_t n, unsigned col, uint64_t lo, uint64_t hi,
                            const char *what, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    int hex = n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    if (hex)
        i = 2;
    if (i >= n)
        return fail_at(P, col, p, n, "%s (an unsigned integer)", what);
    for (; i < n; i++) {
        char c = p[i];
        unsigned d = (c >= '0' && c <= '9') ? (unsigned)(c - '0')
                   : (hex && c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                   : (hex && c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10) : 99u;
        unsigned base = hex ? 16u : 10u;
        if (d == 99u)
            return fail_at(P, col, p, n, "%s (an unsigned integer)", what);
        if (v > (UINT64_MAX - d) / base)
            return fail_at(P, col, p, n, "%s that fits in 64 bits", what);
        v = v * base + d;
    }
    if (v < lo || v > hi)
        return fail_at(P, col, p, n, "%s in %llu..%llu", what, (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return DG_OK;
}

static dg_status tok_u64(parser *P, const tok *t, uint64_t lo, uint64_t hi, const char *what, uint64_t *out)
{
    if (t->quoted)
        return fail_tok(P, t, "%s (an unquoted integer)", what);
    return val_u64_in(P, t->val, t->val_len, t->val_col, lo, hi, what, out);
}

static dg_status tok_double(parser *P, const tok *t, double lo, double hi, const char *what, double *out)
{
    if (t->quoted)
        return fail_tok(P, t, "%s (an unquoted number)", what);
    return val_double_in(P, t->val, t->val_len, t->val_col, lo, hi, what, out);
}

/* A number with a unit suffix from a table: {"km", 1000}, ... ; "" = the default unit. */
typedef struct unit {
    const char *suffix;
    double scale;
} unit;

static const unit units_len[] = {{"", 1.0}, {"m", 1.0}, {"km", 1000.0}, {"stud", DG_SIM_STUD_M}, {NULL, 0}};
static const unit units_speed[] = {{"", 1.0}, {"mps", 1.0}, {"kmh", 1.0 / 3.6}, {"kt", 1852.0 / 3600.0},
                                   {"stud", DG_SIM_STUD_M}, {NULL, 0}};

static dg_status val_unit(parser *P, const char *p, size_t n, unsigned col, const unit *units, double lo,
                          double hi, const char *what, double *out)
{
    double v;
    const char *suf;
    size_t sl;
    if (!scan_number(p, n, &v, &suf, &sl))
        return fail_at(P, col, p, n, "%s (a number with an optional unit)", what);
    for (const unit *u = units; u->suffix; u++) {
        if (tok_is(suf, sl, u->suffix)) {
            v *= u->scale;
            if (!(v >= lo && v <= hi))
                return fail_at(P, col, p, n, "%s in %g..%g (SI units)", what, lo, hi);
            *out = v;
            return DG_OK;
        }
    }
    return fail_at(P, col + (unsigned)(suf - p), suf, sl, "a unit for %s", what);
}

static dg_status tok_unit(parser *P, const tok *t, const unit *units, double lo, double hi, const char *what,
                          double *out)
{
    if (t->quoted)
        return fail_tok(P, t, "%s (unquoted)", what);
    return val_unit(P, t->val, t->val_len, t->val_col, units, lo, hi, what, out);
}

static dg_status tok_unit_range(parser *P, const tok *t, const unit *units, double lo, double hi,
                                const char *what, double *a, double *b)
{
    size_t al, bl;
    const char *bp;
    if (t->quoted)
        return fail_tok(P, t, "%s (unquoted)", what);
    split_range(t->val, t->val_len, &al, &bp, &bl);
    if (val_unit(P, t->val, al, t->val_col, units, lo, hi, what, a) ||
        val_unit(P, bp, bl, t->val_col + (unsigned)(bp - t->val), units, lo, hi, what, b))
        return DG_E_SYNTAX;
    if (*b < *a)
        return fail_at(P, t->val_col, t->val, t->val_len, "a range lo..hi with lo <= hi for %s", what);
    return DG_OK;
}

static int session_has(parser *P, unsigned bit) { return (P->have_session >> bit) & 1u; }

enum { SK_TICK_RATE, SK_DURATION, SK_SEED, SK_RADIUS, SK_MISSION, SK_KEYFRAME, SK_START, SK_GRAVITY,
       SK_AIR, SK_SCALE_H, SK_ORIGIN, SK_COUNT };

/* A tick: an integer tick, or a time with unit ms/s/min/h, or "end". Must be < duration. */
static dg_status val_tick(parser *P, const char *p, size_t n, unsigned col, const char *what, uint64_t *out)
{
    const dg_sim_session *ss = &P->s->session;
    if (!session_has(P, SK_TICK_RATE) || !session_has(P, SK_DURATION))
        return fail_at(P, col, p, n, "session tick_rate= and duration= to be set before %s", what);
    if (tok_is(p, n, "end")) {
        *out = ss->duration_ticks - 1;
        return DG_OK;
    }
    double v;
    const char *suf;
    size_t sl;
    if (!scan_number(p, n, &v, &suf, &sl) || v < 0)
        return fail_at(P, col, p, n, "%s (ticks, or a time like 12s / 2min / 1h, or 'end')", what);
    double scale;
    if (sl == 0)
        scale = 1.0;
    else if (tok_is(suf, sl, "ms"))
        scale = ss->tick_rate_hz / 1000.0;
    else if (tok_is(suf, sl, "s"))
        scale = ss->tick_rate_hz;
    else if (tok_is(suf, sl, "min"))
        scale = ss->tick_rate_hz * 60.0;
    else if (tok_is(suf, sl, "h"))
        scale = ss->tick_rate_hz * 3600.0;
    else
        return fail_at(P, col + (unsigned)(suf - p), suf, sl, "a time unit (ms, s, min, h) for %s", what);
    double t = v * scale + 0.5;
    if (!(t < (double)ss->duration_ticks))
        return fail_at(P, col, p, n, "%s before the end of the session (tick < %llu)", what,
                       (unsigned long long)ss->duration_ticks);
    if (sl == 0 && v != (double)(uint64_t)v) /* v < duration here, so the cast is defined */
        return fail_at(P, col, p, n, "%s as a whole number of ticks", what);
    *out = (uint64_t)t;
    return DG_OK;
}

static dg_status tok_tick(parser *P, const tok *t, const char *what, uint64_t *out)
{
    if (t->quoted)
        return fail_tok(P, t, "%s (unquoted)", what);
    return val_tick(P, t->val, t->val_len, t->val_col, what, out);
}

/* A duration in ticks (period): like a tick but may equal or exceed nothing; >= 1. */
static dg_status tok_period(parser *P, const tok *t, const char *what, uint64_t *out)
{
    dg_status st = tok_tick(P, t, what, out);
    if (st)
        return st;
    if (*out == 0)
        return fail_tok(P, t, "%s of at least one tick", what);
    return DG_OK;
}

static dg_status tok_tick_range(parser *P, const tok *t, const char *what, uint64_t *a, uint64_t *b)
{
    size_t al, bl;
    const char *bp;
    if (t->quoted)
        return fail_tok(P, t, "%s (unquoted)", what);
    split_range(t->val, t->val_len, &al, &bp, &bl);
    if (val_tick(P, t->val, al, t->val_col, what, a) ||
        val_tick(P, bp, bl, t->val_col + (unsigned)(bp - t->val), what, b))
        return DG_E_SYNTAX;
    if (*b < *a)
        return fail_at(P, t->val_col, t->val, t->val_len, "a tick range a..b with a <= b for %s", what);
    return DG_OK;
}

/* Comma-separated list of exactly k numbers (with units from the table). */
static dg_status tok_vec(parser *P, const tok *t, size_t k, const unit *const *units, const double *lo,
                         const double *hi, const char *what, double *out)
{
    if (t->quoted)
        return fail_tok(P, t, "%s (unquoted)", what);
    const char *p = t->val, *end = t->val + t->val_len;
    for (size_t i = 0; i < k; i++) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        if (q == end && i + 1 < k)
            return fail_at(P, t->val_col, t->val, t->val_len, "%s as %zu comma-separated numbers", what, k);
        if (val_unit(P, p, (size_t)(q - p), t->val_col + (unsigned)(p - t->val), units[i], lo[i], hi[i], what,
                     &out[i]))
            return DG_E_SYNTAX;
        p = q + 1;
        if (i + 1 == k && q != end)
            return fail_at(P, t->val_col + (unsigned)(q - t->val), q, (size_t)(end - q),
                           "end of %s after %zu numbers", what, k);
    }
    return DG_OK;
}

/* Unescapes a quoted value (\" and \\ only) into P->unescaped; checks UTF-8 and length. */
static dg_status tok_string(parser *P, const tok *t, size_t max, const char *what, const char **out, size_t *len)
{
    size_t o = 0;
    for (size_t i = 0; i < t->val_len; i++) {
        char c = t->val[i];
        if (c == '\\') {
            if (i + 1 >= t->val_len || (t->val[i + 1] != '"' && t->val[i + 1] != '\\'))
                return fail_at(P, t->val_col + 1 + (unsigned)i, t->val + i, 2, "an escape \\\" or \\\\ in %s", what);
            c = t->val[++i];
        }
        if ((unsigned char)c < 0x20 || c == 0x7f)
            return fail_at(P, t->val_col + 1 + (unsigned)i, t->val + i, 1, "printable text in %s", what);
        P->unescaped[o++] = c;
    }
    if (o >= max)
        return fail_at(P, t->val_col, t->val, t->val_len, "%s of at most %zu bytes", what, max - 1);
    if (!dg_utf8_valid((const uint8_t *)P->unescaped, o)) /* control bytes, NUL among them, refused above */
        return fail_at(P, t->val_col, t->val, t->val_len, "valid UTF-8 in %s", what);
    P->unescaped[o] = '\0';
    *out = P->unescaped;
    *len = o;
    return DG_OK;
}

/* An identifier: [A-Za-z0-9_.-]+, at most 31 bytes. */
static dg_status check_ident(parser *P, const char *p, size_t n, unsigned col, const char *what)
{
    if (n == 0 || n >= DG_SIM_ID_MAX)
        return fail_at(P, col, p, n, "%s (1..%d characters of A-Z a-z 0-9 _ . -)", what, DG_SIM_ID_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return fail_at(P, col, p, n, "%s (1..%d characters of A-Z a-z 0-9 _ . -)", what, DG_SIM_ID_MAX - 1);
    }
    return DG_OK;
}

static dg_status copy_string(parser *P, const tok *t, char *dst, size_t cap, const char *what)
{
    const char *s;
    size_t n;
    if (!t->quoted)
        return fail_tok(P, t, "%s as a \"quoted string\"", what);
    if (tok_string(P, t, cap, what, &s, &n))
        return DG_E_SYNTAX;
    memcpy(dst, s, n + 1);
    return DG_OK;
}

static int find_type(const dg_sim_scenario *s, const char *p, size_t n)
{
    for (size_t i = 0; i < s->ntypes; i++)
        if (tok_is(p, n, s->types[i].pub.id))
            return (int)i;
    return -1;
}

static int find_faction(const dg_sim_scenario *s, const char *p, size_t n)
{
    for (size_t i = 0; i < s->nfactions; i++)
        if (tok_is(p, n, s->factions[i].id))
            return (int)i;
    return -1;
}

static dg_status tok_type(parser *P, const tok *t, int *out)
{
    *out = t->quoted ? -1 : find_type(P->s, t->val, t->val_len);
    if (*out < 0)
        return fail_tok(P, t, "%s", "a declared entity type id");
    return DG_OK;
}

static dg_status tok_faction(parser *P, const tok *t, int *out)
{
    *out = t->quoted ? -1 : find_faction(P->s, t->val, t->val_len);
    if (*out < 0)
        return fail_tok(P, t, "%s", "a declared faction id");
    return DG_OK;
}

/* Declared entities are appended in increasing id order, so lookup is a binary search. */
static const scn_entity *find_entity(const dg_sim_scenario *s, uint32_t id)
{
    size_t lo = 0, hi = s->nentities;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->entities[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nentities && s->entities[lo].id == id ? &s->entities[lo] : NULL;
}

static dg_status val_entity_ref(parser *P, const char *p, size_t n, unsigned col, uint32_t *out)
{
    uint64_t v;
    if (val_u64_in(P, p, n, col, 1, UINT32_MAX, "an entity id", &v))
        return DG_E_SYNTAX;
    if (!find_entity(P->s, (uint32_t)v))
        return fail_at(P, col, p, n, "the id of an entity declared above");
    *out = (uint32_t)v;
    return DG_OK;
}

/* Positional "7" or "1..40": every id in the range must be declared. */
static dg_status pos_id_range(parser *P, const tok *t, uint32_t *lo, uint32_t *hi)
{
    size_t al, bl;
    const char *bp;
    uint64_t a, b;
    split_range(t->key, t->key_len, &al, &bp, &bl);
    if (val_u64_in(P, t->key, al, t->col, 1, UINT32_MAX, "an entity id or range a..b", &a) ||
        val_u64_in(P, bp, bl, t->col + (unsigned)(bp - t->key), 1, UINT32_MAX, "an entity id or range a..b", &b))
        return DG_E_SYNTAX;
    if (b < a)
        return fail_at(P, t->col, t->key, t->key_len, "an id range a..b with a <= b");
    const scn_entity *ea = find_entity(P->s, (uint32_t)a), *eb = find_entity(P->s, (uint32_t)b);
    if (!ea || !eb || (uint64_t)(eb - ea) != b - a)
        return fail_at(P, t->col, t->key, t->key_len, "ids of entities declared above (every id in the range)");
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
    return DG_OK;
}

/* Pilot and input lines select id ranges; their total is bounded so the world's per-entity
 * schedule stays proportional to the text. */
static dg_status count_assignments(parser *P, const tok *t, uint32_t lo, uint32_t hi)
{
    P->assignments += (uint64_t)hi - lo + 1;
    if (P->assignments > (1u << 24))
        return fail_at(P, t->col, t->key, t->key_len, "at most %u pilot/input entity selections in total", 1u << 24);
    return DG_OK;
}

static dg_status need_positional(parser *P, size_t idx, const char *what)
{
    if (idx < P->ntok && !P->toks[idx].val)
        return DG_OK;
    if (idx < P->ntok)
        return fail_at(P, P->toks[idx].col, P->toks[idx].key, P->toks[idx].key_len, "%s", what);
    return fail_at(P, (unsigned)P->line_len + 1, NULL, 0, "%s", what);
}

static dg_status add_text(parser *P, const char *s, size_t n, uint32_t *off)
{
    if (!grow((void **)&P->s->text, &P->cap_text, P->s->text_len + n + 1, 1))
        return nomem(P);
    memcpy(P->s->text + P->s->text_len, s, n);
    *off = (uint32_t)P->s->text_len;
    P->s->text_len += n;
    return DG_OK;
}

/* ---------- statements ---------- */

static dg_status st_scenario(parser *P)
{
    if (P->have_scenario)
        return fail_at(P, P->toks[0].col, P->toks[0].key, P->toks[0].key_len, "one 'scenario' line only");
    if (need_positional(P, 1, "the scenario name"))
        return DG_E_SYNTAX;
    tok *t = &P->toks[1];
    if (check_ident(P, t->key, t->key_len, t->col, "the scenario name"))
        return DG_E_SYNTAX;
    memcpy(P->s->session.name, t->key, t->key_len);
    P->have_scenario = 1;
    return check_all_used(P, 2, "scenario", "none");
}

static const char *const session_keys[SK_COUNT] = {"tick_rate", "duration", "seed", "planet_radius",
                                                   "mission", "keyframe_interval", "start_unix", "gravity",
                                                   "air_density", "scale_height", "origin"};

static dg_status session_key(parser *P, unsigned k, tok *t)
{
    dg_sim_session *ss = &P->s->session;
    uint64_t u;
    double v[2];
    switch (k) {
    case SK_TICK_RATE:
        if (tok_u64(P, t, 1, 1000, "tick_rate (Hz)", &u))
            return DG_E_SYNTAX;
        ss->tick_rate_hz = (uint32_t)u;
        return DG_OK;
    case SK_DURATION: {
        if (!session_has(P, SK_TICK_RATE))
            return fail_tok(P, t, "%s", "tick_rate= before duration=");
        double d;
        const char *suf;
        size_t sl;
        if (t->quoted || !scan_number(t->val, t->val_len, &d, &suf, &sl) || d <= 0)
            return fail_tok(P, t, "%s", "a positive duration (ticks, or a time like 25s / 10min / 1h)");
        double scale = sl == 0 ? 1.0 : tok_is(suf, sl, "s") ? ss->tick_rate_hz
                     : tok_is(suf, sl, "min") ? ss->tick_rate_hz * 60.0
                     : tok_is(suf, sl, "h") ? ss->tick_rate_hz * 3600.0 : -1.0;
        if (scale < 0)
            return fail_at(P, t->val_col + (unsigned)(suf - t->val), suf, sl, "a time unit (s, min, h) for duration");
        double ticks = d * scale + 0.5;
        if (ticks < 1.0 || ticks > 1e9)
            return fail_tok(P, t, "%s", "a duration of 1..1e9 ticks");
        ss->duration_ticks = (uint64_t)ticks;
        return DG_OK;
    }
    case SK_SEED:
        if (tok_u64(P, t, 0, UINT64_MAX, "seed", &u))
            return DG_E_SYNTAX;
        ss->seed = u;
        return DG_OK;
    case SK_RADIUS:
        return tok_unit(P, t, units_len, 1000.0, 3.0e7, "planet_radius", &ss->planet_radius_m);
    case SK_MISSION:
        return copy_string(P, t, ss->mission_id, sizeof ss->mission_id, "mission");
    case SK_KEYFRAME:
        if (tok_u64(P, t, 15, 3600, "keyframe_interval (ticks)", &u))
            return DG_E_SYNTAX;
        ss->keyframe_interval = (uint32_t)u;
        return DG_OK;
    case SK_START:
        return tok_u64(P, t, 0, UINT64_MAX, "start_unix (seconds)", &ss->start_unix);
    case SK_GRAVITY:
        return tok_double(P, t, 0.0, 100.0, "gravity (m/s^2)", &ss->gravity_mps2);
    case SK_AIR:
        return tok_double(P, t, 0.0, 100.0, "air_density (kg/m^3)", &ss->air_density);
    case SK_SCALE_H:
        return tok_unit(P, t, units_len, 100.0, 1e6, "scale_height", &ss->scale_height_m);
    case SK_ORIGIN: {
        static const unit *const uu[2] = {units_len, units_len};
        static const double lo[2] = {-90.0, -180.0}, hi[2] = {90.0, 180.0};
        if (tok_vec(P, t, 2, uu, lo, hi, "origin (lat,lon in degrees)", v))
            return DG_E_SYNTAX;
        ss->origin_lat_deg = v[0];
        ss->origin_lon_deg = v[1];
        return DG_OK;
    }
    default:
        return DG_E_SYNTAX;
    }
}

static dg_status st_session(parser *P)
{
    if (P->ntok < 2)
        return fail_at(P, (unsigned)P->line_len + 1, NULL, 0, "at least one session key=value");
    for (size_t i = 1; i < P->ntok; i++) {
        tok *t = &P->toks[i];
        unsigned k = 0;
        while (k < SK_COUNT && !tok_is(t->key, t->key_len, session_keys[k]))
            k++;
        if (!t->val || k == SK_COUNT)
            return fail_at(P, t->col, t->key, t->key_len,
                           "a session key=value (tick_rate, duration, seed, planet_radius, mission, "
                           "keyframe_interval, start_unix, gravity, air_density, scale_height, origin)");
        if (session_has(P, k))
            return fail_at(P, t->col, t->key, t->key_len, "each session key once per scenario");
        if (session_key(P, k, t))
            return DG_E_SYNTAX;
        P->have_session |= 1u << k;
    }
    return DG_OK;
}

static const char *const category_names[] = {"aircraft", "missile", "ground", "static", "character", "other"};
static const char *const projectile_names[] = {"none", "guided", "ballistic"};

static void type_defaults(scn_type *ty)
{
    ty->mass = 12000.0, ty->wing_area = 28.0, ty->thrust = 120000.0, ty->cl0 = 0.1, ty->cla = 5.0;
    ty->cd0 = 0.02, ty->k_induced = 0.08, ty->cyb = 1.0;
    ty->max_roll = 3.0, ty->max_pitch = 0.6, ty->max_yaw = 0.3;
    ty->speed = 900.0, ty->accel = 200.0, ty->turn_g = 30.0, ty->lifetime_s = 30.0, ty->damage = 1.0;
    ty->hit_radius = 15.0;
    ty->walk = 16.0 * DG_SIM_STUD_M, ty->run = 24.0 * DG_SIM_STUD_M, ty->turn = 180.0;
}

typedef struct num_key {
    const char *key;
    size_t off;
    const unit *units;
    double lo, hi;
} num_key;

#define TY(f) offsetof(scn_type, f)
static const num_key type_num_keys[] = {
    {"mass", TY(mass), units_len, 1.0, 1e7},           {"wing_area", TY(wing_area), units_len, 0.01, 1e5},
    {"thrust", TY(thrust), units_len, 0.0, 1e8},       {"cl0", TY(cl0), units_len, -1.0, 2.0},
    {"cla", TY(cla), units_len, 0.1, 20.0},            {"cd0", TY(cd0), units_len, 0.0, 2.0},
    {"k", TY(k_induced), units_len, 0.0, 2.0},         {"cyb", TY(cyb), units_len, 0.0, 10.0},
    {"max_roll", TY(max_roll), units_len, 0.0, 20.0},  {"max_pitch", TY(max_pitch), units_len, 0.0, 10.0},
    {"max_yaw", TY(max_yaw), units_len, 0.0, 10.0},    {"speed", TY(speed), units_speed, 1.0, 5000.0},
    {"accel", TY(accel), units_len, 0.0, 10000.0},     {"turn_g", TY(turn_g), units_len, 0.1, 200.0},
    {"lifetime", TY(lifetime_s), units_len, 0.1, 3600.0}, {"damage", TY(damage), units_len, 0.0, 1.0},
    {"hit_radius", TY(hit_radius), units_len, 0.1, 1000.0}, {"walk", TY(walk), units_speed, 0.0, 100.0},
    {"run", TY(run), units_speed, 0.0, 200.0},         {"turn", TY(turn), units_len, 0.0, 3600.0},
};
#undef TY

static dg_status st_type(parser *P)
{
    dg_sim_scenario *s = P->s;
    if (need_positional(P, 1, "the type id"))
        return DG_E_SYNTAX;
    tok *id = &P->toks[1];
    if (check_ident(P, id->key, id->key_len, id->col, "a type id"))
        return DG_E_SYNTAX;
    if (find_type(s, id->key, id->key_len) >= 0)
        return fail_at(P, id->col, id->key, id->key_len, "a new type id (this one is already declared)");
    if (s->ntypes >= 1024)
        return fail_at(P, id->col, id->key, id->key_len, "at most 1024 entity types");
    if (!GROW(P, types, cap_types, s->ntypes + 1))
        return nomem(P);
    scn_type *ty = &s->types[s->ntypes];
    memset(ty, 0, sizeof *ty);
    type_defaults(ty);
    memcpy(ty->pub.id, id->key, id->key_len);
    ty->pub.index = (uint16_t)s->ntypes;
    tok *t;
    if (need_kv(P, "category", "type", &t))
        return DG_E_SYNTAX;
    unsigned c = 0;
    while (c < 6 && !tok_is(t->val, t->val_len, category_names[c]))
        c++;
    if (c == 6 || t->quoted)
        return fail_tok(P, t, "%s", "a category (aircraft, missile, ground, static, character, other)");
    ty->pub.category = (uint8_t)c;
    ty->pub.projectile = c == DG_SIM_CAT_MISSILE ? DG_SIM_PROJ_GUIDED : DG_SIM_PROJ_NONE;
    if ((t = kv(P, "projectile"))) {
        unsigned pk = 0;
        while (pk < 3 && !tok_is(t->val, t->val_len, projectile_names[pk]))
            pk++;
        if (pk == 3 || t->quoted)
            return fail_tok(P, t, "%s", "a projectile kind (none, guided, ballistic)");
        if ((pk != DG_SIM_PROJ_NONE) != (c == DG_SIM_CAT_MISSILE))
            return fail_tok(P, t, "%s", "projectile=none for a non-missile type and guided/ballistic for a missile");
        ty->pub.projectile = (uint8_t)pk;
    }
    if (need_kv(P, "name", "type", &t) || copy_string(P, t, ty->pub.name, sizeof ty->pub.name, "name"))
        return DG_E_SYNTAX;
    for (size_t i = 0; i < sizeof type_num_keys / sizeof type_num_keys[0]; i++) {
        const num_key *nk = &type_num_keys[i];
        if ((t = kv(P, nk->key)) &&
            tok_unit(P, t, nk->units, nk->lo, nk->hi, nk->key, (double *)((char *)ty + nk->off)))
            return DG_E_SYNTAX;
    }
    ty->turn *= DG_SIM_DEG; /* stored in rad/s */
    if (check_all_used(P, 2, "type",
                       "category, name, projectile, mass, wing_area, thrust, cl0, cla, cd0, k, cyb, max_roll, "
                       "max_pitch, max_yaw, speed, accel, turn_g, lifetime, damage, hit_radius, walk, run, turn"))
        return DG_E_SYNTAX;
    s->ntypes++;
    return DG_OK;
}

static dg_status st_faction(parser *P)
{
    dg_sim_scenario *s = P->s;
    if (need_positional(P, 1, "the faction id"))
        return DG_E_SYNTAX;
    tok *id = &P->toks[1];
    if (check_ident(P, id->key, id->key_len, id->col, "a faction id"))
        return DG_E_SYNTAX;
    if (find_faction(s, id->key, id->key_len) >= 0)
        return fail_at(P, id->col, id->key, id->key_len, "a new faction id (this one is already declared)");
    if (s->nfactions >= 1024)
        return fail_at(P, id->col, id->key, id->key_len, "at most 1024 factions");
    if (!GROW(P, factions, cap_factions, s->nfactions + 1))
        return nomem(P);
    dg_sim_faction *f = &s->factions[s->nfactions];
    memset(f, 0, sizeof *f);
    memcpy(f->id, id->key, id->key_len);
    f->index = (uint16_t)s->nfactions;
    tok *t;
    if (need_kv(P, "name", "faction", &t) || copy_string(P, t, f->name, sizeof f->name, "name"))
        return DG_E_SYNTAX;
    if (check_all_used(P, 2, "faction", "name"))
        return DG_E_SYNTAX;
    s->nfactions++;
    return DG_OK;
}

/* at= / local= / area=+alt=, heading=, speed= shared by entity, group and wave. */
static dg_status parse_place(parser *P, scn_place_spec *pl, int allow_area, int allow_point)
{
    static const unit *const u3[3] = {units_len, units_len, units_len};
    static const double geo_lo[3] = {-90.0, -180.0, -1e5}, geo_hi[3] = {90.0, 180.0, 1e7};
    static const double loc_lo[3] = {-1e7, -1e7, -1e5}, loc_hi[3] = {1e7, 1e7, 1e7};
    static const double area_lo[3] = {-1e7, -1e7, 0.0}, area_hi[3] = {1e7, 1e7, 1e7};
    tok *at = allow_point ? kv(P, "at") : NULL, *loc = allow_point ? kv(P, "local") : NULL;
    tok *area = allow_area ? kv(P, "area") : NULL;
    int given = (at != NULL) + (loc != NULL) + (area != NULL);
    const char *opts = allow_area && allow_point ? "at=lat,lon,alt or local=e,n,u or area=e,n,radius"
                     : allow_area ? "area=e,n,radius" : "at=lat,lon,alt or local=e,n,u";
    if (given != 1) {
        tok *second = NULL; /* report the later of the two in the line */
        tok *all[3] = {at, loc, area};
        for (int i = 0; i < 3; i++)
            if (all[i] && given > 1 && (!second || all[i]->col > second->col))
                second = all[i];
        if (second)
            return fail_at(P, second->col, second->key, second->key_len, "only one of %s", opts);
        return fail_at(P, (unsigned)P->line_len + 1, NULL, 0, "a placement: %s", opts);
    }
    double v[3];
    if (at) {
        if (tok_vec(P, at, 3, u3, geo_lo, geo_hi, "at (lat,lon,alt)", v))
            return DG_E_SYNTAX;
        pl->kind = SCN_PLACE_GEO;
    } else if (loc) {
        if (tok_vec(P, loc, 3, u3, loc_lo, loc_hi, "local (east,north,up)", v))
            return DG_E_SYNTAX;
        pl->kind = SCN_PLACE_LOCAL;
    } else {
        if (tok_vec(P, area, 3, u3, area_lo, area_hi, "area (east,north,radius)", v))
            return DG_E_SYNTAX;
        pl->kind = SCN_PLACE_AREA;
        pl->radius = v[2];
        v[2] = 0.0;
        tok *alt;
        if (need_kv(P, "alt", "placement with area=", &alt) ||
            tok_unit_range(P, alt, units_len, -1e5, 1e7, "alt", &pl->alt_lo, &pl->alt_hi))
            return DG_E_SYNTAX;
    }
    pl->a = v[0], pl->b = v[1], pl->c = v[2];
    tok *t;
    pl->heading_random = allow_area ? 1 : 0;
    if ((t = kv(P, "heading"))) {
        if (!t->quoted && tok_is(t->val, t->val_len, "random")) {
            pl->heading_random = 1;
        } else {
            if (tok_double(P, t, -360.0, 360.0, "heading (degrees from north, or random)", &pl->heading_deg))
                return DG_E_SYNTAX;
            pl->heading_random = 0;
        }
    }
    pl->speed_lo = pl->speed_hi = 0.0;
    if ((t = kv(P, "speed")) && tok_unit_range(P, t, units_speed, 0.0, 5000.0, "speed", &pl->speed_lo, &pl->speed_hi))
        return DG_E_SYNTAX;
    return DG_OK;
}

#define SCN_ROSTER_MAX 65536u
#define SCN_OBJECTS_MAX 65536u
#define SCN_ASSIGN_MAX (1u << 24)

/* Participants first..first+n-1 must all be new: checked once per statement against the whole
 * roster (members of one group are distinct by construction), so a big group stays linear. */
static dg_status check_participants_free(parser *P, uint64_t first, uint64_t n, const tok *pt)
{
    const dg_sim_scenario *s = P->s;
    if (s->nroster + n > SCN_ROSTER_MAX)
        return fail_at(P, pt->col, pt->key, pt->key_len, "at most %u roster entries", SCN_ROSTER_MAX);
    for (size_t i = 0; i < s->nroster; i++)
        if (s->roster[i].participant_id >= first && s->roster[i].participant_id - first < n)
            return fail_at(P, pt->val_col, pt->val, pt->val_len,
                           "a participant id not used before (%u is taken by entity %u)",
                           s->roster[i].participant_id, s->roster[i].entity_id);
    return DG_OK;
}

static dg_status add_roster(parser *P, uint64_t participant, uint32_t entity_id, const char *callsign)
{
    dg_sim_scenario *s = P->s;
    if (!GROW(P, roster, cap_roster, s->nroster + 1))
        return nomem(P);
    dg_sim_roster_entry *r = &s->roster[s->nroster++];
    memset(r, 0, sizeof *r);
    r->participant_id = (uint32_t)participant;
    r->entity_id = entity_id;
    snprintf(r->callsign, sizeof r->callsign, "%s", callsign);
    return DG_OK;
}

/* Expands "%d" in a callsign pattern with the entity id. */
static dg_status expand_callsign(parser *P, const tok *t, const char *pat, uint32_t id, char *out)
{
    char idbuf[16];
    size_t o = 0;
    snprintf(idbuf, sizeof idbuf, "%u", id);
    for (const char *p = pat; *p; p++) {
        if (p[0] == '%' && p[1] == 'd') {
            size_t n = strlen(idbuf);
            if (o + n >= DG_SIM_NAME_MAX)
                return fail_tok(P, t, "%s", "a callsign of at most 63 bytes once %d is replaced");
            memcpy(out + o, idbuf, n);
            o += n;
            p++;
        } else {
            if (o + 1 >= DG_SIM_NAME_MAX)
                return fail_tok(P, t, "%s", "a callsign of at most 63 bytes once %d is replaced");
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return DG_OK;
}

/* The positional "<id>" (entity) or "<lo>..<hi>" (group): new ids, above every declared one. */
static dg_status declared_id_range(parser *P, int is_group, uint64_t *lo, uint64_t *hi)
{
    const dg_sim_scenario *s = P->s;
    if (need_positional(P, 1, is_group ? "an id range lo..hi" : "the entity id"))
        return DG_E_SYNTAX;
    tok *idt = &P->toks[1];
    size_t al, bl;
    const char *bp;
    int ranged = split_range(idt->key, idt->key_len, &al, &bp, &bl);
    if (ranged != is_group)
        return fail_at(P, idt->col, idt->key, idt->key_len, "%s", is_group ? "an id range lo..hi" : "a single entity id");
    if (val_u64_in(P, idt->key, al, idt->col, 1, UINT32_MAX - 1, "an entity id", lo) ||
        val_u64_in(P, bp, bl, idt->col + (unsigned)(bp - idt->key), 1, UINT32_MAX - 1, "an entity id", hi))
        return DG_E_SYNTAX;
    if (*hi < *lo)
        return fail_at(P, idt->col, idt->key, idt->key_len, "an id range lo..hi with lo <= hi");
    if (*lo <= s->max_declared_id)
        return fail_at(P, idt->col, idt->key, idt->key_len,
                       "ids above %u (entity ids are declared in increasing order, each once)", s->max_declared_id);
    if (s->nentities + (*hi - *lo + 1) > SCN_ENTITIES_MAX)
        return fail_at(P, idt->col, idt->key, idt->key_len, "at most %u declared entities", SCN_ENTITIES_MAX);
    return DG_OK;
}

/* faction=a (entity) or faction=a,b,... (group: dealt round-robin). */
static dg_status faction_list(parser *P, int is_group, const char *stmt, int *fi, size_t *nfi)
{
    tok *t;
    if (need_kv(P, "faction", stmt, &t))
        return DG_E_SYNTAX;
    const char *p = t->val, *end = t->val + t->val_len;
    *nfi = 0;
    while (p <= end) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        if (*nfi == 16 || (!is_group && *nfi == 1))
            return fail_tok(P, t, "%s", is_group ? "at most 16 factions" : "one faction id");
        fi[*nfi] = t->quoted ? -1 : find_faction(P->s, p, (size_t)(q - p));
        if (fi[*nfi] < 0)
            return fail_at(P, t->val_col + (unsigned)(p - t->val), p, (size_t)(q - p), "a declared faction id");
        (*nfi)++;
        p = q + 1;
    }
    return DG_OK;
}

/* spawn=, despawn=, health= */
static dg_status lifecycle_options(parser *P, scn_entity *proto)
{
    tok *t;
    proto->spawn_lo = proto->spawn_hi = 0;
    proto->despawn = DG_SIM_TICK_NONE;
    proto->health = 1.0;
    if ((t = kv(P, "spawn")) && tok_tick_range(P, t, "spawn", &proto->spawn_lo, &proto->spawn_hi))
        return DG_E_SYNTAX;
    if ((t = kv(P, "despawn"))) {
        if (tok_tick(P, t, "despawn", &proto->despawn))
            return DG_E_SYNTAX;
        if (proto->despawn <= proto->spawn_hi)
            return fail_tok(P, t, "%s", "a despawn tick after the spawn tick");
    }
    if ((t = kv(P, "health")) && tok_double(P, t, 0.0001, 1.0, "health (0..1]", &proto->health))
        return DG_E_SYNTAX;
    return DG_OK;
}

/* object="<id>": entity lines only, unique. */
static dg_status object_option(parser *P, int is_group, char objid[DG_SIM_ID_MAX], int *has)
{
    const dg_sim_scenario *s = P->s;
    tok *obj = kv(P, "object");
    *has = obj != NULL;
    if (!obj)
        return DG_OK;
    const char *o;
    size_t on;
    if (is_group)
        return fail_at(P, obj->col, obj->key, obj->key_len, "object= on an entity line, not a group");
    if (!obj->quoted)
        return fail_tok(P, obj, "%s", "a \"quoted\" mission-object id");
    if (tok_string(P, obj, DG_SIM_ID_MAX, "object id", &o, &on) || check_ident(P, o, on, obj->val_col, "a mission-object id"))
        return DG_E_SYNTAX;
    if (s->nobjects >= SCN_OBJECTS_MAX)
        return fail_tok(P, obj, "%s", "at most 65536 mission objects");
    for (size_t i = 0; i < s->nobjects; i++)
        if (tok_is(o, on, s->objects[i].id))
            return fail_tok(P, obj, "%s", "a mission-object id not used before");
    memcpy(objid, o, on);
    objid[on] = '\0';
    return DG_OK;
}

static dg_status add_object(parser *P, const char *objid, uint32_t entity_id)
{
    dg_sim_scenario *s = P->s;
    if (!GROW(P, objects, cap_objects, s->nobjects + 1))
        return nomem(P);
    dg_sim_object *o = &s->objects[s->nobjects++];
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "%s", objid);
    o->entity_id = entity_id;
    return DG_OK;
}

/* entity <id> ... and group <lo>..<hi> ...: one code path, a group is many entities. */
static dg_status st_entities(parser *P, int is_group)
{
    dg_sim_scenario *s = P->s;
    const char *stmt = is_group ? "group" : "entity";
    uint64_t lo, hi;
    scn_entity proto;
    memset(&proto, 0, sizeof proto);
    int ti, fi[16];
    size_t nfi = 0;
    tok *t;
    if (declared_id_range(P, is_group, &lo, &hi) || need_kv(P, "type", stmt, &t) || tok_type(P, t, &ti) ||
        faction_list(P, is_group, stmt, fi, &nfi) || parse_place(P, &proto.place, is_group, 1) ||
        lifecycle_options(P, &proto))
        return DG_E_SYNTAX;
    proto.type = (uint16_t)ti;
    if (!is_group && proto.place.kind != SCN_PLACE_AREA)
        proto.place.heading_random = 0;
    tok *cs = kv(P, "callsign"), *pt = kv(P, "participant");
    char pattern[DG_SIM_NAME_MAX] = "", objid[DG_SIM_ID_MAX] = "";
    uint64_t participant = 0;
    int has_obj;
    if ((cs != NULL) != (pt != NULL)) {
        tok *have = cs ? cs : pt;
        return fail_at(P, have->col, have->key, have->key_len, "callsign= and participant= together");
    }
    if (cs && (copy_string(P, cs, pattern, sizeof pattern, "callsign") ||
               tok_u64(P, pt, 1, UINT32_MAX - (hi - lo), "participant id", &participant) ||
               check_participants_free(P, participant, hi - lo + 1, pt)))
        return DG_E_SYNTAX;
    if (object_option(P, is_group, objid, &has_obj) ||
        check_all_used(P, 2, stmt,
                       "type, faction, at, local, area, alt, heading, speed, spawn, despawn, health, callsign, "
                       "participant, object"))
        return DG_E_SYNTAX;
    if (!GROW(P, entities, cap_entities, s->nentities + (size_t)(hi - lo + 1)))
        return nomem(P);
    for (uint64_t id = lo; id <= hi; id++) {
        scn_entity *e = &s->entities[s->nentities++];
        *e = proto;
        e->id = (uint32_t)id;
        e->faction = (uint16_t)fi[(id - lo) % nfi];
        char callsign[DG_SIM_NAME_MAX];
        if (cs && (expand_callsign(P, cs, pattern, (uint32_t)id, callsign) ||
                   add_roster(P, participant + (id - lo), (uint32_t)id, callsign)))
            return DG_E_SYNTAX;
    }
    if (has_obj && add_object(P, objid, (uint32_t)lo))
        return DG_E_SYNTAX;
    s->max_declared_id = (uint32_t)hi;
    return DG_OK;
}

static const char *const mode_names[] = {"", "cruise", "weave", "orbit", "chase", "random", "walk", "drive", "hold"};

static dg_status st_pilot(parser *P)
{
    dg_sim_scenario *s = P->s;
    scn_pilot pl;
    memset(&pl, 0, sizeof pl);
    if (need_positional(P, 1, "an entity id or id range") || pos_id_range(P, &P->toks[1], &pl.id_lo, &pl.id_hi) ||
        count_assignments(P, &P->toks[1], pl.id_lo, pl.id_hi))
        return DG_E_SYNTAX;
    tok *t;
    if (need_kv(P, "mode", "pilot", &t))
        return DG_E_SYNTAX;
    unsigned m = 1;
    while (m <= SCN_MODE_HOLD && !tok_is(t->val, t->val_len, mode_names[m]))
        m++;
    if (m > SCN_MODE_HOLD || t->quoted)
        return fail_tok(P, t, "%s", "a pilot mode (cruise, weave, orbit, chase, random, walk, drive, hold)");
    pl.mode = (uint8_t)m;
    for (uint32_t id = pl.id_lo;; id++) {
        const scn_entity *e = find_entity(s, id);
        uint8_t cat = s->types[e->type].pub.category;
        int air = m <= SCN_MODE_RANDOM, ok = air ? cat == DG_SIM_CAT_AIRCRAFT
                                             : m == SCN_MODE_HOLD ? cat != DG_SIM_CAT_MISSILE
                                                                  : (cat == DG_SIM_CAT_CHARACTER || cat == DG_SIM_CAT_GROUND);
        if (!ok)
            return fail_tok(P, t, "%s", air ? "a flight mode only for aircraft entities"
                                             : "walk/drive/hold only for character or ground entities");
        if (id == pl.id_hi)
            break;
    }
    pl.from = 0;
    pl.until = s->session.duration_ticks ? s->session.duration_ticks - 1 : 0;
    if ((t = kv(P, "from")) && tok_tick(P, t, "from", &pl.from))
        return DG_E_SYNTAX;
    if ((t = kv(P, "until")) && tok_tick(P, t, "until", &pl.until))
        return DG_E_SYNTAX;
    if (pl.until < pl.from)
        return fail_tok(P, t, "%s", "until >= from");
    pl.bank_deg = 60.0, pl.period_ticks = 8.0 * s->session.tick_rate_hz, pl.alt_lo = 1000.0, pl.alt_hi = 8000.0;
    pl.speed = 0.0, pl.move = 0.6, pl.walk = 0.0, pl.run = 0.0, pl.turn_dps = 0.0;
    if ((t = kv(P, "bank")) && tok_double(P, t, 0.0, 85.0, "bank (degrees)", &pl.bank_deg))
        return DG_E_SYNTAX;
    if ((t = kv(P, "period"))) {
        uint64_t per;
        if (tok_period(P, t, "period", &per))
            return DG_E_SYNTAX;
        pl.period_ticks = (double)per;
    }
    if ((t = kv(P, "alt")) && tok_unit_range(P, t, units_len, 50.0, 1e6, "alt", &pl.alt_lo, &pl.alt_hi))
        return DG_E_SYNTAX;
    if ((t = kv(P, "speed")) && tok_unit(P, t, units_speed, 0.0, 2000.0, "speed", &pl.speed))
        return DG_E_SYNTAX;
    if ((t = kv(P, "move")) && tok_double(P, t, 0.0, 1.0, "move (fraction of time moving)", &pl.move))
        return DG_E_SYNTAX;
    if ((t = kv(P, "walk")) && tok_unit(P, t, units_speed, 0.0, 100.0, "walk", &pl.walk))
        return DG_E_SYNTAX;
    if ((t = kv(P, "run")) && tok_unit(P, t, units_speed, 0.0, 200.0, "run", &pl.run))
        return DG_E_SYNTAX;
    if ((t = kv(P, "turn")) && tok_double(P, t, 0.0, 3600.0, "turn (degrees/s)", &pl.turn_dps))
        return DG_E_SYNTAX;
    if ((t = kv(P, "target"))) {
        if (m != SCN_MODE_CHASE)
            return fail_at(P, t->col, t->key, t->key_len, "target= only with mode=chase");
        if (!t->quoted && tok_is(t->val, t->val_len, "nearest"))
            pl.target = 0;
        else if (t->quoted || val_entity_ref(P, t->val, t->val_len, t->val_col, &pl.target))
            return t->quoted ? fail_tok(P, t, "%s", "an entity id or 'nearest'") : DG_E_SYNTAX;
    }
    if (check_all_used(P, 2, "pilot", "mode, from, until, bank, period, alt, speed, move, walk, run, turn, target"))
        return DG_E_SYNTAX;
    if (!GROW(P, pilots, cap_pilots, s->npilots + 1))
        return nomem(P);
    s->pilots[s->npilots++] = pl;
    return DG_OK;
}

static dg_status st_input(parser *P)
{
    dg_sim_scenario *s = P->s;
    scn_input in;
    memset(&in, 0, sizeof in);
    if (need_positional(P, 1, "an entity id or id range") || pos_id_range(P, &P->toks[1], &in.id_lo, &in.id_hi) ||
        count_assignments(P, &P->toks[1], in.id_lo, in.id_hi))
        return DG_E_SYNTAX;
    for (uint32_t id = in.id_lo;; id++) {
        if (s->types[find_entity(s, id)->type].pub.category != DG_SIM_CAT_AIRCRAFT)
            return fail_at(P, P->toks[1].col, P->toks[1].key, P->toks[1].key_len, "aircraft entities (pilot inputs fly aircraft)");
        if (id == in.id_hi)
            break;
    }
    tok *t;
    if (need_kv(P, "ticks", "input", &t) || tok_tick_range(P, t, "ticks", &in.from, &in.to))
        return DG_E_SYNTAX;
    in.until = in.to;
    if ((t = kv(P, "every"))) {
        if (tok_period(P, t, "every", &in.every))
            return DG_E_SYNTAX;
        if (in.every <= in.to - in.from)
            return fail_tok(P, t, "%s", "a repeat period longer than the ticks= window");
        in.until = s->session.duration_ticks - 1;
    }
    if ((t = kv(P, "until"))) {
        if (!in.every)
            return fail_at(P, t->col, t->key, t->key_len, "until= only with every=");
        if (tok_tick(P, t, "until", &in.until))
            return DG_E_SYNTAX;
    }
    static const char *const axes[4] = {"throttle", "pitch", "roll", "yaw"};
    double *vals[4] = {&in.throttle, &in.pitch, &in.roll, &in.yaw};
    for (unsigned i = 0; i < 4; i++) {
        if ((t = kv(P, axes[i]))) {
            if (tok_double(P, t, i == 0 ? 0.0 : -1.0, 1.0, axes[i], vals[i]))
                return DG_E_SYNTAX;
            in.axes |= (uint8_t)(1u << i);
        }
    }
    if (!in.axes)
        return fail_at(P, (unsigned)P->line_len + 1, NULL, 0, "at least one of throttle=, pitch=, roll=, yaw=");
    if (check_all_used(P, 2, "input", "ticks, every, until, throttle, pitch, roll, yaw"))
        return DG_E_SYNTAX;
    if (!GROW(P, inputs, cap_inputs, s->ninputs + 1))
        return nomem(P);
    s->inputs[s->ninputs++] = in;
    return DG_OK;
}

static const char *const admin_names[] = {"", "kick", "ban", "mute", "warn", "heal", "slay"};

static int participant_known(const dg_sim_scenario *s, uint64_t p)
{
    if (p == 0)
        return 1;
    for (size_t i = 0; i < s->nroster; i++)
        if (s->roster[i].participant_id == p)
            return 1;
    return 0;
}

static dg_status tok_participant(parser *P, const tok *t, uint32_t *out)
{
    uint64_t v;
    if (tok_u64(P, t, 0, UINT32_MAX, "a participant id (0 = server)", &v))
        return DG_E_SYNTAX;
    if (!participant_known(P->s, v))
        return fail_tok(P, t, "%s", "0 or a participant id from the roster above");
    *out = (uint32_t)v;
    return DG_OK;
}

/* at= every= until= shared by every timeline event. */
static dg_status event_when(parser *P, scn_event *ev, int repeatable)
{
    tok *t;
    if (need_kv(P, "at", "timeline", &t) || tok_tick(P, t, "at", &ev->at))
        return DG_E_SYNTAX;
    ev->until = ev->at;
    if ((t = kv(P, "every"))) {
        if (!repeatable)
            return fail_at(P, t->col, t->key, t->key_len, "no every= on this statement (it happens once)");
        if (tok_period(P, t, "every", &ev->every))
            return DG_E_SYNTAX;
        ev->until = P->s->session.duration_ticks - 1;
    }
    if ((t = kv(P, "until"))) {
        if (!ev->every)
            return fail_at(P, t->col, t->key, t->key_len, "until= only with every=");
        if (tok_tick(P, t, "until", &ev->until))
            return DG_E_SYNTAX;
        if (ev->until < ev->at)
            return fail_tok(P, t, "%s", "until >= at");
    }
    return DG_OK;
}

static dg_status tok_missile_type(parser *P, const tok *t, uint16_t *out)
{
    int ti;
    if (tok_type(P, t, &ti))
        return DG_E_SYNTAX;
    if (P->s->types[ti].pub.category != DG_SIM_CAT_MISSILE)
        return fail_tok(P, t, "%s", "a missile type for weapon=");
    *out = (uint16_t)ti;
    return DG_OK;
}

static dg_status event_text(parser *P, scn_event *ev, int required, const char *stmt)
{
    tok *t = required ? NULL : kv(P, "text");
    if (required && need_kv(P, "text", stmt, &t))
        return DG_E_SYNTAX;
    if (!t)
        return DG_OK;
    const char *str;
    size_t n;
    if (!t->quoted)
        return fail_tok(P, t, "%s", "text as a \"quoted string\"");
    if (tok_string(P, t, DG_SIM_TEXT_MAX, "text", &str, &n) || add_text(P, str, n, &ev->text_off))
        return DG_E_SYNTAX;
    ev->text_len = (uint16_t)n;
    return DG_OK;
}

static dg_status ev_despawn(parser *P, scn_event *ev)
{
    if (need_positional(P, 1, "the entity id") ||
        val_entity_ref(P, P->toks[1].key, P->toks[1].key_len, P->toks[1].col, &ev->a))
        return DG_E_SYNTAX;
    return event_when(P, ev, 0);
}

static dg_status ev_fire(parser *P, scn_event *ev)
{
    tok *t;
    if (need_positional(P, 1, "the shooter's entity id") ||
        val_entity_ref(P, P->toks[1].key, P->toks[1].key_len, P->toks[1].col, &ev->a) || event_when(P, ev, 1) ||
        need_kv(P, "weapon", "fire", &t) || tok_missile_type(P, t, &ev->type2) || need_kv(P, "target", "fire", &t))
        return DG_E_SYNTAX;
    if (t->quoted)
        return fail_tok(P, t, "%s", "an entity id");
    if (val_entity_ref(P, t->val, t->val_len, t->val_col, &ev->b))
        return DG_E_SYNTAX;
    if (ev->b == ev->a)
        return fail_tok(P, t, "%s", "a target other than the shooter");
    return DG_OK;
}

static dg_status ev_salvo(parser *P, scn_event *ev)
{
    tok *t;
    int fi;
    uint64_t u;
    if (event_when(P, ev, 1) || need_kv(P, "weapon", "salvo", &t) || tok_missile_type(P, t, &ev->type2) ||
        need_kv(P, "from", "salvo", &t) || tok_faction(P, t, &fi))
        return DG_E_SYNTAX;
    ev->c = (uint16_t)fi;
    if (need_kv(P, "to", "salvo", &t) || tok_faction(P, t, &fi))
        return DG_E_SYNTAX;
    ev->faction2 = (uint16_t)fi;
    ev->count = 1;
    if ((t = kv(P, "count"))) {
        if (tok_u64(P, t, 1, 64, "count", &u))
            return DG_E_SYNTAX;
        ev->count = (uint32_t)u;
    }
    return DG_OK;
}

static dg_status ev_wave(parser *P, scn_event *ev)
{
    tok *t;
    int ti, fi;
    uint64_t u;
    if (event_when(P, ev, 1) || need_kv(P, "type", "wave", &t) || tok_type(P, t, &ti))
        return DG_E_SYNTAX;
    if (P->s->types[ti].pub.category == DG_SIM_CAT_MISSILE)
        return fail_tok(P, t, "%s", "a non-missile type (missiles are launched with fire/salvo)");
    ev->type2 = (uint16_t)ti;
    if (need_kv(P, "faction", "wave", &t) || tok_faction(P, t, &fi))
        return DG_E_SYNTAX;
    ev->faction2 = (uint16_t)fi;
    if (need_kv(P, "count", "wave", &t) || tok_u64(P, t, 1, 1000, "count", &u))
        return DG_E_SYNTAX;
    ev->count = (uint32_t)u;
    if (need_kv(P, "lifetime", "wave", &t) || tok_period(P, t, "lifetime", &ev->lifetime_ticks))
        return DG_E_SYNTAX;
    return parse_place(P, &ev->place, 1, 0);
}

static dg_status ev_chat(parser *P, scn_event *ev)
{
    tok *t;
    uint64_t u;
    if (event_when(P, ev, 1) || need_kv(P, "from", "chat", &t) || tok_participant(P, t, &ev->a))
        return DG_E_SYNTAX;
    if ((t = kv(P, "channel"))) {
        if (tok_u64(P, t, 0, 65535, "channel", &u))
            return DG_E_SYNTAX;
        ev->c = (uint16_t)u;
    }
    return event_text(P, ev, 1, "chat");
}

static dg_status ev_admin(parser *P, scn_event *ev)
{
    tok *t;
    if (event_when(P, ev, 0) || need_kv(P, "actor", "admin", &t) || tok_participant(P, t, &ev->a) ||
        need_kv(P, "target", "admin", &t))
        return DG_E_SYNTAX;
    if (t->quoted)
        return fail_tok(P, t, "%s", "an entity id");
    if (val_entity_ref(P, t->val, t->val_len, t->val_col, &ev->b) || need_kv(P, "action", "admin", &t))
        return DG_E_SYNTAX;
    unsigned a = 1;
    while (a <= 6 && !tok_is(t->val, t->val_len, admin_names[a]))
        a++;
    if (a > 6 || t->quoted)
        return fail_tok(P, t, "%s", "an admin action (kick, ban, mute, warn, heal, slay)");
    ev->c = (uint16_t)a;
    return event_text(P, ev, 0, "admin");
}

static dg_status ev_alert(parser *P, scn_event *ev)
{
    tok *t;
    int fi;
    uint64_t u;
    if (event_when(P, ev, 1) || need_kv(P, "faction", "alert", &t) || tok_faction(P, t, &fi))
        return DG_E_SYNTAX;
    ev->c = (uint16_t)fi;
    if (need_kv(P, "level", "alert", &t) || tok_u64(P, t, 0, 255, "level", &u))
        return DG_E_SYNTAX;
    ev->d = (uint16_t)u;
    return DG_OK;
}

typedef struct event_stmt {
    const char *name;
    dg_status (*parse)(parser *P, scn_event *ev);
    size_t first_kv;  /* index of the first key=value token */
    const char *keys; /* for the unknown-key message */
} event_stmt;

/* Indexed by scn_event_kind. */
static const event_stmt event_stmts[] = {
    {"", NULL, 1, ""},
    {"despawn", ev_despawn, 2, "at"},
    {"fire", ev_fire, 2, "at, every, until, weapon, target"},
    {"salvo", ev_salvo, 1, "at, every, until, weapon, from, to, count"},
    {"wave", ev_wave, 1, "at, every, until, type, faction, count, lifetime, area, alt, heading, speed"},
    {"chat", ev_chat, 1, "at, every, until, from, channel, text"},
    {"admin", ev_admin, 1, "at, actor, target, action, text"},
    {"alert", ev_alert, 1, "at, every, until, faction, level"},
};

static dg_status st_event(parser *P, uint8_t kind)
{
    dg_sim_scenario *s = P->s;
    const event_stmt *es = &event_stmts[kind];
    scn_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    if (es->parse(P, &ev) || check_all_used(P, es->first_kv, es->name, es->keys))
        return DG_E_SYNTAX;
    if (s->nevents >= 100000)
        return fail_at(P, 1, P->line, P->line_len, "at most 100000 timeline statements");
    if (!GROW(P, events, cap_events, s->nevents + 1))
        return nomem(P);
    s->events[s->nevents++] = ev;
    return DG_OK;
}

/* ---------- driver ---------- */

static dg_status statement(parser *P)
{
    tok *k = &P->toks[0];
    if (k->val)
        return fail_at(P, k->col, k->key, k->key_len, "a statement keyword before any key=value");
    if (!P->have_scenario && !tok_is(k->key, k->key_len, "scenario"))
        return fail_at(P, k->col, k->key, k->key_len, "'scenario <name>' as the first statement");
    if (tok_is(k->key, k->key_len, "scenario"))
        return st_scenario(P);
    if (tok_is(k->key, k->key_len, "session"))
        return st_session(P);
    if (tok_is(k->key, k->key_len, "type"))
        return st_type(P);
    if (tok_is(k->key, k->key_len, "faction"))
        return st_faction(P);
    static const char *const timeline[] = {"entity", "group", "pilot", "input", "despawn", "fire",
                                           "salvo", "wave", "chat", "admin", "alert"};
    size_t i = 0;
    while (i < sizeof timeline / sizeof timeline[0] && !tok_is(k->key, k->key_len, timeline[i]))
        i++;
    if (i == sizeof timeline / sizeof timeline[0])
        return fail_at(P, k->col, k->key, k->key_len,
                       "a statement keyword (scenario, session, type, faction, entity, group, pilot, input, "
                       "despawn, fire, salvo, wave, chat, admin, alert)");
    if (!session_has(P, SK_TICK_RATE) || !session_has(P, SK_DURATION))
        return fail_at(P, k->col, k->key, k->key_len, "session tick_rate= and duration= before '%s'", timeline[i]);
    switch (i) {
    case 0: return st_entities(P, 0);
    case 1: return st_entities(P, 1);
    case 2: return st_pilot(P);
    case 3: return st_input(P);
    case 4: return st_event(P, SCN_EV_DESPAWN);
    case 5: return st_event(P, SCN_EV_FIRE);
    case 6: return st_event(P, SCN_EV_SALVO);
    case 7: return st_event(P, SCN_EV_WAVE);
    case 8: return st_event(P, SCN_EV_CHAT);
    case 9: return st_event(P, SCN_EV_ADMIN);
    default: return st_event(P, SCN_EV_ALERT);
    }
}

static dg_status finish(parser *P)
{
    dg_sim_scenario *s = P->s;
    if (!P->have_scenario)
        return fail_at(P, 1, NULL, 0, "'scenario <name>' as the first statement");
    static const unsigned required[] = {SK_TICK_RATE, SK_DURATION, SK_SEED, SK_RADIUS};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!session_has(P, required[i]))
            return fail_at(P, 1, NULL, 0, "session key '%s=' somewhere in the file", session_keys[required[i]]);
    if (s->ntypes == 0)
        return fail_at(P, 1, NULL, 0, "at least one 'type' statement");
    if (s->nfactions == 0)
        return fail_at(P, 1, NULL, 0, "at least one 'faction' statement");
    dg_sim_session *ss = &s->session;
    if (!session_has(P, SK_KEYFRAME))
        ss->keyframe_interval = 120;
    if (!session_has(P, SK_GRAVITY))
        ss->gravity_mps2 = 9.81;
    if (!session_has(P, SK_AIR))
        ss->air_density = 1.225;
    if (!session_has(P, SK_SCALE_H))
        ss->scale_height_m = 8500.0;
    s->pub_types = calloc(s->ntypes, sizeof *s->pub_types);
    if (!s->pub_types)
        return nomem(P);
    for (size_t i = 0; i < s->ntypes; i++)
        s->pub_types[i] = s->types[i].pub;
    /* roster sorted by participant id (insertion sort: rosters are small and mostly sorted) */
    for (size_t i = 1; i < s->nroster; i++) {
        dg_sim_roster_entry r = s->roster[i];
        size_t j = i;
        while (j > 0 && s->roster[j - 1].participant_id > r.participant_id) {
            s->roster[j] = s->roster[j - 1];
            j--;
        }
        s->roster[j] = r;
    }
    dg_sim__enu_at(ss->origin_lat_deg, ss->origin_lon_deg, s->frame_east, s->frame_north, s->frame_up);
    dg_sim__geo_to_world(ss->planet_radius_m, ss->origin_lat_deg, ss->origin_lon_deg, 0.0, s->frame_origin);
    return DG_OK;
}

dg_status dg_sim_scenario_parse_mem(const char *text, size_t len, const char *name, dg_sim_scenario **out,
                                    dg_error *err)
{
    if (out)
        *out = NULL;
    if (!out || (!text && len))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_sim_scenario_parse_mem", "NULL argument");
    parser *P = calloc(1, sizeof *P);
    dg_sim_scenario *s = calloc(1, sizeof *s);
    dg_error local;
    dg_error_clear(&local);
    if (!P || !s) {
        free(P);
        free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, name, "out of memory");
    }
    P->name = name ? name : "<scenario>";
    P->err = &local;
    P->s = s;
    dg_status st = DG_OK;
    size_t pos = 0;
    while (pos < len && st == DG_OK) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        P->lineno++;
        P->line = text + pos;
        P->line_len = end - pos;
        if (P->line_len > SCN_LINE_MAX)
            st = fail_at(P, SCN_LINE_MAX + 1, text + pos + SCN_LINE_MAX, 1, "a line of at most %d bytes", SCN_LINE_MAX);
        else if (memchr(P->line, '\0', P->line_len))
            st = fail_at(P, (unsigned)((const char *)memchr(P->line, '\0', P->line_len) - P->line) + 1,
                         (const char *)memchr(P->line, '\0', P->line_len), 1, "text (no NUL bytes)");
        else if ((st = tokenize(P)) == DG_OK && P->ntok > 0)
            st = statement(P);
        pos = end + 1;
    }
    if (st == DG_OK) {
        P->lineno++;
        P->line = text + len;
        P->line_len = 0;
        P->at_end = len == 0 ? 2 : 1;
        st = finish(P);
    }
    free(P);
    if (st != DG_OK) {
        if (local.code == DG_OK)
            dg_error_set(&local, st, DG_OFFSET_NONE, name, "scenario rejected");
        if (err && err->code == DG_OK)
            *err = local;
        dg_sim_scenario_free(s);
        return local.code;
    }
    *out = s;
    return DG_OK;
}

dg_status dg_sim_scenario_parse_file(const char *path, dg_sim_scenario **out, dg_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_sim_scenario_parse_file", "NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    /* a regular file's size is known before reading it (a pipe's is found by reading past the cap) */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > SCN_FILE_MAX) {
        fclose(f);
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, path, "expected a scenario of at most %u bytes, found "
                            "%lld bytes", SCN_FILE_MAX, (long long)sb.st_size);
    }
    char *buf = malloc(SCN_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    size_t n = fread(buf, 1, SCN_FILE_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    dg_status st;
    if (bad)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "read error");
    else if (n > SCN_FILE_MAX)
        st = dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, path, "expected a scenario of at most %u bytes, found more",
                          SCN_FILE_MAX);
    else
        st = dg_sim_scenario_parse_mem(buf, n, path, out, err);
    free(buf);
    return st;
}

void dg_sim_scenario_free(dg_sim_scenario *s)
{
    if (!s)
        return;
    free(s->types);
    free(s->pub_types);
    free(s->factions);
    free(s->entities);
    free(s->roster);
    free(s->objects);
    free(s->pilots);
    free(s->inputs);
    free(s->events);
    free(s->text);
    free(s);
}

const dg_sim_session *dg_sim_scenario_session(const dg_sim_scenario *s) { return &s->session; }

const dg_sim_type *dg_sim_scenario_types(const dg_sim_scenario *s, size_t *count)
{
    if (count)
        *count = s->ntypes;
    return s->pub_types;
}

const dg_sim_faction *dg_sim_scenario_factions(const dg_sim_scenario *s, size_t *count)
{
    if (count)
        *count = s->nfactions;
    return s->factions;
}

const dg_sim_roster_entry *dg_sim_scenario_roster(const dg_sim_scenario *s, size_t *count)
{
    if (count)
        *count = s->nroster;
    return s->roster;
}

const dg_sim_object *dg_sim_scenario_objects(const dg_sim_scenario *s, size_t *count)
{
    if (count)
        *count = s->nobjects;
    return s->objects;
}

void dg_sim_scenario_local_frame(const dg_sim_scenario *s, double origin[3], double east[3], double north[3],
                                 double up[3])
{
    dgv_copy(origin, s->frame_origin);
    dgv_copy(east, s->frame_east);
    dgv_copy(north, s->frame_north);
    dgv_copy(up, s->frame_up);
}

void dg_sim_local_pose(const dg_sim_scenario *s, const dg_sim_entity *e, double pos_enu[3], double rot_enu[4])
{
    double rel[3] = {e->pos[0] - s->frame_origin[0], e->pos[1] - s->frame_origin[1], e->pos[2] - s->frame_origin[2]};
    pos_enu[0] = dgv_dot(rel, s->frame_east);
    pos_enu[1] = dgv_dot(rel, s->frame_north);
    pos_enu[2] = dgv_dot(rel, s->frame_up);
    double qf[4], conj[4];
    dg_sim__q_from_basis(s->frame_east, s->frame_north, s->frame_up, qf); /* local axes -> world */
    conj[0] = qf[0], conj[1] = -qf[1], conj[2] = -qf[2], conj[3] = -qf[3];
    dg_sim__q_mul(conj, e->rot, rot_enu);
    if (rot_enu[0] < 0.0)
        for (int i = 0; i < 4; i++)
            rot_enu[i] = -rot_enu[i];
}

void dg_sim__enu_at(double lat_deg, double lon_deg, double e[3], double n[3], double u[3])
{
    double la = lat_deg * DG_SIM_DEG, lo = lon_deg * DG_SIM_DEG;
    double sla = dg_sim__sin(la), cla = dg_sim__cos(la), slo = dg_sim__sin(lo), clo = dg_sim__cos(lo);
    dgv_set(u, cla * clo, cla * slo, sla);
    dgv_set(e, -slo, clo, 0.0);
    dgv_set(n, -sla * clo, -sla * slo, cla);
}

void dg_sim__geo_to_world(double radius, double lat_deg, double lon_deg, double alt, double out[3])
{
    double e[3], n[3], u[3];
    dg_sim__enu_at(lat_deg, lon_deg, e, n, u);
    double r = radius + alt;
    dgv_set(out, u[0] * r, u[1] * r, u[2] * r);
}
