/* reports/report_markdown.c — the report room's note for a pull request: a summary table, then
 * the first divergent tick of each failure as a short field table. A hard byte cap (GitHub stops
 * a comment at 65,536 characters) is enforced section by section, with a "... N more" note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define MD_DEFAULT_ROWS 20u
#define MD_DEFAULT_MAX 60000u
#define MD_MIN_MAX 1024u
#define MD_RESERVE 400u /* room kept for the closing note */

static const char *md__badge(dg_report_status st)
{
    return st == DG_REPORT_PASS ? "✅ pass" : st == DG_REPORT_WARN ? "⚠️ warn" : st == DG_REPORT_FAIL ? "❌ fail" : "⚠️ error";
}

static void md__header(dg_rsink *s, const dg_report *r)
{
    dg_report_status st = dg_report_overall_status(r);
    dg_rep__sink_puts(s, "## detgate ");
    dg_rep__md_text(s, dg_rep__str_or(r->command, "report"));
    dg_rep__sink_printf(s, ": %s\n\n", md__badge(st));
    dg_rep__tally_line(s, r);
    if (r->tool_version) {
        dg_rep__sink_puts(s, " · detgate ");
        dg_rep__md_text(s, r->tool_version);
    }
    dg_rep__sink_puts(s, r->nomem ? "\n\n**Incomplete:** the run ran out of memory while building this report.\n\n" : "\n\n");
    if (r->note) {
        dg_rep__md_text(s, r->note);
        dg_rep__sink_puts(s, "\n\n");
    }
}

static void md__row(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c, const char *anchor)
{
    dg_rep__sink_puts(s, "| ");
    if (anchor && anchor[0]) { /* a link to the scenario's section (docs/REPORT-SCHEMA.md, "Markdown anchors") */
        dg_rep__sink_puts(s, "[");
        dg_rep__md_text(s, sc->name);
        dg_rep__sink_printf(s, "](#%s)", anchor);
    } else {
        dg_rep__md_text(s, sc->name);
    }
    dg_rep__sink_puts(s, " | ");
    dg_rep__md_text(s, c->name);
    dg_rep__sink_printf(s, " | %s | ", md__badge(c->status));
    if (c->first_tick != DG_REPORT_TICK_NONE)
        dg_rep__sink_printf(s, "%llu", (unsigned long long)c->first_tick);
    else if (c->sub_quantum && c->first_raw_tick != DG_REPORT_TICK_NONE)
        dg_rep__sink_printf(s, "— (sub-quantum from %llu)", (unsigned long long)c->first_raw_tick);
    else
        dg_rep__sink_puts(s, "—");
    dg_rep__sink_puts(s, " |\n");
}

typedef struct md_budget {
    size_t limit;          /* bytes the body may use (the cap minus the closing reserve) */
    uint64_t rows_left;    /* summary rows not shown */
    uint64_t details_left; /* failure sections not shown */
    const bool *show;      /* per scenario: its section may be written (NULL: every one) */
    char (*anchor)[DG_REP_ANCHOR_CAP]; /* per scenario: its section's anchor, "" for none (NULL: no links) */
    char (*heading)[DG_REP_HEADING_CAP]; /* per scenario: its section's heading (NULL: "❌ NAME") */
    bool *written;         /* per scenario: its section was written (NULL: not tracked) */
} md_budget;

/* Appends the part of s beyond `mark` only if the total stays within the budget. */
static bool md__fits(dg_rsink *s, size_t mark, const md_budget *b)
{
    if (s->len <= b->limit)
        return true;
    dg_rep__sink_truncate(s, mark);
    return false;
}

/* Failing and erroring checks first: in a capped comment they are what must survive. */
static void md__summary_table(dg_rsink *s, const dg_report *r, md_budget *b)
{
    dg_rep__sink_puts(s, "| Scenario | Check | Result | First divergent tick |\n| --- | --- | --- | --- |\n");
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < r->n_scenarios; i++) {
            const dg_report_scenario *sc = r->scenarios[i];
            for (uint32_t j = 0; j < sc->n_checks; j++) {
                const dg_report_check *c = sc->checks[j];
                if ((c->status == DG_REPORT_PASS) != (pass == 1))
                    continue;
                /* A row that does not fit is left out and counted; later, shorter rows still
                 * get their chance (one absurd name must not hide every other result). */
                size_t mark = s->len;
                md__row(s, sc, c, b->anchor ? b->anchor[i] : NULL);
                if (!md__fits(s, mark, b))
                    b->rows_left++;
            }
        }
    }
    dg_rep__sink_puts(s, "\n");
}

