/* reports/report_junit.c — the report room's form for CI dashboards: JUnit XML, one <testsuite>
 * per scenario, one <testcase> per check, the failure message naming the first divergent tick.
 * Every string goes through the XML escaper (which also drops characters XML 1.0 forbids). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "report_internal.h"

#define JU_IDS_IN_MESSAGE 8u

static void ju__attr(dg_rsink *s, const char *name, const char *value)
{
    dg_rep__sink_printf(s, " %s=\"", name);
    dg_rep__xml_text(s, value);
    dg_rep__sink_puts(s, "\"");
}

/* Seconds with three decimals: the one form every JUnit consumer parses (no exponent). */
static void ju__attr_time(dg_rsink *s, double seconds)
{
    char d[64];
    if (!(seconds >= 0) || seconds > 1e12)
        seconds = 0;
    snprintf(d, sizeof d, "%.3f", seconds);
    for (char *p = d; *p; p++)
        if (*p == ',')
            *p = '.';
    dg_rep__sink_printf(s, " time=\"%s\"", d);
}

/* "first divergent tick 4312: entities 7, 19 differ" — what a CI dashboard shows in one line. */
static void ju__failure_message(dg_rsink *s, const dg_report_check *c)
{
    if (c->first_tick == DG_REPORT_TICK_NONE) {
        dg_rep__check_headline(s, c, dg_rep__sink_puts);
        return;
    }
    dg_rep__sink_printf(s, "first divergent tick %llu: ", (unsigned long long)c->first_tick);
    size_t before = s->len;
    dg_rep__entity_list(s, c, JU_IDS_IN_MESSAGE);
    if (s->len == before) {
        dg_rep__sink_truncate(s, before - 2); /* drop ": " */
        dg_rep__sink_puts(s, ": state differs");
    }
}

static void ju__details(dg_rsink *s, const dg_report_check *c)
{
    dg_rep__check_headline(s, c, dg_rep__sink_puts);
    dg_rep__sink_puts(s, "\n");
    if (c->message && c->status != DG_REPORT_ERROR) {
        dg_rep__sink_puts(s, c->message);
        dg_rep__sink_puts(s, "\n");
    }
    for (uint32_t i = 0; i < c->n_values; i++) {
        dg_rep__value_line(s, &c->values[i], dg_rep__sink_puts);
        dg_rep__sink_puts(s, "\n");
    }
    for (uint32_t i = 0; i < c->n_details; i++) {
        dg_rep__sink_puts(s, c->details[i]);
        dg_rep__sink_puts(s, "\n");
    }
    if (c->details_cut || c->values_cut)
        dg_rep__sink_printf(s, "... %u more lines, %u more differing values\n", (unsigned)c->details_cut,
                        (unsigned)c->values_cut);
    if (c->first_tick != DG_REPORT_TICK_NONE) {
        dg_rep__ranges_line(s, c, 32);
        dg_rep__sink_puts(s, "\n");
    }
    if (c->n_ticks == 0 || c->ticks[0]->tick != c->first_tick)
        return;
    const dg_report_tick *t = c->ticks[0];
    for (uint32_t i = 0; i < t->n_event_diffs; i++) {
        dg_rep__sink_printf(s, "tick %llu ", (unsigned long long)t->tick);
        dg_rep__event_diff_line(s, &t->event_diffs[i], t, dg_rep__sink_puts);
        dg_rep__sink_puts(s, "\n");
    }
    if (t->event_diffs_cut)
        dg_rep__sink_printf(s, "... %u more differing events\n", (unsigned)t->event_diffs_cut);
    for (uint32_t i = 0; i < t->n_entities; i++) {
        const dg_report_entity *e = &t->entities[i];
        dg_rep__sink_printf(s, "tick %llu entity %u", (unsigned long long)t->tick, (unsigned)e->id);
        if (e->name[0])
            dg_rep__sink_printf(s, " (%s)", e->name);
        dg_rep__sink_printf(s, " %s", dg_report_entity_kind_name(e->kind));
        for (uint32_t j = 0; j < e->n_fields; j++) {
            const dg_report_field *f = &e->fields[j];
            char a[40], b[40], d[40];
            dg_rep__double_buf(a, sizeof a, f->a, false);
            dg_rep__double_buf(b, sizeof b, f->b, false);
            dg_rep__double_buf(d, sizeof d, f->delta, false);
            if (f->has_text) /* a declared field: its values as the schema shows them (with the unit) */
                dg_rep__sink_printf(s, "; %s %s -> %s", f->name, f->a_text, f->b_text);
            else if (f->has_values)
                dg_rep__sink_printf(s, "; %s %s -> %s %s (delta %s)", f->name, a, b, f->unit, d);
            else
                dg_rep__sink_printf(s, "; %s delta %s %s", f->name, d, f->unit);
        }
        dg_rep__sink_puts(s, "\n");
    }
    if (t->entities_cut)
        dg_rep__sink_printf(s, "... %u more entit%s\n", (unsigned)t->entities_cut, t->entities_cut == 1 ? "y" : "ies");
}

