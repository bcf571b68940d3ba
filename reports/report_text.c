/* reports/report_text.c — the report room's terminal voice: one summary line per scenario, then
 * for each failing check the first divergent tick as an aligned entity/field table.
 * ANSI colour only when the caller asks for it; names never carry control characters through. */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define TXT_COLS 8
#define TXT_CELL 160
#define TXT_DEFAULT_ROWS 40u
#define TXT_RANGES_SHOWN 8u
#define TXT_DEFAULT_SECTIONS 10u

typedef struct txt {
    dg_rsink *s;
    bool colour;
} txt;

static void txt__sgr(txt *t, const char *code)
{
    if (t->colour)
        dg_rep__sink_printf(t->s, "\x1b[%sm", code);
}

static void txt__status(txt *t, dg_report_status st)
{
    static const char *const word[4] = {"PASS", "FAIL", "ERROR", "WARN"}; /* by enum value */
    static const char *const colour[4] = {"32", "1;31", "1;33", "33"};
    if ((unsigned)st > DG_REPORT_WARN)
        st = DG_REPORT_ERROR;
    txt__sgr(t, colour[st]);
    dg_rep__sink_puts(t->s, word[st]);
    txt__sgr(t, "0");
}

static void txt__summary_header(txt *t, const dg_report *r)
{
    txt__sgr(t, "1");
    dg_rep__sink_puts(t->s, "detgate ");
    dg_rep__term_text(t->s, dg_rep__str_or(r->command, "report"));
    if (r->tool_version) {
        dg_rep__sink_puts(t->s, " ");
        dg_rep__term_text(t->s, r->tool_version);
    }
    txt__sgr(t, "0");
    dg_rep__sink_puts(t->s, ": ");
    txt__status(t, dg_report_overall_status(r));
    dg_rep__sink_puts(t->s, " — ");
    dg_rep__tally_line(t->s, r);
    dg_rep__sink_printf(t->s, "%s\n", r->nomem ? " (INCOMPLETE: out of memory while building)" : "");
    if (r->note) {
        dg_rep__term_text(t->s, r->note);
        dg_rep__sink_puts(t->s, "\n");
    }
}

static bool txt__noteworthy(const dg_report_check *c)
{
    return c->status != DG_REPORT_PASS || c->sub_quantum;
}

static void txt__check_line(txt *t, const dg_report_check *c)
{
    dg_rep__term_text(t->s, c->name);
    dg_rep__sink_puts(t->s, ": ");
    dg_rep__check_headline(t->s, c, dg_rep__term_text);
}

static void txt__scenario_line(txt *t, const dg_report_scenario *sc)
{
    dg_report_status st = dg_report_scenario_status(sc);
    txt__status(t, st);
    dg_rep__sink_puts(t->s, " ");
    dg_rep__term_text(t->s, sc->name);
    dg_rep__sink_puts(t->s, " (");
    dg_rep__term_text(t->s, dg_rep__str_or(sc->format, "?"));
    dg_rep__sink_printf(t->s, ", %llu tick%s, %llu entity-tick%s)", (unsigned long long)sc->ticks,
                    dg_report_plural_s(sc->ticks), (unsigned long long)sc->entity_ticks,
                    dg_report_plural_s(sc->entity_ticks));
    bool inline_done = false;
    for (uint32_t i = 0; i < sc->n_checks; i++) {
        const dg_report_check *c = sc->checks[i];
        if (!txt__noteworthy(c))
            continue;
        if (!inline_done && c->status == st) {
            dg_rep__sink_puts(t->s, " ");
            txt__check_line(t, c);
            inline_done = true;
            continue;
        }
        dg_rep__sink_puts(t->s, "\n  ");
        txt__status(t, c->status);
        dg_rep__sink_puts(t->s, " ");
        txt__check_line(t, c);
    }
    dg_rep__sink_puts(t->s, "\n");
}

/* ---- the first divergent tick as a table ------------------------------------------------------ */

typedef struct txt_row {
    char cell[TXT_COLS][TXT_CELL];
} txt_row;

static void txt__cell(char *dst, const char *escaped)
{
    size_t n = strlen(escaped);
    if (n >= TXT_CELL)
        n = TXT_CELL - 1;
    while (n > 0 && ((unsigned char)escaped[n] & 0xC0) == 0x80) /* never split a character */
        n--;
    memcpy(dst, escaped, n);
    dst[n] = '\0';
}