static void md__field_row(dg_rsink *s, const dg_report_entity *e, const dg_report_field *f)
{
    dg_rep__sink_printf(s, "| %u", (unsigned)e->id);
    if (e->name[0]) {
        dg_rep__sink_puts(s, " ");
        dg_rep__md_text(s, e->name);
    }
    dg_rep__sink_printf(s, " | %s | ", dg_report_entity_kind_name(e->kind));
    if (!f) {
        dg_rep__sink_puts(s, "— | | | | |\n");
        return;
    }
    dg_rep__md_text(s, f->name);
    dg_rep__sink_puts(s, " | ");
    char bits[400], qa[96], qb[96];
    bool flags = dg_rep__flag_bits(bits, sizeof bits, f);
    if (f->has_text) { /* a declared field, as its schema shows it */
        dg_rep__md_text(s, f->a_text);
        dg_rep__sink_puts(s, " | ");
        dg_rep__md_text(s, f->b_text);
    } else if (f->has_quats) { /* both orientations, w x y z */
        dg_rep__quat_buf(qa, sizeof qa, f->quat_a);
        dg_rep__quat_buf(qb, sizeof qb, f->quat_b);
        dg_rep__sink_printf(s, "%s | %s", qa, qb);
    } else if (flags) {
        dg_rep__sink_printf(s, "0x%04llX | 0x%04llX", (unsigned long long)f->a_q, (unsigned long long)f->b_q);
    } else if (f->has_values) {
        dg_rep__double(s, f->a, false);
        dg_rep__sink_puts(s, " | ");
        dg_rep__double(s, f->b, false);
    } else {
        dg_rep__sink_puts(s, " | ");
    }
    dg_rep__sink_puts(s, " | ");
    if (flags) {
        dg_rep__sink_puts(s, bits);
    } else if (f->has_text && !f->has_values) {
        dg_rep__sink_puts(s, "—");
    } else {
        if (f->delta > 0)
            dg_rep__sink_puts(s, "+");
        dg_rep__double(s, f->delta, false);
    }
    if (f->unit[0]) {
        dg_rep__sink_puts(s, " ");
        dg_rep__md_text(s, f->unit);
    }
    if (f->has_quanta)
        dg_rep__sink_printf(s, " | %lld → %lld |\n", (long long)f->a_q, (long long)f->b_q);
    else
        dg_rep__sink_puts(s, " | |\n");
}

/* The differing header/table values as a table, then one bullet per detail line (a check's cases). */
static void md__check_lines(dg_rsink *s, const dg_report_check *c)
{
    if (c->n_values) {
        dg_rep__sink_puts(s, "| Field | A | B |\n| --- | --- | --- |\n");
        for (uint32_t i = 0; i < c->n_values; i++) {
            const dg_report_value *v = &c->values[i];
            dg_rep__sink_puts(s, "| ");
            dg_rep__md_text(s, v->field);
            dg_rep__sink_puts(s, " | ");
            dg_rep__md_text(s, v->a ? v->a : "(none)");
            dg_rep__sink_puts(s, " | ");
            dg_rep__md_text(s, v->b ? v->b : "(none)");
            dg_rep__sink_puts(s, " |\n");
        }
        dg_rep__sink_puts(s, "\n");
    }
    if (c->values_cut)
        dg_rep__sink_printf(s, "… %u more differing values\n\n", (unsigned)c->values_cut);
    for (uint32_t i = 0; i < c->n_details; i++) {
        dg_rep__sink_puts(s, "- ");
        dg_rep__md_text(s, c->details[i]);
        dg_rep__sink_puts(s, "\n");
    }
    if (c->details_cut)
        dg_rep__sink_printf(s, "- … %u more lines\n", (unsigned)c->details_cut);
    if (c->n_details || c->details_cut)
        dg_rep__sink_puts(s, "\n");
}

static void md__events(dg_rsink *s, const dg_report_tick *t)
{
    for (uint32_t i = 0; i < t->n_event_diffs; i++) {
        dg_rep__sink_printf(s, "- tick %llu ", (unsigned long long)t->tick);
        dg_rep__event_diff_line(s, &t->event_diffs[i], t, dg_rep__md_text);
        dg_rep__sink_puts(s, "\n");
    }
    if (t->event_diffs_cut)
        dg_rep__sink_printf(s, "- … %u more differing events\n", (unsigned)t->event_diffs_cut);
    if (t->n_event_diffs || t->event_diffs_cut)
        dg_rep__sink_puts(s, "\n");
}