/* Builds a plain string in a scratch sink, then emits it escaped (messages mix report text and
 * numbers; escaping once at the end keeps every path through the escaper). */
static void ju__escaped(dg_rsink *s, void (*build)(dg_rsink *, const dg_report_check *), const dg_report_check *c,
                        bool attr)
{
    dg_rsink tmp;
    dg_rep__sink_init(&tmp);
    build(&tmp, c);
    if (tmp.nomem)
        s->nomem = true;
    if (attr)
        dg_rep__xml_text(s, tmp.p ? tmp.p : "");
    else
        dg_rep__xml_content(s, tmp.p ? tmp.p : "");
    dg_rep__sink_free(&tmp);
}

/* JUnit has no warning state: a WARN check is a passing testcase carrying this property (the first
 * raw-drifting tick) and a WARN line in its <system-out>. */
static void ju__warn_property(dg_rsink *s, const dg_report_check *c)
{
    char v[64];
    snprintf(v, sizeof v, "raw floats differ from tick %llu", (unsigned long long)c->first_raw_tick);
    dg_rep__sink_puts(s, "      <properties>\n        <property");
    ju__attr(s, "name", "detgate.warn");
    ju__attr(s, "value", v);
    dg_rep__sink_puts(s, "/>\n      </properties>\n");
}

static void ju__testcase(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c)
{
    dg_rep__sink_puts(s, "    <testcase");
    dg_rep__sink_puts(s, " classname=\"detgate.");
    dg_rep__xml_text(s, sc->name);
    dg_rep__sink_puts(s, "\"");
    ju__attr(s, "name", c->name);
    ju__attr_time(s, c->duration_s);
    if (c->status == DG_REPORT_PASS && !c->sub_quantum) {
        dg_rep__sink_puts(s, "/>\n");
        return;
    }
    dg_rep__sink_puts(s, ">\n");
    if (c->status == DG_REPORT_WARN)
        ju__warn_property(s, c);
    const char *el = c->status == DG_REPORT_FAIL                                  ? "failure"
                     : c->status != DG_REPORT_PASS && c->status != DG_REPORT_WARN ? "error"
                                                                                  : NULL;
    if (el) {
        dg_rep__sink_printf(s, "      <%s message=\"", el);
        ju__escaped(s, ju__failure_message, c, true);
        dg_rep__sink_printf(s, "\" type=\"%s\">", c->status == DG_REPORT_FAIL ? "divergence" : "could-not-test");
        ju__escaped(s, ju__details, c, false);
        dg_rep__sink_printf(s, "</%s>\n", el);
    } else {
        dg_rep__sink_puts(s, "      <system-out>");
        if (c->status == DG_REPORT_WARN) /* the line a CI log shows for a passing testcase */
            dg_rep__sink_printf(s, "WARN: sub-quantum drift: quantized state equal, raw floats differ from tick %llu\n",
                            (unsigned long long)c->first_raw_tick);
        ju__escaped(s, ju__details, c, false);
        dg_rep__sink_puts(s, "</system-out>\n");
    }
    dg_rep__sink_puts(s, "    </testcase>\n");
}

static void ju__property(dg_rsink *s, const char *name, const char *value)
{
    dg_rep__sink_puts(s, "      <property");
    ju__attr(s, "name", name);
    ju__attr(s, "value", value);
    dg_rep__sink_puts(s, "/>\n");
}

static void ju__timestamp(char *buf, size_t cap, int64_t unix_s)
{
    time_t t = (time_t)unix_s;
    struct tm tmv;
    buf[0] = '\0';
    if (gmtime_r(&t, &tmv))
        strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tmv);
}

