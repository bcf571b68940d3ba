/* reports/report_emit.c — the report room's typesetting desk: an in-memory sink, UTF-8 decoding,
 * one escaper per target language, exact number formatting and the shared wording of a check.
 * Strings in a report come from scenario files and engines, so they are treated as hostile:
 * ill-formed UTF-8 becomes U+FFFD, control characters never reach a terminal, XML or JSON raw. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#include "cursor.h"
#include "json.h"

/* ---- sink ------------------------------------------------------------------------------------- */

void dg_rep__sink_init(dg_rsink *s)
{
    memset(s, 0, sizeof *s);
}

void dg_rep__sink_free(dg_rsink *s)
{
    free(s->p);
    memset(s, 0, sizeof *s);
}

static bool rsink__reserve(dg_rsink *s, size_t extra)
{
    if (s->nomem)
        return false;
    if (extra < s->cap - s->len) /* strictly: the NUL after the bytes needs room too */
        return true;
    size_t want = s->len + extra + 1;
    if (want < s->len || !dg_grow((void **)&s->p, &s->cap, want, 1)) {
        s->nomem = true;
        return false;
    }
    return true;
}

void dg_rep__sink_put(dg_rsink *s, const char *bytes, size_t n)
{
    if (n == 0 || !rsink__reserve(s, n))
        return;
    memcpy(s->p + s->len, bytes, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void dg_rep__sink_puts(dg_rsink *s, const char *str)
{
    if (str)
        dg_rep__sink_put(s, str, strlen(str));
}

void dg_rep__sink_printf(dg_rsink *s, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        dg_rep__sink_put(s, small, (size_t)n);
        return;
    }
    if (!rsink__reserve(s, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)n;
}

void dg_rep__sink_truncate(dg_rsink *s, size_t len)
{
    if (len < s->len) {
        s->len = len;
        s->p[len] = '\0';
    }
}

/* ---- UTF-8 ------------------------------------------------------------------------------------ */

size_t dg_rep__utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t k = dg_utf8_decode(s, n, cp);
    if (k == 0) {
        *cp = 0xFFFD; /* one replacement per ill-formed byte */
        return 1;
    }
    return k;
}

void dg_rep__put_utf8(dg_rsink *s, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    dg_rep__sink_put(s, b, n);
}

/* Walks str code point by code point, handing each (already repaired) to emit. */
#define DG_REP_FOREACH_CP(str, cp, body)                                                  \
    do {                                                                                  \
        const unsigned char *p_ = (const unsigned char *)(str);                           \
        size_t n_ = strlen((const char *)p_), i_ = 0;                                     \
        while (i_ < n_) {                                                                 \
            uint32_t cp;                                                                  \
            i_ += dg_rep__utf8_next(p_ + i_, n_ - i_, &cp);                               \
            body                                                                          \
        }                                                                                 \
    } while (0)

/* ---- escapers --------------------------------------------------------------------------------- */

void dg_rep__json_str(dg_rsink *s, const char *str)
{
    if (!str) {
        dg_rep__sink_puts(s, "null");
        return;
    }
    dg_rep__sink_put(s, "\"", 1);
    char esc[8];
    DG_REP_FOREACH_CP(str, cp, {
        const char *e = dg_json_escape_cp(cp, esc);
        if (e)
            dg_rep__sink_puts(s, e);
        else
            dg_rep__put_utf8(s, cp);
    });
    dg_rep__sink_put(s, "\"", 1);
}

static bool rep__xml_char_ok(uint32_t cp)
{
    /* XML 1.0 Char production, minus C1 controls and DEL (legal XML but trouble in HTML). */
    if (cp == 0x9 || cp == 0xA || cp == 0xD)
        return true;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return false;
    if (cp == 0xFFFE || cp == 0xFFFF)
        return false;
    return true;
}

static void rep__xml(dg_rsink *s, const char *str, bool attr)
{
    if (!str)
        return;
    DG_REP_FOREACH_CP(str, cp, {
        if (!attr && (cp == '\n' || cp == '\t')) {
            dg_rep__sink_put(s, cp == '\n' ? "\n" : "\t", 1);
            continue;
        }
        switch (cp) {
        case '&': dg_rep__sink_puts(s, "&amp;"); break;
        case '<': dg_rep__sink_puts(s, "&lt;"); break;
        case '>': dg_rep__sink_puts(s, "&gt;"); break;
        case '"': dg_rep__sink_puts(s, "&quot;"); break;
        case '\'': dg_rep__sink_puts(s, "&#39;"); break;
        /* Attribute values normalise raw newlines/tabs to spaces: keep them as references. */
        case '\n': dg_rep__sink_puts(s, "&#10;"); break;
        case '\r': dg_rep__sink_puts(s, "&#13;"); break;
        case '\t': dg_rep__sink_puts(s, "&#9;"); break;
        default: dg_rep__put_utf8(s, rep__xml_char_ok(cp) ? cp : 0xFFFD);
        }
    });
}

void dg_rep__xml_text(dg_rsink *s, const char *str)
{
    rep__xml(s, str, true);
}

void dg_rep__xml_content(dg_rsink *s, const char *str)
{
    rep__xml(s, str, false);
}

void dg_rep__md_text(dg_rsink *s, const char *str)
{
    if (!str)
        return;
    DG_REP_FOREACH_CP(str, cp, {
        if (cp == '&')
            dg_rep__sink_puts(s, "&amp;");
        else if (cp == '<')
            dg_rep__sink_puts(s, "&lt;");
        else if (cp == '>')
            dg_rep__sink_puts(s, "&gt;");
        else if (cp == '@') /* no accidental @mentions in a PR comment */
            dg_rep__sink_puts(s, "&#64;");
        else if (cp < 0x80 && strchr("\\`*_[]|~$#!", (int)cp) && cp != 0)
            dg_rep__sink_printf(s, "\\%c", (char)cp);
        else if (cp == '\n' || cp == '\r' || cp == '\t')
            dg_rep__sink_put(s, " ", 1);
        else
            dg_rep__put_utf8(s, rep__xml_char_ok(cp) ? cp : 0xFFFD);
    });
}

static bool rep__term_ok(uint32_t cp)
{
    return !(cp < 0x20 || (cp >= 0x7F && cp <= 0x9F));
}

void dg_rep__term_text(dg_rsink *s, const char *str)
{
    if (!str)
        return;
    /* An engine-supplied name must never be able to move the cursor or recolour the terminal. */
    DG_REP_FOREACH_CP(str, cp, { dg_rep__put_utf8(s, rep__term_ok(cp) ? cp : '?'); });
}

/* Terminal columns of one code point: 0 for combining marks, 2 for East Asian wide/fullwidth
 * characters and emoji, 1 otherwise (a small table, enough to keep names from shifting columns;
 * control characters print as '?', one column). */
static unsigned rep__cp_width(uint32_t cp)
{
    static const uint32_t zero[][2] = {{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
                                       {0x064B, 0x065F}, {0x200B, 0x200F}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
                                       {0xFE20, 0xFE2F}};
    static const uint32_t wide[][2] = {{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF},
                                       {0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
                                       {0xFE30, 0xFE4F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
                                       {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD}};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
        if (cp >= zero[i][0] && cp <= zero[i][1])
            return 0;
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 2;
    return 1;
}

size_t dg_rep__term_width(const char *str)
{
    size_t w = 0;
    if (!str)
        return 0;
    DG_REP_FOREACH_CP(str, cp, { w += rep__cp_width(cp); });
    return w;
}

/* ---- numbers ---------------------------------------------------------------------------------- */

void dg_rep__double_buf(char *buf, size_t cap, double v, bool json)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "%s", json ? "null" : "n/a");
        return;
    }
    if (json) {
        /* the shortest of 15..17 significant digits that reads back as the same double */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, cap, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    } else {
        /* For people: plain decimals, exact when up to 10 places do it (every value derived from
         * quanta is a multiple of a power of two), else 6 significant digits (an angle from acos
         * has 17 and nobody wants them). No exponent inside the everyday range. */
        double m = fabs(v);
        bool exact = false;
        if (m == 0 || (m >= 1e-6 && m < 1e12))
            for (int d = 0; d <= 10 && !exact; d++) {
                snprintf(buf, cap, "%.*f", d, v);
                exact = strtod(buf, NULL) == v;
            }
        if (!exact)
            snprintf(buf, cap, "%.6g", v);
    }
    /* A locale with a decimal comma must not leak into JSON or a table. */
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
}

void dg_rep__double(dg_rsink *s, double v, bool json)
{
    char buf[40];
    dg_rep__double_buf(buf, sizeof buf, v, json);
    dg_rep__sink_puts(s, buf);
}

void dg_rep__quat_buf(char *buf, size_t cap, const double q[4])
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && n < cap; i++) {
        int k = snprintf(buf + n, cap - n, "%s%.6f", i ? " " : "", isfinite(q[i]) ? q[i] : 0.0);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
}