static void md__detail(dg_rsink *s, const dg_report_check *c, uint32_t max_rows)
{
    dg_rep__sink_puts(s, "**❌ ");
    dg_rep__md_text(s, c->name);
    dg_rep__sink_puts(s, "**\n\n");
    dg_rep__check_headline(s, c, dg_rep__md_text);
    dg_rep__sink_puts(s, "\n\n");
    md__check_lines(s, c);
    if (c->n_ticks == 0 || c->ticks[0]->tick != c->first_tick)
        return;
    const dg_report_tick *t = c->ticks[0];
    md__events(s, t);
    if (t->n_entities == 0)
        return;
    dg_rep__sink_puts(s, "| Entity | Kind | Field | A | B | Δ | Quanta A → B |\n| --- | --- | --- | ---: | ---: | ---: | --- |\n");
    uint64_t rows = 0, shown = 0;
    for (uint32_t i = 0; i < t->n_entities; i++) {
        const dg_report_entity *e = &t->entities[i];
        uint32_t nf = e->n_fields ? e->n_fields : 1;
        for (uint32_t j = 0; j < nf; j++, rows++)
            if (shown < max_rows) {
                md__field_row(s, e, e->n_fields ? &e->fields[j] : NULL);
                shown++;
            }
    }
    dg_rep__sink_puts(s, "\n");
    if (rows > shown || t->entities_cut)
        dg_rep__sink_printf(s, "… %llu more row%s%s\n\n", (unsigned long long)(rows - shown),
                        dg_report_plural_s(rows - shown), t->entities_cut ? " (and entities beyond the per-tick cap)" : "");
}

static uint32_t md__failed_checks(const dg_report_scenario *sc)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < sc->n_checks; j++)
        n += sc->checks[j]->status == DG_REPORT_FAIL;
    return n;
}

/* One section per scenario with a failing check: its heading (the anchor the summary links to),
 * then each failing check. A section that does not fit is left out whole, its checks counted. */
static void md__details(dg_rsink *s, const dg_report *r, uint32_t max_rows, md_budget *b)
{
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        const dg_report_scenario *sc = r->scenarios[i];
        uint32_t nfail = md__failed_checks(sc);
        if (nfail == 0)
            continue;
        if (b->show && !b->show[i]) {
            b->details_left += nfail;
            continue;
        }
        size_t mark = s->len;
        const char *heading = b->heading ? b->heading[i] : NULL;
        bool named = !heading || !heading[0] || strcmp(heading + strlen("❌ "), sc->name ? sc->name : "") == 0;
        dg_rep__sink_puts(s, "### ");
        if (heading && heading[0]) {
            dg_rep__md_text(s, heading);
        } else {
            dg_rep__sink_puts(s, "❌ ");
            dg_rep__md_text(s, sc->name);
        }
        dg_rep__sink_puts(s, "\n\n");
        if (!named) { /* the heading is "Scenario N": the name itself goes here */
            dg_rep__sink_puts(s, "Scenario ");
            dg_rep__md_text(s, sc->name);
            dg_rep__sink_puts(s, "\n\n");
        }
        for (uint32_t j = 0; j < sc->n_checks; j++)
            if (sc->checks[j]->status == DG_REPORT_FAIL)
                md__detail(s, sc->checks[j], max_rows);
        if (!md__fits(s, mark, b))
            b->details_left += nfail;
        else if (b->written)
            b->written[i] = true;
    }
}