static void ju__suite(dg_rsink *s, const dg_report *r, const dg_report_scenario *sc)
{
    uint32_t fail = 0, error = 0;
    double time_s = 0;
    for (uint32_t i = 0; i < sc->n_checks; i++) {
        fail += sc->checks[i]->status == DG_REPORT_FAIL;
        error += sc->checks[i]->status != DG_REPORT_FAIL && sc->checks[i]->status != DG_REPORT_PASS &&
                 sc->checks[i]->status != DG_REPORT_WARN; /* a WARN testcase passes */
        time_s += sc->checks[i]->duration_s;
    }
    char ts[32];
    ju__timestamp(ts, sizeof ts, r->started_unix);
    dg_rep__sink_puts(s, "  <testsuite");
    ju__attr(s, "name", sc->name);
    dg_rep__sink_printf(s, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"0\"", (unsigned)sc->n_checks,
                    (unsigned)fail, (unsigned)error);
    ju__attr_time(s, time_s);
    if (r->started_unix != 0) /* 0: the harness did not say when */
        ju__attr(s, "timestamp", ts);
    dg_rep__sink_puts(s, ">\n    <properties>\n");
    char num[32];
    ju__property(s, "format", dg_rep__str_or(sc->format, ""));
    snprintf(num, sizeof num, "%llu", (unsigned long long)sc->ticks);
    ju__property(s, "ticks", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)sc->entity_ticks);
    ju__property(s, "entityTicks", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)sc->file_bytes);
    ju__property(s, "fileBytes", num);
    dg_rep__sink_puts(s, "    </properties>\n");
    for (uint32_t i = 0; i < sc->n_checks; i++)
        ju__testcase(s, sc, sc->checks[i]);
    dg_rep__sink_puts(s, "  </testsuite>\n");
}

static void ju__bisect_message(dg_rsink *s, const dg_report_bisect *b)
{
    dg_rep__sink_puts(s, "first bad commit ");
    dg_rep__sink_puts(s, b->first_bad_commit);
    if (b->subject) {
        dg_rep__sink_puts(s, " \"");
        dg_rep__sink_puts(s, b->subject);
        dg_rep__sink_puts(s, "\"");
    }
    if (b->first_tick != DG_REPORT_TICK_NONE)
        dg_rep__sink_printf(s, ": first divergent tick %llu", (unsigned long long)b->first_tick);
}

/* A concluded bisection is reported as a failing testcase: the dashboard should show the culprit. */
static void ju__bisect(dg_rsink *s, const dg_report_bisect *b)
{
    if (!b->present)
        return;
    bool bad = b->first_bad_commit != NULL;
    dg_rep__sink_printf(s, "  <testsuite name=\"bisect\" tests=\"1\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n",
                    bad ? 1 : 0);
    dg_rep__sink_puts(s, "    <testcase classname=\"detgate.bisect\"");
    ju__attr(s, "name", dg_rep__str_or(b->scenario, "bisect"));
    if (!bad) {
        dg_rep__sink_puts(s, "/>\n  </testsuite>\n");
        return;
    }
    dg_rep__sink_puts(s, ">\n      <failure message=\"");
    dg_rsink tmp;
    dg_rep__sink_init(&tmp);
    ju__bisect_message(&tmp, b);
    dg_rep__xml_text(s, tmp.p ? tmp.p : "");
    dg_rep__sink_puts(s, "\" type=\"first-bad-commit\">");
    dg_rep__sink_truncate(&tmp, 0);
    for (uint32_t i = 0; i < b->n_steps; i++)
        dg_rep__sink_printf(&tmp, "%s %s\n", b->steps[i].commit,
                        b->steps[i].verdict == DG_REPORT_GOOD ? "good" : b->steps[i].verdict == DG_REPORT_SKIP ? "skip" : "bad");
    if (tmp.nomem)
        s->nomem = true;
    dg_rep__xml_content(s, tmp.p ? tmp.p : "");
    dg_rep__sink_free(&tmp);
    dg_rep__sink_puts(s, "</failure>\n    </testcase>\n  </testsuite>\n");
}

void dg_rep__junit(const dg_report *r, const dg_report_opts *o, dg_rsink *s)
{
    (void)o;
    dg_rep__tally t;
    dg_rep__count(r, &t);
    bool bisect_bad = r->bisect.present && r->bisect.first_bad_commit;
    dg_rep__sink_puts(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
    dg_rep__sink_puts(s, " name=\"detgate ");
    dg_rep__xml_text(s, dg_rep__str_or(r->command, "report"));
    dg_rep__sink_puts(s, "\"");
    dg_rep__sink_printf(s, " tests=\"%u\" failures=\"%u\" errors=\"%u\"", (unsigned)(t.checks + r->bisect.present),
                    (unsigned)(t.ck_fail + bisect_bad), (unsigned)t.ck_error);
    ju__attr_time(s, r->duration_s);
    dg_rep__sink_puts(s, ">\n");
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        ju__suite(s, r, r->scenarios[i]);
    ju__bisect(s, &r->bisect);
    dg_rep__sink_puts(s, "</testsuites>\n");
}