static void txt__cellf_entity(char *dst, const dg_report_entity *e)
{
    dg_rsink tmp;
    dg_rep__sink_init(&tmp);
    dg_rep__sink_printf(&tmp, "%u", (unsigned)e->id);
    if (e->name[0]) {
        dg_rep__sink_puts(&tmp, " ");
        dg_rep__term_text(&tmp, e->name);
    }
    txt__cell(dst, tmp.p ? tmp.p : "");
    dg_rep__sink_free(&tmp);
}

/* A harness-supplied string (field name, unit) made terminal-safe into a cell. */
static void txt__cell_term(char *dst, const char *str)
{
    dg_rsink tmp;
    dg_rep__sink_init(&tmp);
    dg_rep__term_text(&tmp, str);
    txt__cell(dst, tmp.p ? tmp.p : "");
    dg_rep__sink_free(&tmp);
}

static void txt__fill_row(txt_row *row, const dg_report_entity *e, const dg_report_field *f)
{
    memset(row, 0, sizeof *row);
    txt__cellf_entity(row->cell[0], e);
    snprintf(row->cell[1], TXT_CELL, "%s", dg_report_entity_kind_name(e->kind));
    if (!f) {
        snprintf(row->cell[2], TXT_CELL, "-");
        return;
    }
    txt__cell_term(row->cell[2], f->name);
    char bits[TXT_CELL];
    bool flags = dg_rep__flag_bits(bits, sizeof bits, f);
    if (f->has_text) { /* a declared field, as its schema shows it */
        txt__cell_term(row->cell[3], f->a_text);
        txt__cell_term(row->cell[4], f->b_text);
    } else if (f->has_quats) { /* both orientations, w x y z */
        dg_rep__quat_buf(row->cell[3], TXT_CELL, f->quat_a);
        dg_rep__quat_buf(row->cell[4], TXT_CELL, f->quat_b);
    } else if (flags) {
        snprintf(row->cell[3], TXT_CELL, "0x%04llX", (unsigned long long)f->a_q);
        snprintf(row->cell[4], TXT_CELL, "0x%04llX", (unsigned long long)f->b_q);
    } else if (f->has_values) {
        dg_rep__double_buf(row->cell[3], TXT_CELL, f->a, false);
        dg_rep__double_buf(row->cell[4], TXT_CELL, f->b, false);
    }
    char d[40];
    dg_rep__double_buf(d, sizeof d, f->delta, false);
    if (flags)
        snprintf(row->cell[5], TXT_CELL, "%s", bits);
    else if (f->has_text && !f->has_values)
        snprintf(row->cell[5], TXT_CELL, "-");
    else
        snprintf(row->cell[5], TXT_CELL, "%s%s", f->delta > 0 ? "+" : "", d);
    txt__cell_term(row->cell[6], f->unit);
    if (f->has_quanta)
        snprintf(row->cell[7], TXT_CELL, "%lld -> %lld (%+lld q)", (long long)f->a_q, (long long)f->b_q,
                 (long long)f->delta_q);
}

/* Rows of the first detailed tick, at most max; *total gets how many rows there would be. */
static uint32_t txt__collect_rows(const dg_report_tick *tk, txt_row *rows, uint32_t max, uint64_t *total)
{
    uint32_t n = 0;
    *total = 0;
    for (uint32_t i = 0; i < tk->n_entities; i++) {
        const dg_report_entity *e = &tk->entities[i];
        uint32_t nf = e->n_fields ? e->n_fields : 1;
        for (uint32_t j = 0; j < nf; j++) {
            (*total)++;
            if (n < max)
                txt__fill_row(&rows[n++], e, e->n_fields ? &e->fields[j] : NULL);
        }
    }
    return n;
}

