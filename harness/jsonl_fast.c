/* harness/jsonl_fast.c — the common JSON Lines tick line ({"tick":N,"entities":[{"id":..,"pos":[..],
 * ...},...]}, docs/STATES-STREAM.md) parsed without building a jansson tree, to exactly the values
 * jansson and source_states.c's checks give. Anything else — events, unknown or repeated members,
 * escapes, a value out of range, a number jansson refuses or one past the fast integer range, any
 * syntax error — is declined, and the caller parses the line with jansson, which names the error. */
#include "jsonl_fast.h"

#include "numparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool dg_harness__jsonl_fast_off;

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* JSON whitespace, as jansson's lexer skips it. */
static inline const char *ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

typedef struct jf_num {
    bool is_int;  /* jansson would make it a JSON integer (no fraction, no exponent) */
    int64_t i;    /* its value when is_int */
    double d;     /* json_number_value: the integer converted, or strtod's value of the token */
} jf_num;

/* A number token in jansson's grammar (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) at s: its end,
 * or NULL when it is not one, is an integer of more than 18 digits (jansson's range ends near 19),
 * or a real jansson refuses (it overflows). */
static const char *jf_number(const char *s, jf_num *n)
{
    const char *b = s;
    bool neg = *s == '-';
    s += neg;
    if (*s == '0') {
        if (is_digit(*++s))
            return NULL;
    } else if (is_digit(*s)) {
        while (is_digit(*s))
            s++;
    } else {
        return NULL;
    }
    bool real = false;
    if (*s == '.') {
        if (!is_digit(*++s))
            return NULL;
        while (is_digit(*s))
            s++;
        real = true;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        if (!is_digit(*s))
            return NULL;
        while (is_digit(*s))
            s++;
        real = true;
    }
    size_t len = (size_t)(s - b);
    n->is_int = !real;
    if (!real) {
        if (len - neg > 18)
            return NULL;
        int64_t v = 0;
        for (const char *q = b + neg; q < s; q++)
            v = v * 10 + (*q - '0');
        n->i = neg ? -v : v;
        n->d = (double)n->i;
        return s;
    }
    if (dg_harness__decimal_fast(b, len, &n->d))
        return s;
    bool ok;
    int erange;
    n->d = dg_harness__strtod_n(b, len, &ok, &erange);
    if (!ok || (erange && isinf(n->d))) /* jansson: "real number overflow" */
        return NULL;
    return s;
}

/* A member name of plain lowercase letters and '_': its index in names, or -1 (then the caller
 * declines: an unknown member, or one with escapes or other bytes). *end after the closing quote. */
static int jf_key(const char *s, const char *const *names, const char **end)
{
    if (*s != '"')
        return -1;
    const char *b = ++s;
    while ((*s >= 'a' && *s <= 'z') || *s == '_')
        s++;
    if (*s != '"')
        return -1;
    size_t len = (size_t)(s - b);
    *end = s + 1;
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == len && memcmp(names[i], b, len) == 0)
            return i;
    return -1;
}

/* "key" ws ':' ws — the value's start, or NULL. */
static const char *jf_member(const char *s, const char *const *names, int *k)
{
    const char *e;
    if ((*k = jf_key(s, names, &e)) < 0)
        return NULL;
    e = ws(e);
    return *e == ':' ? ws(e + 1) : NULL;
}

/* After a value: ws, then ',' (*more) or the closer. The next token's start, or NULL. */
static const char *jf_next(const char *s, char closer, bool *more)
{
    s = ws(s);
    *more = *s == ',';
    if (*s != ',' && *s != closer)
        return NULL;
    return ws(s + 1);
}

/* An array of exactly n numbers. */
static const char *jf_num_array(const char *s, double *out, size_t n)
{
    if (*s != '[')
        return NULL;
    s = ws(s + 1);
    for (size_t i = 0; i < n; i++) {
        jf_num v;
        bool more;
        if (!(s = jf_number(s, &v)) || !(s = jf_next(s, ']', &more)) || more != (i + 1 < n))
            return NULL;
        out[i] = v.d;
    }
    return s;
}