bool dg_rep__flag_bits(char *buf, size_t cap, const dg_report_field *f)
{
    if (!f->has_quanta || strcmp(f->name, "flags") != 0 || f->a_q < 0 || f->b_q < 0 || f->a_q > 0xFFFFFFFFll ||
        f->b_q > 0xFFFFFFFFll)
        return false;
    size_t n = 0;
    buf[0] = '\0';
    for (int bit = 0; bit < 32 && n < cap; bit++) {
        uint64_t m = 1ull << bit, a = (uint64_t)f->a_q, b = (uint64_t)f->b_q;
        if ((a & m) == (b & m))
            continue;
        int k = snprintf(buf + n, cap - n, "%s%sbit %d", n ? ", " : "", (b & m) ? "+" : "-", bit);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    if (n >= cap) /* cut: end on a whole entry */
        buf[cap - 1] = '\0';
    return true;
}

/* ---- shared wording --------------------------------------------------------------------------- */

const char *dg_rep__str_or(const char *s, const char *fallback)
{
    return s && *s ? s : fallback;
}

static const dg_report_tick *rep__first_detail(const dg_report_check *c)
{
    if (c->n_ticks > 0 && c->ticks[0]->tick == c->first_tick)
        return c->ticks[0];
    return NULL;
}

void dg_rep__entity_list(dg_rsink *s, const dg_report_check *c, uint32_t max_ids)
{
    const dg_report_tick *t = rep__first_detail(c);
    if (!t || t->n_entities == 0)
        return;
    dg_rep__sink_puts(s, t->n_entities + t->entities_cut == 1 ? "entity " : "entities ");
    uint32_t shown = t->n_entities < max_ids ? t->n_entities : max_ids;
    for (uint32_t i = 0; i < shown; i++)
        dg_rep__sink_printf(s, "%s%u", i ? ", " : "", (unsigned)t->entities[i].id);
    uint64_t more = (uint64_t)(t->n_entities - shown) + t->entities_cut;
    if (more)
        dg_rep__sink_printf(s, " and %llu more", (unsigned long long)more);
    dg_rep__sink_puts(s, t->n_entities + t->entities_cut == 1 ? " differs" : " differ");
}

static void rep__counts_phrase(dg_rsink *s, const dg_report_tick *t)
{
    const char *sep = "";
    if (t->changed) {
        dg_rep__sink_printf(s, "%u %s changed", (unsigned)t->changed, t->changed == 1 ? "entity" : "entities");
        sep = ", ";
    }
    if (t->added) {
        dg_rep__sink_printf(s, "%s%u added", sep, (unsigned)t->added);
        sep = ", ";
    }
    if (t->lost) {
        dg_rep__sink_printf(s, "%s%u lost", sep, (unsigned)t->lost);
        sep = ", ";
    }
    uint64_t ev = (uint64_t)t->n_event_diffs + t->event_diffs_cut;
    if (t->events_differ && ev)
        dg_rep__sink_printf(s, "%s%llu event%s differ%s", sep, (unsigned long long)ev, ev == 1 ? "" : "s",
                        ev == 1 ? "s" : "");
    else if (t->events_differ) /* hashes only: no event lists to align */
        dg_rep__sink_printf(s, "%sevents differ (A %u, B %u)", sep, (unsigned)t->events_a, (unsigned)t->events_b);
    else if (!*sep)
        dg_rep__sink_puts(s, "state differs");
}

void dg_rep__check_headline(dg_rsink *s, const dg_report_check *c, void (*esc)(dg_rsink *, const char *))
{
    if (c->status == DG_REPORT_ERROR) {
        dg_rep__sink_puts(s, "could not test: ");
        esc(s, dg_rep__str_or(c->message, "no reason given"));
        return;
    }
    if (c->first_tick != DG_REPORT_TICK_NONE) {
        dg_rep__sink_printf(s, "first divergent tick %llu: ", (unsigned long long)c->first_tick);
        const dg_report_tick *t = rep__first_detail(c);
        if (t)
            rep__counts_phrase(s, t);
        else
            dg_rep__sink_puts(s, "state differs");
        if (c->divergent_ticks > 1)
            dg_rep__sink_printf(s, " (%llu divergent ticks)", (unsigned long long)c->divergent_ticks);
    } else if (c->status == DG_REPORT_FAIL) {
        esc(s, dg_rep__str_or(c->message, "failed"));
        return;
    } else {
        esc(s, dg_rep__str_or(c->message, "identical"));
    }
    if (c->sub_quantum && c->first_raw_tick != DG_REPORT_TICK_NONE)
        dg_rep__sink_printf(s, "; sub-quantum: raw float hashes differed from tick %llu while quantized state equal",
                        (unsigned long long)c->first_raw_tick);
}

/* ---- events ----------------------------------------------------------------------------------- */

static void rep__event_kind(dg_rsink *s, uint8_t kind)
{
    const char *k = dg_report_event_kind_name(kind);
    if (k)
        dg_rep__sink_puts(s, k);
    else
        dg_rep__sink_printf(s, "kind %u", (unsigned)kind);
}

static uint32_t rep__event_field(const dg_report_event *e, char f)
{
    return f == 'a' ? e->a : f == 'b' ? e->b : f == 'c' ? e->c : e->d;
}

/* "weapon (c)", or "c" for a field the kind does not use. */
static void rep__event_field_label(dg_rsink *s, uint8_t kind, char f)
{
    const char *n = dg_report_event_field_name(kind, f);
    if (n)
        dg_rep__sink_printf(s, "%s (%c)", n, f);
    else
        dg_rep__sink_printf(s, "%c", f);
}

static void rep__event_text(dg_rsink *s, const dg_report_event *e, void (*esc)(dg_rsink *, const char *))
{
    dg_rep__sink_puts(s, "\"");
    esc(s, e->text);
    dg_rep__sink_printf(s, "%s\" (%lu byte%s)", strlen(e->text) < e->text_len ? "…" : "", (unsigned long)e->text_len,
                    e->text_len == 1 ? "" : "s");
}

/* "kill {killer (a) 5, victim (b) 7, weapon (c) 3}": the fields the kind uses, others when set. */
static void rep__event_whole(dg_rsink *s, const dg_report_event *e, void (*esc)(dg_rsink *, const char *))
{
    rep__event_kind(s, e->kind);
    dg_rep__sink_puts(s, " {");
    const char *sep = "";
    for (char f = 'a'; f <= 'd'; f++) {
        uint32_t v = rep__event_field(e, f);
        if (!dg_report_event_field_name(e->kind, f) && v == 0)
            continue;
        dg_rep__sink_puts(s, sep);
        rep__event_field_label(s, e->kind, f);
        dg_rep__sink_printf(s, " %lu", (unsigned long)v);
        sep = ", ";
    }
    if (e->text_len || e->kind == DG_EV_CHAT || e->kind == DG_EV_ADMIN) {
        dg_rep__sink_printf(s, "%stext ", sep);
        rep__event_text(s, e, esc);
    }
    dg_rep__sink_puts(s, "}");
}

void dg_rep__event_diff_line(dg_rsink *s, const dg_report_event_diff *d, const dg_report_tick *t,
                             void (*esc)(dg_rsink *, const char *))
{
    dg_rep__sink_printf(s, "event %lu: ", (unsigned long)d->index);
    if (!d->in_a || !d->in_b) {
        dg_rep__sink_puts(s, d->in_a ? "A only: " : "B only: ");
        rep__event_whole(s, d->in_a ? &d->a : &d->b, esc);
        dg_rep__sink_printf(s, " (A has %lu event%s at this tick, B %lu)", (unsigned long)t->events_a,
                        t->events_a == 1 ? "" : "s", (unsigned long)t->events_b);
        return;
    }
    if (d->a.kind != d->b.kind) {
        dg_rep__sink_puts(s, "A ");
        rep__event_whole(s, &d->a, esc);
        dg_rep__sink_puts(s, ", B ");
        rep__event_whole(s, &d->b, esc);
        return;
    }
    rep__event_kind(s, d->a.kind);
    dg_rep__sink_puts(s, ": ");
    const char *sep = "";
    for (char f = 'a'; f <= 'd'; f++) {
        uint32_t va = rep__event_field(&d->a, f), vb = rep__event_field(&d->b, f);
        if (va == vb)
            continue;
        dg_rep__sink_puts(s, sep);
        rep__event_field_label(s, d->a.kind, f);
        dg_rep__sink_printf(s, " A %lu, B %lu", (unsigned long)va, (unsigned long)vb);
        sep = "; ";
    }
    if (d->text_diff_at != UINT32_MAX) {
        dg_rep__sink_printf(s, "%stext A ", sep);
        rep__event_text(s, &d->a, esc);
        dg_rep__sink_puts(s, ", B ");
        rep__event_text(s, &d->b, esc);
        dg_rep__sink_printf(s, ", first difference at byte %lu", (unsigned long)d->text_diff_at);
    }
}

void dg_rep__value_line(dg_rsink *s, const dg_report_value *v, void (*esc)(dg_rsink *, const char *))
{
    esc(s, v->field);
    dg_rep__sink_puts(s, ": A ");
    esc(s, v->a ? v->a : "(none)");
    dg_rep__sink_puts(s, ", B ");
    esc(s, v->b ? v->b : "(none)");
}

void dg_rep__ranges_line(dg_rsink *s, const dg_report_check *c, uint32_t max_shown)
{
    dg_rep__sink_printf(s, "divergent ticks: %llu in %u range%s%s", (unsigned long long)c->divergent_ticks,
                    (unsigned)c->n_ranges, c->n_ranges == 1 ? "" : "s", c->n_ranges ? ": " : "");
    uint32_t shown = c->n_ranges < max_shown ? c->n_ranges : max_shown;
    for (uint32_t i = 0; i < shown; i++) {
        const dg_report_range *g = &c->ranges[i];
        dg_rep__sink_printf(s, "%s%llu", i ? ", " : "", (unsigned long long)g->first);
        if (g->first != g->last)
            dg_rep__sink_printf(s, "..%llu", (unsigned long long)g->last);
    }
    if (c->n_ranges > shown)
        dg_rep__sink_printf(s, ", ... %u more", (unsigned)(c->n_ranges - shown));
    if (c->ranges_coalesced)
        dg_rep__sink_puts(s, " (range cap reached: the last range holds gaps)");
}

void dg_rep__seconds(char *buf, size_t cap, double v)
{
    if (!isfinite(v) || v < 0) {
        snprintf(buf, cap, "n/a");
        return;
    }
    snprintf(buf, cap, v < 10 ? "%.2f s" : "%.1f s", v);
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
}

void dg_rep__tally_line(dg_rsink *s, const dg_report *r)
{
    dg_rep__tally t;
    dg_rep__count(r, &t);
    char d[48];
    dg_rep__seconds(d, sizeof d, r->duration_s);
    char warned[40] = ""; /* only when there is one: reports without a WARN read as before */
    if (t.sc_warn)
        snprintf(warned, sizeof warned, ", %u warned", (unsigned)t.sc_warn);
    dg_rep__sink_printf(s, "%u scenario%s (%u passed%s, %u failed, %u could not be tested), %u check%s, %s",
                    (unsigned)t.scenarios, t.scenarios == 1 ? "" : "s", (unsigned)t.sc_pass, warned,
                    (unsigned)t.sc_fail, (unsigned)t.sc_error, (unsigned)t.checks, t.checks == 1 ? "" : "s", d);
}

void dg_rep__count(const dg_report *r, dg_rep__tally *t)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        const dg_report_scenario *sc = r->scenarios[i];
        t->scenarios++;
        switch (dg_report_scenario_status(sc)) {
        case DG_REPORT_PASS: t->sc_pass++; break;
        case DG_REPORT_WARN: t->sc_warn++; break;
        case DG_REPORT_FAIL: t->sc_fail++; break;
        case DG_REPORT_ERROR: t->sc_error++; break;
        }
        for (uint32_t j = 0; j < sc->n_checks; j++) {
            t->checks++;
            switch (sc->checks[j]->status) {
            case DG_REPORT_PASS: t->ck_pass++; break;
            case DG_REPORT_WARN: t->ck_warn++; break;
            case DG_REPORT_FAIL: t->ck_fail++; break;
            case DG_REPORT_ERROR:
            default: t->ck_error++; break;
            }
        }
    }
}