static void md__bisect(dg_rsink *s, const dg_report_bisect *bi, md_budget *b)
{
    if (!bi->present)
        return;
    size_t mark = s->len;
    dg_rep__sink_puts(s, "### Bisect");
    if (bi->scenario) {
        dg_rep__sink_puts(s, " · ");
        dg_rep__md_text(s, bi->scenario);
    }
    dg_rep__sink_puts(s, "\n\n");
    if (bi->first_bad_commit) {
        dg_rep__sink_puts(s, "First bad commit **");
        dg_rep__md_text(s, bi->first_bad_commit);
        dg_rep__sink_puts(s, "**");
        if (bi->subject) {
            dg_rep__sink_puts(s, " — ");
            dg_rep__md_text(s, bi->subject);
        }
        if (bi->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(s, "; first divergent tick %llu", (unsigned long long)bi->first_tick);
    } else {
        dg_rep__sink_puts(s, "No first bad commit found");
    }
    dg_rep__sink_printf(s, " (%u steps).\n\n", (unsigned)bi->n_steps);
    if (!md__fits(s, mark, b))
        b->details_left++;
}

/* Each WARN check's headline as a bullet under the table (what drifted: the tick, and where the
 * data allows the entity, the field and both raw values); a list that does not fit is left out. */
static void md__warnings(dg_rsink *s, const dg_report *r, md_budget *b)
{
    size_t mark = s->len;
    bool any = false;
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        for (uint32_t j = 0; j < r->scenarios[i]->n_checks; j++) {
            const dg_report_check *c = r->scenarios[i]->checks[j];
            if (c->status != DG_REPORT_WARN || !c->message)
                continue;
            dg_rep__sink_puts(s, "- ⚠️ ");
            dg_rep__md_text(s, r->scenarios[i]->name);
            dg_rep__sink_puts(s, " / ");
            dg_rep__md_text(s, c->name);
            dg_rep__sink_puts(s, ": ");
            dg_rep__md_text(s, c->message);
            dg_rep__sink_puts(s, "\n");
            any = true;
        }
    if (any)
        dg_rep__sink_puts(s, "\n");
    if (any && !md__fits(s, mark, b))
        b->details_left++;
}

static void md__render(const dg_report *r, const dg_report_opts *o, dg_rsink *s, md_budget *b)
{
    size_t cap = o->markdown_max_bytes ? o->markdown_max_bytes : MD_DEFAULT_MAX;
    if (cap < MD_MIN_MAX)
        cap = MD_MIN_MAX;
    b->limit = cap - MD_RESERVE;
    b->rows_left = b->details_left = 0;
    uint32_t max_rows = o->rows_per_check ? o->rows_per_check : MD_DEFAULT_ROWS;
    md__header(s, r);
    if (s->len > b->limit) { /* only an absurd command or version string gets here */
        dg_rep__sink_truncate(s, 0);
        dg_rep__sink_printf(s, "## detgate: %s\n\n", md__badge(dg_report_overall_status(r)));
    }
    md__summary_table(s, r, b);
    md__warnings(s, r, b);
    md__bisect(s, &r->bisect, b);
    md__details(s, r, max_rows, b);
    if (b->rows_left || b->details_left)
        dg_rep__sink_printf(s,
                        "… %llu more summary rows and %llu more sections not shown (size cap %llu bytes); "
                        "see the JSON or HTML report for everything.\n",
                        (unsigned long long)b->rows_left, (unsigned long long)b->details_left,
                        (unsigned long long)cap);
}

/* The headings and anchors of the sections b->show allows. */
static bool md__plan_anchors(const dg_report *r, md_budget *b)
{
    const char **names = calloc(r->n_scenarios + 1, sizeof *names);
    if (!names)
        return false;
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        if (md__failed_checks(r->scenarios[i]) > 0 && (!b->show || b->show[i]))
            names[i] = r->scenarios[i]->name ? r->scenarios[i]->name : "";
    bool ok = dg_rep__md_anchors(names, r->n_scenarios, b->heading, b->anchor);
    free(names);
    return ok;
}

void dg_rep__markdown(const dg_report *r, const dg_report_opts *o, dg_rsink *s)
{
    size_t n = r->n_scenarios ? r->n_scenarios : 1;
    md_budget b = {0};
    b.anchor = malloc(n * sizeof *b.anchor);
    b.heading = malloc(n * sizeof *b.heading);
    b.written = calloc(n, sizeof *b.written);
    if (!b.anchor || !b.heading || !b.written || !md__plan_anchors(r, &b)) { /* out of memory: no links */
        free(b.anchor);
        free(b.heading);
        free(b.written);
        md_budget plain = {0};
        md__render(r, o, s, &plain);
        return;
    }
    size_t start = s->len;
    md__render(r, o, s, &b);
    bool all = true;
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        all = all && (b.written[i] || md__failed_checks(r->scenarios[i]) == 0);
    if (!all) {
        /* a section left out by the size cap: written again linking only to those written (their
         * anchors numbered without the others; the shorter table leaves them their room) */
        bool *show = b.written;
        b.written = NULL;
        b.show = show;
        if (md__plan_anchors(r, &b)) {
            dg_rep__sink_truncate(s, start);
            md__render(r, o, s, &b);
        }
        free(show);
    } else {
        free(b.written);
    }
    free(b.anchor);
    free(b.heading);
}