/* An integer member in lo..hi. */
static const char *jf_uint(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    jf_num v;
    if (!(s = jf_number(s, &v)) || !v.is_int || v.i < lo || v.i > hi)
        return NULL;
    *out = v.i;
    return s;
}

enum { EM_ID, EM_TYPE, EM_FACTION, EM_POS, EM_VEL, EM_ROT, EM_HEALTH, EM_FLAGS };
static const char *const k_entity[] = {"id", "type", "faction", "pos", "vel", "rot", "health", "flags", NULL};

/* One entity object, with source_states.c's defaults (rot 1,0,0,0, health 1) and its rules. */
static const char *jf_entity(const char *s, dg_entity_in *e)
{
    if (*s != '{')
        return NULL;
    s = ws(s + 1);
    memset(e, 0, sizeof *e);
    e->rot[0] = 1.0;
    e->health = 1.0;
    unsigned seen = 0;
    for (bool more = true; more;) {
        int k;
        int64_t u = 0;
        jf_num v = {0};
        if (!(s = jf_member(s, k_entity, &k)) || (seen & 1u << k))
            return NULL;
        seen |= 1u << k;
        switch (k) {
        case EM_ID: s = jf_uint(s, 1, UINT32_MAX, &u), e->id = (uint32_t)u; break;
        case EM_TYPE: s = jf_uint(s, 0, 65535, &u), e->type_index = (uint16_t)u; break;
        case EM_FACTION: s = jf_uint(s, 0, 65535, &u), e->faction_index = (uint16_t)u; break;
        case EM_FLAGS: s = jf_uint(s, 0, 65535, &u), e->flags = (uint16_t)u; break;
        case EM_POS: s = jf_num_array(s, e->pos, 3); break;
        case EM_VEL: s = jf_num_array(s, e->vel, 3); break;
        case EM_ROT: s = jf_num_array(s, e->rot, 4); break;
        default: s = jf_number(s, &v), e->health = v.d; break;
        }
        if (!s || !(s = jf_next(s, '}', &more)))
            return NULL;
    }
    if (!(seen & 1u << EM_ID) || !(seen & 1u << EM_POS)) /* required: the slow path names which */
        return NULL;
    return s;
}

static bool jf_push(harness__jsonl_tick *t, const dg_entity_in *e)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        dg_entity_in *q = realloc(t->ents, nc * sizeof *q);
        if (!q)
            return false;
        t->ents = q;
        t->cap = nc;
    }
    t->ents[t->n++] = *e;
    return true;
}

/* "entities": [ entity, ... ] */
static const char *jf_entities(const char *s, harness__jsonl_tick *t)
{
    if (*s != '[')
        return NULL;
    s = ws(s + 1);
    if (*s == ']')
        return s + 1;
    for (bool more = true; more;) {
        dg_entity_in e;
        if (!(s = jf_entity(s, &e)) || !jf_push(t, &e) || !(s = jf_next(s, ']', &more)))
            return NULL;
    }
    return s;
}

static const char *const k_tick[] = {"tick", "entities", NULL};

bool dg_harness__jsonl_fast_tick(const char *line, harness__jsonl_tick *t)
{
    if (dg_harness__jsonl_fast_off)
        return false;
    t->n = 0;
    const char *s = ws(line);
    if (*s != '{')
        return false;
    s = ws(s + 1);
    unsigned seen = 0;
    for (bool more = true; more;) {
        int k;
        int64_t u = 0;
        if (!(s = jf_member(s, k_tick, &k)) || (seen & 1u << k))
            return false;
        seen |= 1u << k;
        if (k == 0)
            s = jf_uint(s, 0, INT64_MAX, &u), t->tick = (uint64_t)u;
        else
            s = jf_entities(s, t);
        if (!s || !(s = jf_next(s, '}', &more)))
            return false;
    }
    return seen == 3 && *s == 0; /* both members, nothing after the object but whitespace */
}

void dg_harness__jsonl_tick_free(harness__jsonl_tick *t)
{
    free(t->ents);
    *t = (harness__jsonl_tick){0};
}