static void txt__table(txt *t, const txt_row *rows, uint32_t n)
{
    static const char *const head[TXT_COLS] = {"entity", "kind", "field", "A", "B", "delta", "unit", "quanta A -> B"};
    size_t w[TXT_COLS];
    for (int c = 0; c < TXT_COLS; c++) {
        w[c] = strlen(head[c]);
        for (uint32_t i = 0; i < n; i++) {
            size_t cw = dg_rep__term_width(rows[i].cell[c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    dg_rep__sink_puts(t->s, "   ");
    txt__sgr(t, "1");
    for (int c = 0; c < TXT_COLS; c++)
        dg_rep__sink_printf(t->s, " %-*s", c == TXT_COLS - 1 ? 0 : (int)w[c], head[c]);
    txt__sgr(t, "0");
    dg_rep__sink_puts(t->s, "\n");
    for (uint32_t i = 0; i < n; i++) {
        dg_rep__sink_puts(t->s, "   ");
        for (int c = 0; c < TXT_COLS; c++) {
            /* Numbers right-aligned so digits line up; names left-aligned. */
            bool right = c >= 3 && c <= 5;
            size_t pad = w[c] - dg_rep__term_width(rows[i].cell[c]);
            dg_rep__sink_puts(t->s, " ");
            if (right)
                dg_rep__sink_printf(t->s, "%*s", (int)pad, "");
            dg_rep__sink_puts(t->s, rows[i].cell[c]);
            if (!right && c != TXT_COLS - 1)
                dg_rep__sink_printf(t->s, "%*s", (int)pad, "");
        }
        while (t->s->len > 0 && t->s->p[t->s->len - 1] == ' ') /* rows with empty tail cells */
            dg_rep__sink_truncate(t->s, t->s->len - 1);
        dg_rep__sink_puts(t->s, "\n");
    }
}

static void txt__ranges(txt *t, const dg_report_check *c)
{
    dg_rep__sink_puts(t->s, "  ");
    dg_rep__ranges_line(t->s, c, TXT_RANGES_SHOWN);
    dg_rep__sink_puts(t->s, "\n");
}

/* The check's differing header/table values, then its own lines (one per case). */
static void txt__details(txt *t, const dg_report_check *c)
{
    for (uint32_t i = 0; i < c->n_values; i++) {
        dg_rep__sink_puts(t->s, "    ");
        dg_rep__value_line(t->s, &c->values[i], dg_rep__term_text);
        dg_rep__sink_puts(t->s, "\n");
    }
    if (c->values_cut)
        dg_rep__sink_printf(t->s, "    ... %u more differing values\n", (unsigned)c->values_cut);
    for (uint32_t i = 0; i < c->n_details; i++) {
        dg_rep__sink_puts(t->s, "  - ");
        dg_rep__term_text(t->s, c->details[i]);
        dg_rep__sink_puts(t->s, "\n");
    }
    if (c->details_cut)
        dg_rep__sink_printf(t->s, "  ... %u more lines\n", (unsigned)c->details_cut);
}

static void txt__events(txt *t, const dg_report_tick *tk)
{
    dg_rep__sink_printf(t->s, "  events at tick %llu: A has %u, B %u\n", (unsigned long long)tk->tick,
                    (unsigned)tk->events_a, (unsigned)tk->events_b);
    for (uint32_t i = 0; i < tk->n_event_diffs; i++) {
        dg_rep__sink_puts(t->s, "    ");
        dg_rep__event_diff_line(t->s, &tk->event_diffs[i], tk, dg_rep__term_text);
        dg_rep__sink_puts(t->s, "\n");
    }
    if (tk->event_diffs_cut)
        dg_rep__sink_printf(t->s, "    ... %u more differing events\n", (unsigned)tk->event_diffs_cut);
}

static void txt__detail(txt *t, const dg_report_scenario *sc, const dg_report_check *c, uint32_t max_rows)
{
    dg_rep__sink_puts(t->s, "\n");
    txt__sgr(t, "1");
    dg_rep__term_text(t->s, sc->name);
    dg_rep__sink_puts(t->s, " / ");
    dg_rep__term_text(t->s, c->name);
    txt__sgr(t, "0");
    dg_rep__sink_puts(t->s, ": ");
    dg_rep__check_headline(t->s, c, dg_rep__term_text);
    dg_rep__sink_puts(t->s, "\n");
    if (c->message && c->first_tick != DG_REPORT_TICK_NONE) {
        dg_rep__sink_puts(t->s, "  ");
        dg_rep__term_text(t->s, c->message);
        dg_rep__sink_puts(t->s, "\n");
    }
    txt__details(t, c);
    if (c->first_tick != DG_REPORT_TICK_NONE)
        txt__ranges(t, c);
    if (c->n_ticks == 0 || c->ticks[0]->tick != c->first_tick)
        return;
    const dg_report_tick *tk = c->ticks[0];
    if (tk->events_differ)
        txt__events(t, tk);
    uint64_t total;
    txt__collect_rows(tk, NULL, 0, &total); /* count first: allocate what is shown, not the cap */
    uint32_t want = total < max_rows ? (uint32_t)total : max_rows;
    txt_row *rows = want ? malloc((size_t)want * sizeof *rows) : NULL;
    if (want && !rows) {
        t->s->nomem = true;
        return;
    }
    uint32_t n = txt__collect_rows(tk, rows, want, &total);
    if (n)
        txt__table(t, rows, n);
    free(rows);
    if (total > n)
        dg_rep__sink_printf(t->s, "    ... %llu more row%s\n", (unsigned long long)(total - n), dg_report_plural_s(total - n));
    if (tk->entities_cut)
        dg_rep__sink_printf(t->s, "    ... %u more entit%s not kept (cap %u per tick)\n", (unsigned)tk->entities_cut,
                        tk->entities_cut == 1 ? "y" : "ies",
                        (unsigned)(tk->n_entities));
}

static void txt__bisect(txt *t, const dg_report_bisect *b)
{
    if (!b->present)
        return;
    dg_rep__sink_puts(t->s, "\nbisect");
    if (b->scenario) {
        dg_rep__sink_puts(t->s, " (");
        dg_rep__term_text(t->s, b->scenario);
        dg_rep__sink_puts(t->s, ")");
    }
    dg_rep__sink_puts(t->s, ": ");
    if (b->first_bad_commit) {
        dg_rep__sink_puts(t->s, "first bad commit ");
        txt__sgr(t, "1;31");
        dg_rep__term_text(t->s, b->first_bad_commit);
        txt__sgr(t, "0");
        if (b->subject) {
            dg_rep__sink_puts(t->s, " \"");
            dg_rep__term_text(t->s, b->subject);
            dg_rep__sink_puts(t->s, "\"");
        }
        if (b->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(t->s, ", first divergent tick %llu", (unsigned long long)b->first_tick);
    } else {
        dg_rep__sink_puts(t->s, "no first bad commit found");
    }
    dg_rep__sink_puts(t->s, "\n  good ");
    dg_rep__term_text(t->s, dg_rep__str_or(b->good_rev, "?"));
    dg_rep__sink_puts(t->s, ", bad ");
    dg_rep__term_text(t->s, dg_rep__str_or(b->bad_rev, "?"));
    dg_rep__sink_printf(t->s, ", %u steps\n", (unsigned)b->n_steps);
    for (uint32_t i = 0; i < b->n_steps; i++) {
        const dg_report_bisect_step *st = &b->steps[i];
        dg_rep__sink_puts(t->s, "  ");
        dg_rep__term_text(t->s, st->commit);
        dg_rep__sink_puts(t->s, st->verdict == DG_REPORT_GOOD ? " good" : st->verdict == DG_REPORT_SKIP ? " skip" : " bad");
        if (st->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(t->s, " (first divergent tick %llu)", (unsigned long long)st->first_tick);
        dg_rep__sink_puts(t->s, "\n");
    }
}

void dg_rep__text(const dg_report *r, const dg_report_opts *o, dg_rsink *s)
{
    txt t = {s, o->colour};
    uint32_t max_rows = o->rows_per_check ? o->rows_per_check : TXT_DEFAULT_ROWS;
    txt__summary_header(&t, r);
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        txt__scenario_line(&t, r->scenarios[i]);
    uint32_t max_sections = o->max_sections ? o->max_sections : TXT_DEFAULT_SECTIONS, shown = 0;
    uint64_t more = 0;
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        const dg_report_scenario *sc = r->scenarios[i];
        for (uint32_t j = 0; j < sc->n_checks; j++) {
            if (sc->checks[j]->status != DG_REPORT_FAIL)
                continue;
            if (shown++ < max_sections)
                txt__detail(&t, sc, sc->checks[j], max_rows);
            else
                more++;
        }
    }
    if (more)
        dg_rep__sink_printf(s, "\n... %llu more failing checks not shown in detail (see the summary lines above)\n",
                        (unsigned long long)more);
    txt__bisect(&t, &r->bisect);
}
