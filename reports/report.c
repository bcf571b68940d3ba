/* reports/report.c — the report room's filing cabinet: the result model and its builders.
 * Everything is copied in and report-owned; caps keep memory bounded however long the divergence,
 * and every cut is counted so no renderer ever pretends it showed everything. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define DG_REP_DEF_TICKS 64u
#define DG_REP_DEF_ENTITIES 32u
#define DG_REP_DEF_RANGES 256u
#define DG_REP_DEF_BUCKETS 2048u
#define DG_REP_DEF_POINTS 2048u
#define DG_REP_DEF_EVENTS 4u
#define DG_REP_DEF_VALUES 64u
#define DG_REP_DEF_DETAILS 16u
#define DG_REP_DEF_TRAJ_ENTITIES 16u
#define DG_REP_DEF_SPREAD 1024u

/* ---- the builder's bookkeeping behind the public structs (each public struct first) ---------- */

typedef struct rep_report {
    dg_report pub;
    uint32_t cap_scenarios, cap_steps;
} rep_report;

typedef struct rep_scenario {
    dg_report_scenario pub;
    dg_report *owner; /* limits, nomem flag */
    uint32_t cap_checks;
} rep_scenario;

typedef struct rep_check {
    dg_report_check pub;
    dg_report *owner;
    uint32_t cap_ranges, cap_ticks, cap_buckets, cap_values, cap_details, cap_more_trajectories, cap_spread;
    uint32_t cur_traj; /* where add_point goes: 0 main, k more[k-1], UINT32_MAX cut */
} rep_check;

typedef struct rep_tick {
    dg_report_tick pub;
    dg_report *owner;
    uint32_t cap_entities, cap_event_diffs;
} rep_tick;

static rep_report *rep_of(dg_report *r) { return (rep_report *)(void *)r; }
static rep_scenario *scenario_of(dg_report_scenario *s) { return (rep_scenario *)(void *)s; }
static rep_check *check_of(dg_report_check *c) { return (rep_check *)(void *)c; }
static rep_tick *tick_of(dg_report_tick *t) { return (rep_tick *)(void *)t; }

/* ---- small helpers ---------------------------------------------------------------------------- */

static char *report__strdup(dg_report *r, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (!p) {
        r->nomem = true;
        return NULL;
    }
    memcpy(p, s, n + 1);
    return p;
}

/* A zeroed object of the report's, or NULL and nomem. */
static void *report__calloc(dg_report *r, size_t size)
{
    void *p = calloc(1, size);
    if (!p)
        r->nomem = true;
    return p;
}

/* Grows an array to hold one more item; false (and nomem) if it cannot. */
static bool report__grow(dg_report *r, void **arr, uint32_t *cap, uint32_t count, size_t item)
{
    if (count < *cap)
        return true;
    uint32_t ncap = *cap ? *cap * 2 : 4;
    if (ncap < *cap || (size_t)ncap > SIZE_MAX / item) {
        r->nomem = true;
        return false;
    }
    void *p = realloc(*arr, (size_t)ncap * item);
    if (!p) {
        r->nomem = true;
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

/* The same for an array whose capacity is not kept: it is the power of two (at least 4) that
 * report__grow reaches from the count, so the allocation always holds at least that many. */
static bool report__grow_derived(dg_report *r, void **arr, uint32_t count, size_t item)
{
    uint32_t cap = 0;
    if (count > 0)
        for (cap = 4; cap < count && cap <= UINT32_MAX / 2;)
            cap *= 2;
    return report__grow(r, arr, &cap, count, item);
}

/* Copies at most cap-1 bytes of UTF-8 without splitting a character. */
static void report__copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (src) {
        size_t len = strlen(src);
        while (n < len) {
            uint32_t cp;
            size_t k = dg_rep__utf8_next((const unsigned char *)src + n, len - n, &cp);
            if (n + k > cap - 1)
                break;
            n += k;
        }
        memcpy(dst, src, n);
    }
    dst[n] = '\0';
}

static uint32_t report__pow2_at_least(uint32_t v)
{
    uint32_t p = 2;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
}

static void report__fill_limits(dg_report_limits *out, const dg_report_limits *in)
{
    dg_report_limits l = {0};
    if (in)
        l = *in;
    out->ticks_per_check = l.ticks_per_check ? l.ticks_per_check : DG_REP_DEF_TICKS;
    out->entities_per_tick = l.entities_per_tick ? l.entities_per_tick : DG_REP_DEF_ENTITIES;
    out->ranges_per_check = l.ranges_per_check ? l.ranges_per_check : DG_REP_DEF_RANGES;
    /* Pairwise merging halves the bucket count, so the cap must be even: a power of two. */
    out->timeline_buckets = report__pow2_at_least(l.timeline_buckets ? l.timeline_buckets : DG_REP_DEF_BUCKETS);
    out->trajectory_points = l.trajectory_points ? l.trajectory_points : DG_REP_DEF_POINTS;
    out->events_per_tick = l.events_per_tick ? l.events_per_tick : DG_REP_DEF_EVENTS;
    out->values_per_check = l.values_per_check ? l.values_per_check : DG_REP_DEF_VALUES;
    out->details_per_check = l.details_per_check ? l.details_per_check : DG_REP_DEF_DETAILS;
    out->trajectory_entities = l.trajectory_entities ? l.trajectory_entities : DG_REP_DEF_TRAJ_ENTITIES;
    out->spread_points = l.spread_points ? l.spread_points : DG_REP_DEF_SPREAD;
}

/* ---- lifetime --------------------------------------------------------------------------------- */

dg_report *dg_report_new(const char *command, const char *tool_version, const dg_report_limits *limits,
                         dg_error *err)
{
    rep_report *w = calloc(1, sizeof *w);
    if (!w) {
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "report", "cannot allocate a report");
        return NULL;
    }
    dg_report *r = &w->pub;
    report__fill_limits(&r->limits, limits);
    r->command = report__strdup(r, command);
    r->tool_version = report__strdup(r, tool_version);
    r->bisect.first_tick = DG_REPORT_TICK_NONE;
    if (r->nomem) {
        dg_report_free(r);
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "report", "cannot allocate a report");
        return NULL;
    }
    return r;
}

static void report__free_check(dg_report_check *c)
{
    free(c->name);
    free(c->message);
    free(c->ranges);
    for (uint32_t i = 0; i < c->n_ticks; i++) {
        free(c->ticks[i]->entities);
        free(c->ticks[i]->event_diffs);
        free(tick_of(c->ticks[i]));
    }
    free(c->ticks);
    for (uint32_t i = 0; i < c->n_values; i++) {
        free(c->values[i].field);
        free(c->values[i].a);
        free(c->values[i].b);
    }
    free(c->values);
    for (uint32_t i = 0; i < c->n_details; i++)
        free(c->details[i]);
    free(c->details);
    free(c->buckets);
    free(c->trajectory.a);
    free(c->trajectory.b);
    for (uint32_t i = 0; i < c->n_more_trajectories; i++) {
        free(c->more_trajectories[i].a);
        free(c->more_trajectories[i].b);
    }
    free(c->more_trajectories);
    free(c->spread);
    free(check_of(c));
}

static void report__free_bisect(dg_report_bisect *b)
{
    free(b->scenario);
    free(b->first_bad_commit);
    free(b->subject);
    free(b->good_rev);
    free(b->bad_rev);
    for (uint32_t i = 0; i < b->n_steps; i++)
        free(b->steps[i].commit);
    free(b->steps);
}

void dg_report_free(dg_report *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        dg_report_scenario *s = r->scenarios[i];
        for (uint32_t j = 0; j < s->n_checks; j++)
            report__free_check(s->checks[j]);
        free(s->checks);
        free(s->name);
        free(s->format);
        free(scenario_of(s));
    }
    free(r->scenarios);
    report__free_bisect(&r->bisect);
    free(r->command);
    free(r->tool_version);
    free(r->note);
    free(rep_of(r));
}

const char *dg_report_plural_s(uint64_t n) { return n == 1 ? "" : "s"; }

dg_status dg_report_set_note(dg_report *r, const char *fmt, ...)
{
    if (!r || !fmt)
        return DG_E_USAGE;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return DG_E_USAGE;
    char *m = malloc((size_t)n + 1);
    if (!m) {
        r->nomem = true;
        return DG_E_NOMEM;
    }
    va_start(ap, fmt);
    vsnprintf(m, (size_t)n + 1, fmt, ap);
    va_end(ap);
    free(r->note);
    r->note = m;
    return DG_OK;
}

/* ---- scenarios and checks --------------------------------------------------------------------- */

dg_report_scenario *dg_report_add_scenario(dg_report *r, const char *name, const char *format)
{
    if (!r || !report__grow(r, (void **)&r->scenarios, &rep_of(r)->cap_scenarios, r->n_scenarios,
                            sizeof *r->scenarios))
        return NULL;
    rep_scenario *w = report__calloc(r, sizeof *w);
    if (!w)
        return NULL;
    dg_report_scenario *s = &w->pub;
    w->owner = r;
    s->name = report__strdup(r, name ? name : "");
    s->format = report__strdup(r, format);
    if (!s->name || (format && !s->format)) {
        free(s->name);
        free(s->format);
        free(w);
        return NULL;
    }
    r->scenarios[r->n_scenarios++] = s;
    return s;
}

dg_report_check *dg_report_add_check(dg_report_scenario *s, const char *name, dg_report_status status)
{
    if (!s)
        return NULL;
    dg_report *r = scenario_of(s)->owner;
    if (!report__grow(r, (void **)&s->checks, &scenario_of(s)->cap_checks, s->n_checks, sizeof *s->checks))
        return NULL;
    rep_check *w = report__calloc(r, sizeof *w);
    if (!w)
        return NULL;
    dg_report_check *c = &w->pub;
    w->owner = r;
    c->status = status;
    c->first_tick = DG_REPORT_TICK_NONE;
    c->first_raw_tick = DG_REPORT_TICK_NONE;
    c->bucket_width = 1;
    c->name = report__strdup(r, name ? name : "");
    if (!c->name) {
        free(w);
        return NULL;
    }
    s->checks[s->n_checks++] = c;
    return c;
}

/* A new malloc'd string from a printf format; NULL (and *st set) on a bad format or out of memory. */
static char *report__vformat(dg_report *r, dg_status *st, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) {
        *st = DG_E_USAGE;
        return NULL;
    }
    char *m = malloc((size_t)n + 1);
    if (!m) {
        r->nomem = true;
        *st = DG_E_NOMEM;
        return NULL;
    }
    vsnprintf(m, (size_t)n + 1, fmt, ap);
    *st = DG_OK;
    return m;
}

dg_status dg_report_check_set_message(dg_report_check *c, const char *fmt, ...)
{
    if (!c || !fmt)
        return DG_E_USAGE;
    dg_status st;
    va_list ap;
    va_start(ap, fmt);
    char *m = report__vformat(check_of(c)->owner, &st, fmt, ap);
    va_end(ap);
    if (!m)
        return st;
    free(c->message);
    c->message = m;
    return DG_OK;
}

dg_status dg_report_check_add_detail(dg_report_check *c, const char *fmt, ...)
{
    if (!c || !fmt)
        return DG_E_USAGE;
    dg_report *r = check_of(c)->owner;
    if (c->n_details >= r->limits.details_per_check) {
        c->details_cut++;
        return DG_OK;
    }
    if (!report__grow(r, (void **)&c->details, &check_of(c)->cap_details, c->n_details, sizeof *c->details))
        return DG_E_NOMEM;
    dg_status st;
    va_list ap;
    va_start(ap, fmt);
    char *m = report__vformat(r, &st, fmt, ap);
    va_end(ap);
    if (!m)
        return st;
    c->details[c->n_details++] = m;
    return DG_OK;
}

dg_status dg_report_check_add_value(dg_report_check *c, const char *field, const char *a, const char *b)
{
    if (!c || !field)
        return DG_E_USAGE;
    dg_report *r = check_of(c)->owner;
    if (c->status == DG_REPORT_PASS || c->status == DG_REPORT_WARN) /* a differing value fails; ERROR stays */
        c->status = DG_REPORT_FAIL;
    if (c->n_values >= r->limits.values_per_check) {
        c->values_cut++;
        return DG_OK;
    }
    if (!report__grow(r, (void **)&c->values, &check_of(c)->cap_values, c->n_values, sizeof *c->values))
        return DG_E_NOMEM;
    dg_report_value v = {report__strdup(r, field), report__strdup(r, a), report__strdup(r, b)};
    if (!v.field || (a && !v.a) || (b && !v.b)) {
        free(v.field);
        free(v.a);
        free(v.b);
        return DG_E_NOMEM;
    }
    c->values[c->n_values++] = v;
    return DG_OK;
}

/* ---- divergent ticks: ranges and timeline ----------------------------------------------------- */

static bool check__fold_range(dg_report_check *c, uint64_t tick)
{
    dg_report *r = check_of(c)->owner;
    if (c->n_ranges > 0) {
        dg_report_range *last = &c->ranges[c->n_ranges - 1];
        if (tick == last->last + 1 || c->n_ranges >= r->limits.ranges_per_check) {
            if (tick != last->last + 1)
                c->ranges_coalesced = true;
            last->last = tick;
            last->count++;
            return true;
        }
    }
    if (!report__grow(r, (void **)&c->ranges, &check_of(c)->cap_ranges, c->n_ranges, sizeof *c->ranges))
        return false;
    c->ranges[c->n_ranges++] = (dg_report_range){tick, tick, 1};
    return true;
}

/* Merges buckets pairwise (0+1, 2+3, ...) and doubles the width: the picture keeps its shape
 * (max per bucket) at half the resolution. */
static void check__halve_timeline(dg_report_check *c)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < c->n_buckets; i += 2) {
        dg_report_bucket b = c->buckets[i];
        if (i + 1 < c->n_buckets) {
            const dg_report_bucket *n = &c->buckets[i + 1];
            b.last = n->last;
            b.ticks += n->ticks;
            if (n->entities > b.entities)
                b.entities = n->entities;
        }
        c->buckets[out++] = b;
    }
    c->n_buckets = out;
    c->bucket_width *= 2;
}

/* Buckets are aligned to multiples of the width, so a tick's bucket is tick / width. */
static bool check__feed_timeline(dg_report_check *c, uint64_t tick, uint32_t n_entities)
{
    dg_report *r = check_of(c)->owner;
    for (;;) {
        if (c->n_buckets > 0) {
            dg_report_bucket *last = &c->buckets[c->n_buckets - 1];
            if (last->first / c->bucket_width == tick / c->bucket_width) {
                last->last = tick;
                last->ticks++;
                if (n_entities > last->entities)
                    last->entities = n_entities;
                return true;
            }
        }
        if (c->n_buckets < r->limits.timeline_buckets)
            break;
        check__halve_timeline(c);
    }
    if (!report__grow(r, (void **)&c->buckets, &check_of(c)->cap_buckets, c->n_buckets, sizeof *c->buckets))
        return false;
    c->buckets[c->n_buckets++] = (dg_report_bucket){tick, tick, n_entities, 1};
    return true;
}

dg_status dg_report_check_add_divergent(dg_report_check *c, uint64_t tick, uint32_t n_entities)
{
    if (!c || tick == DG_REPORT_TICK_NONE)
        return DG_E_USAGE;
    if (c->n_ranges > 0 && tick <= c->ranges[c->n_ranges - 1].last)
        return DG_E_USAGE;
    /* Reserve room in both arrays first so a failure leaves the check as it was. */
    dg_report *r = check_of(c)->owner;
    if (!report__grow(r, (void **)&c->ranges, &check_of(c)->cap_ranges, c->n_ranges, sizeof *c->ranges) ||
        !report__grow(r, (void **)&c->buckets, &check_of(c)->cap_buckets, c->n_buckets, sizeof *c->buckets))
        return DG_E_NOMEM;
    check__fold_range(c, tick);
    check__feed_timeline(c, tick, n_entities);
    if (c->first_tick == DG_REPORT_TICK_NONE)
        c->first_tick = tick;
    c->divergent_ticks++;
    c->sub_quantum = false;
    if (c->status == DG_REPORT_PASS || c->status == DG_REPORT_WARN) /* a divergent tick fails; ERROR stays */
        c->status = DG_REPORT_FAIL;
    return DG_OK;
}

void dg_report_check_set_raw_divergence(dg_report_check *c, uint64_t tick)
{
    if (!c)
        return;
    c->first_raw_tick = tick;
    c->sub_quantum = tick != DG_REPORT_TICK_NONE && c->first_tick == DG_REPORT_TICK_NONE;
}

/* ---- detail: ticks, entities, fields ---------------------------------------------------------- */

dg_report_tick *dg_report_add_tick(dg_report_check *c, uint64_t tick)
{
    if (!c)
        return NULL;
    dg_report *r = check_of(c)->owner;
    if (c->n_ticks >= r->limits.ticks_per_check) {
        c->ticks_cut++;
        return NULL;
    }
    if (!report__grow(r, (void **)&c->ticks, &check_of(c)->cap_ticks, c->n_ticks, sizeof *c->ticks))
        return NULL;
    rep_tick *w = report__calloc(r, sizeof *w);
    if (!w)
        return NULL;
    w->owner = r;
    w->pub.tick = tick;
    c->ticks[c->n_ticks++] = &w->pub;
    return &w->pub;
}

dg_report_entity *dg_report_tick_add_entity(dg_report_tick *t, uint32_t id, const char *name,
                                            dg_report_entity_kind kind)
{
    if (!t)
        return NULL;
    dg_report *r = tick_of(t)->owner;
    if (t->n_entities >= r->limits.entities_per_tick) {
        t->entities_cut++;
        return NULL;
    }
    if (!report__grow(r, (void **)&t->entities, &tick_of(t)->cap_entities, t->n_entities, sizeof *t->entities))
        return NULL;
    dg_report_entity *e = &t->entities[t->n_entities++];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->kind = kind;
    report__copy_name(e->name, sizeof e->name, name);
    return e;
}

/* ---- detail: events ---------------------------------------------------------------------------- */

const char *dg_report_event_kind_name(uint8_t kind)
{
    static const char *const names[] = {NULL, "kill", "spawn", "chat", "admin", "alert"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : NULL;
}

const char *dg_report_event_field_name(uint8_t kind, char field)
{
    /* rows: kind 1..5; columns: a, b, c, d (dg_event_kind in detgate/quant.h) */
    static const char *const names[5][4] = {
        {"killer", "victim", "weapon", NULL},   {"entity", NULL, "type", "faction"},
        {"sender", NULL, "channel", NULL},      {"actor", "target", "action", NULL},
        {NULL, NULL, "faction", "level"},
    };
    if (kind < 1 || kind > 5 || field < 'a' || field > 'd')
        return NULL;
    return names[kind - 1][field - 'a'];
}

/* The text's first bytes, cut on a character boundary; an embedded NUL becomes U+FFFD so the
 * excerpt stays one C string and the difference stays visible. */
static void report__copy_event_text(char *dst, size_t cap, const char *src, size_t len)
{
    size_t o = 0, i = 0;
    while (i < len) {
        if (src[i] == '\0') {
            if (o + 3 > cap - 1)
                break;
            memcpy(dst + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = dg_rep__utf8_next((const unsigned char *)src + i, len - i, &cp);
        if (o + k > cap - 1)
            break;
        memcpy(dst + o, src + i, k);
        o += k;
        i += k;
    }
    dst[o] = '\0';
}

static void report__event(dg_report_event *out, const dg_event *e)
{
    memset(out, 0, sizeof *out);
    out->kind = e->kind;
    out->a = e->a;
    out->b = e->b;
    out->c = e->c;
    out->d = e->d;
    out->text_len = e->text ? e->text_len : 0;
    if (e->text)
        report__copy_event_text(out->text, sizeof out->text, e->text, e->text_len);
}

static size_t report__text_diff_at(const dg_event *a, const dg_event *b)
{
    size_t na = a->text ? a->text_len : 0, nb = b->text ? b->text_len : 0;
    size_t n = na < nb ? na : nb, i = 0;
    while (i < n && a->text[i] == b->text[i])
        i++;
    return i == n && na == nb ? SIZE_MAX : i;
}

static bool report__event_equal(const dg_event *a, const dg_event *b)
{
    return a->kind == b->kind && a->a == b->a && a->b == b->b && a->c == b->c && a->d == b->d &&
           report__text_diff_at(a, b) == SIZE_MAX;
}

uint32_t dg_report_tick_diff_events(dg_report_tick *t, const dg_event *a, size_t n_a, const dg_event *b,
                                    size_t n_b)
{
    if (!t)
        return 0;
    dg_report *r = tick_of(t)->owner;
    size_t n = n_a > n_b ? n_a : n_b;
    uint32_t differ = 0;
    t->events_a = n_a > UINT32_MAX ? UINT32_MAX : (uint32_t)n_a;
    t->events_b = n_b > UINT32_MAX ? UINT32_MAX : (uint32_t)n_b;
    for (size_t i = 0; i < n && i < UINT32_MAX; i++) {
        const dg_event *ea = i < n_a && a ? &a[i] : NULL, *eb = i < n_b && b ? &b[i] : NULL;
        if (ea && eb && report__event_equal(ea, eb))
            continue;
        differ++;
        if (t->n_event_diffs >= r->limits.events_per_tick) {
            t->event_diffs_cut++;
            continue;
        }
        if (!report__grow(r, (void **)&t->event_diffs, &tick_of(t)->cap_event_diffs, t->n_event_diffs,
                          sizeof *t->event_diffs)) {
            t->event_diffs_cut++;
            continue;
        }
        dg_report_event_diff *d = &t->event_diffs[t->n_event_diffs++];
        memset(d, 0, sizeof *d);
        d->index = (uint32_t)i;
        d->in_a = ea != NULL;
        d->in_b = eb != NULL;
        if (ea)
            report__event(&d->a, ea);
        if (eb)
            report__event(&d->b, eb);
        size_t at = ea && eb ? report__text_diff_at(ea, eb) : SIZE_MAX;
        d->text_diff_at = at > UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)at;
    }
    if (differ)
        t->events_differ = true;
    return differ;
}

static int64_t report__sat_sub(int64_t b, int64_t a)
{
    if (a < 0 && b > INT64_MAX + a)
        return INT64_MAX;
    if (a > 0 && b < INT64_MIN + a)
        return INT64_MIN;
    return b - a;
}

static dg_report_field *entity__next_field(dg_report_entity *e, const char *name, const char *unit)
{
    if (!e)
        return NULL;
    if (e->n_fields >= DG_REPORT_FIELDS_MAX) {
        e->fields_cut++;
        return NULL;
    }
    dg_report_field *f = &e->fields[e->n_fields++];
    memset(f, 0, sizeof *f);
    report__copy_name(f->name, sizeof f->name, name);
    report__copy_name(f->unit, sizeof f->unit, unit);
    return f;
}

bool dg_report_entity_add_field(dg_report_entity *e, const char *name, const char *unit, int64_t a_q,
                                int64_t b_q, double a, double b)
{
    dg_report_field *f = entity__next_field(e, name, unit);
    if (!f)
        return false;
    f->has_quanta = true;
    f->a_q = a_q;
    f->b_q = b_q;
    f->delta_q = report__sat_sub(b_q, a_q);
    f->has_values = true;
    f->a = a;
    f->b = b;
    f->delta = b - a;
    return true;
}

bool dg_report_entity_add_field_text(dg_report_entity *e, const char *name, const char *unit, int64_t a_q,
                                     int64_t b_q, bool has_values, double a, double b, const char *a_text,
                                     const char *b_text)
{
    dg_report_field *f = entity__next_field(e, name, unit);
    if (!f)
        return false;
    f->has_quanta = true;
    f->a_q = a_q;
    f->b_q = b_q;
    f->delta_q = report__sat_sub(b_q, a_q);
    f->has_values = has_values;
    f->a = has_values ? a : 0.0;
    f->b = has_values ? b : 0.0;
    f->delta = has_values ? b - a : 0.0;
    f->has_text = true;
    report__copy_name(f->a_text, sizeof f->a_text, a_text ? a_text : "");
    report__copy_name(f->b_text, sizeof f->b_text, b_text ? b_text : "");
    return true;
}

bool dg_report_entity_add_field_real(dg_report_entity *e, const char *name, const char *unit,
                                     bool has_values, double a, double b, double delta)
{
    dg_report_field *f = entity__next_field(e, name, unit);
    if (!f)
        return false;
    f->has_values = has_values;
    f->a = has_values ? a : 0.0;
    f->b = has_values ? b : 0.0;
    f->delta = delta;
    return true;
}

/* "rot": the angle between the two orientations, and both sides' quaternions to show. */
static void report__add_rot(dg_report_entity *e, const dg_qentity *a, const dg_qentity *b)
{
    if (!dg_report_entity_add_field_real(e, "rot", "deg", false, 0, 0, dg_quant_rot_angle_deg(a, b)))
        return;
    dg_report_field *f = &e->fields[e->n_fields - 1];
    f->has_quats = true;
    dg_quant_rot_quat(a, f->quat_a);
    dg_quant_rot_quat(b, f->quat_b);
}

uint32_t dg_report_entity_diff_qentity(dg_report_entity *e, const dg_qentity *a, const dg_qentity *b)
{
    static const char *const pos_names[3] = {"pos.x", "pos.y", "pos.z"};
    static const char *const vel_names[3] = {"vel.x", "vel.y", "vel.z"};
    if (!e || !a || !b)
        return 0;
    uint32_t before = e->n_fields;
    for (int i = 0; i < 3; i++)
        if (a->pos[i] != b->pos[i])
            dg_report_entity_add_field(e, pos_names[i], "m", a->pos[i], b->pos[i],
                                       (double)a->pos[i] / DG_QPOS_PER_M, (double)b->pos[i] / DG_QPOS_PER_M);
    for (int i = 0; i < 3; i++)
        if (a->vel[i] != b->vel[i])
            dg_report_entity_add_field(e, vel_names[i], "m/s", a->vel[i], b->vel[i],
                                       (double)a->vel[i] / DG_QVEL_PER_MPS, (double)b->vel[i] / DG_QVEL_PER_MPS);
    if (a->rot_largest != b->rot_largest || a->rot[0] != b->rot[0] || a->rot[1] != b->rot[1] ||
        a->rot[2] != b->rot[2])
        report__add_rot(e, a, b);
    if (a->health != b->health)
        dg_report_entity_add_field(e, "health", "%", a->health, b->health, dg_quant_health_pct(a),
                                   dg_quant_health_pct(b));
    if (a->flags != b->flags)
        dg_report_entity_add_field(e, "flags", "", a->flags, b->flags, a->flags, b->flags);
    if (a->type_index != b->type_index)
        dg_report_entity_add_field(e, "type", "", a->type_index, b->type_index, a->type_index, b->type_index);
    if (a->faction_index != b->faction_index)
        dg_report_entity_add_field(e, "faction", "", a->faction_index, b->faction_index, a->faction_index,
                                   b->faction_index);
    return e->n_fields - before;
}

/* ---- whole-tick diff from two states ----------------------------------------------------------- */

static bool report__ids_ascending(const dg_qentity *e, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (e[i].id <= e[i - 1].id)
            return false;
    return true;
}

/* One merge walk over both id-sorted arrays; visit(kind, a, b) for every entity that differs
 * (a NULL for added, b NULL for lost). Returns the counts. */
typedef struct report__counts {
    uint32_t added, lost, changed;
} report__counts;

typedef void (*report__visit_fn)(void *ctx, dg_report_entity_kind kind, const dg_qentity *a, const dg_qentity *b);

static report__counts report__merge(const dg_report_tick_states *st, report__visit_fn visit, void *ctx)
{
    report__counts n = {0, 0, 0};
    size_t i = 0, j = 0;
    while (i < st->n_a || j < st->n_b) {
        const dg_qentity *a = i < st->n_a ? &st->a[i] : NULL, *b = j < st->n_b ? &st->b[j] : NULL;
        if (a && (!b || a->id < b->id)) {
            n.lost++;
            if (visit)
                visit(ctx, DG_REPORT_ENTITY_LOST, a, NULL);
            i++;
        } else if (b && (!a || b->id < a->id)) {
            n.added++;
            if (visit)
                visit(ctx, DG_REPORT_ENTITY_ADDED, NULL, b);
            j++;
        } else {
            if (!dg_qentity_equal(a, b)) {
                n.changed++;
                if (visit)
                    visit(ctx, DG_REPORT_ENTITY_CHANGED, a, b);
            }
            i++, j++;
        }
    }
    return n;
}

typedef struct report__detail_ctx {
    dg_report_tick *t;
    const dg_report_tick_states *st;
} report__detail_ctx;

static void report__add_entity_diff(void *vctx, dg_report_entity_kind kind, const dg_qentity *a, const dg_qentity *b)
{
    report__detail_ctx *ctx = vctx;
    uint32_t id = a ? a->id : b->id;
    const char *name = ctx->st->name_of ? ctx->st->name_of(ctx->st->name_ctx, id) : NULL;
    dg_report_entity *e = dg_report_tick_add_entity(ctx->t, id, name, kind);
    if (e && kind == DG_REPORT_ENTITY_CHANGED)
        dg_report_entity_diff_qentity(e, a, b);
}

dg_status dg_report_check_add_states(dg_report_check *c, const dg_report_tick_states *st, uint32_t *n_divergent)
{
    if (n_divergent)
        *n_divergent = 0;
    if (!c || !st || (st->n_a && !st->a) || (st->n_b && !st->b) || !report__ids_ascending(st->a, st->n_a) ||
        !report__ids_ascending(st->b, st->n_b))
        return DG_E_USAGE;
    report__counts n = report__merge(st, NULL, NULL);
    uint64_t total = (uint64_t)n.added + n.lost + n.changed;
    uint32_t total32 = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    if (total == 0 && !st->events_differ)
        return DG_OK;
    dg_status rc = dg_report_check_add_divergent(c, st->tick, total32);
    if (rc != DG_OK)
        return rc;
    if (n_divergent)
        *n_divergent = total32;
    dg_report_tick *t = dg_report_add_tick(c, st->tick);
    if (!t)
        return check_of(c)->owner->nomem ? DG_E_NOMEM : DG_OK; /* beyond the detail cap: counted */
    t->added = n.added;
    t->lost = n.lost;
    t->changed = n.changed;
    t->events_differ = st->events_differ;
    t->events_a = st->events_a;
    t->events_b = st->events_b;
    report__detail_ctx ctx = {t, st};
    report__merge(st, report__add_entity_diff, &ctx);
    return check_of(c)->owner->nomem ? DG_E_NOMEM : DG_OK;
}

/* ---- trajectory ------------------------------------------------------------------------------- */

/* The trajectory add_point and set_trajectory_reason fill, NULL after one beyond the cap. */
static dg_report_trajectory *report__cur_trajectory(dg_report_check *c)
{
    if (check_of(c)->cur_traj == 0)
        return &c->trajectory;
    return check_of(c)->cur_traj <= c->n_more_trajectories ? &c->more_trajectories[check_of(c)->cur_traj - 1] : NULL;
}

static void report__start_trajectory(dg_report_trajectory *t, uint32_t entity_id, const char *name)
{
    dg_report_point *a = t->a, *b = t->b;
    memset(t, 0, sizeof *t);
    t->a = a, t->b = b; /* the point arrays are reused */
    t->present = true;
    t->entity_id = entity_id;
    t->first_tick = DG_REPORT_TICK_NONE;
    report__copy_name(t->name, sizeof t->name, name);
}

dg_status dg_report_check_set_trajectory(dg_report_check *c, uint32_t entity_id, const char *name)
{
    if (!c)
        return DG_E_USAGE;
    report__start_trajectory(&c->trajectory, entity_id, name);
    for (uint32_t i = 0; i < c->n_more_trajectories; i++) {
        free(c->more_trajectories[i].a);
        free(c->more_trajectories[i].b);
    }
    c->n_more_trajectories = 0;
    c->trajectories_cut = 0;
    check_of(c)->cur_traj = 0;
    return DG_OK;
}

dg_status dg_report_check_add_trajectory(dg_report_check *c, uint32_t entity_id, const char *name)
{
    if (!c)
        return DG_E_USAGE;
    if (!c->trajectory.present)
        return dg_report_check_set_trajectory(c, entity_id, name);
    if (1u + c->n_more_trajectories >= check_of(c)->owner->limits.trajectory_entities) {
        c->trajectories_cut++;
        check_of(c)->cur_traj = UINT32_MAX;
        return DG_OK;
    }
    if (!report__grow(check_of(c)->owner, (void **)&c->more_trajectories, &check_of(c)->cap_more_trajectories,
                      c->n_more_trajectories, sizeof *c->more_trajectories))
        return DG_E_NOMEM;
    dg_report_trajectory *t = &c->more_trajectories[c->n_more_trajectories++];
    memset(t, 0, sizeof *t);
    report__start_trajectory(t, entity_id, name);
    check_of(c)->cur_traj = c->n_more_trajectories;
    return DG_OK;
}

dg_status dg_report_check_add_point(dg_report_check *c, char side, uint64_t tick, double x, double y, double z)
{
    if (!c || !c->trajectory.present || (side != 'A' && side != 'B'))
        return DG_E_USAGE;
    dg_report_trajectory *t = report__cur_trajectory(c);
    if (!t)
        return DG_OK; /* a trajectory beyond the entity cap: counted in trajectories_cut */
    dg_report_point **arr = side == 'A' ? &t->a : &t->b;
    uint32_t *n = side == 'A' ? &t->n_a : &t->n_b;
    uint32_t *cut = side == 'A' ? &t->cut_a : &t->cut_b;
    if (*n >= check_of(c)->owner->limits.trajectory_points) {
        (*cut)++;
        return DG_OK;
    }
    if (!report__grow_derived(check_of(c)->owner, (void **)arr, *n, sizeof **arr))
        return DG_E_NOMEM;
    (*arr)[(*n)++] = (dg_report_point){tick, x, y, z};
    return DG_OK;
}

dg_status dg_report_check_set_trajectory_reason(dg_report_check *c, uint64_t first_tick, const char *field,
                                                const char *unit, double delta)
{
    if (!c || !c->trajectory.present)
        return DG_E_USAGE;
    dg_report_trajectory *t = report__cur_trajectory(c);
    if (!t)
        return DG_OK;
    t->first_tick = first_tick;
    report__copy_name(t->why_field, sizeof t->why_field, field);
    report__copy_name(t->why_unit, sizeof t->why_unit, unit);
    t->why_delta = delta;
    return DG_OK;
}

/* ---- spread ----------------------------------------------------------------------------------- */

dg_status dg_report_check_add_spread(dg_report_check *c, uint64_t tick, uint32_t entities)
{
    if (!c)
        return DG_E_USAGE;
    if (c->n_spread) {
        const dg_report_spread_point *last = &c->spread[c->n_spread - 1];
        if (tick <= last->tick || entities < last->entities)
            return DG_E_USAGE;
    }
    if (c->n_spread >= check_of(c)->owner->limits.spread_points) {
        c->spread[c->n_spread - 1] = (dg_report_spread_point){tick, entities};
        c->spread_cut++;
        return DG_OK;
    }
    if (!report__grow(check_of(c)->owner, (void **)&c->spread, &check_of(c)->cap_spread, c->n_spread, sizeof *c->spread))
        return DG_E_NOMEM;
    c->spread[c->n_spread++] = (dg_report_spread_point){tick, entities};
    return DG_OK;
}

/* ---- bisect ----------------------------------------------------------------------------------- */

static dg_status report__replace_str(dg_report *r, char **slot, const char *value)
{
    char *p = report__strdup(r, value);
    if (value && !p)
        return DG_E_NOMEM;
    free(*slot);
    *slot = p;
    return DG_OK;
}

dg_status dg_report_set_bisect(dg_report *r, const char *scenario, const char *first_bad_commit,
                               const char *subject, const char *good_rev, const char *bad_rev,
                               uint64_t first_tick)
{
    if (!r)
        return DG_E_USAGE;
    dg_report_bisect *b = &r->bisect;
    if (report__replace_str(r, &b->scenario, scenario) || report__replace_str(r, &b->first_bad_commit, first_bad_commit) ||
        report__replace_str(r, &b->subject, subject) || report__replace_str(r, &b->good_rev, good_rev) ||
        report__replace_str(r, &b->bad_rev, bad_rev))
        return DG_E_NOMEM;
    b->first_tick = first_tick;
    b->present = true;
    return DG_OK;
}

dg_status dg_report_bisect_add_step(dg_report *r, const char *commit, dg_report_verdict verdict,
                                    uint64_t first_tick)
{
    if (!r)
        return DG_E_USAGE;
    dg_report_bisect *b = &r->bisect;
    if (!report__grow(r, (void **)&b->steps, &rep_of(r)->cap_steps, b->n_steps, sizeof *b->steps))
        return DG_E_NOMEM;
    char *sha = report__strdup(r, commit ? commit : "");
    if (!sha)
        return DG_E_NOMEM;
    b->steps[b->n_steps++] = (dg_report_bisect_step){sha, verdict, first_tick};
    b->present = true;
    return DG_OK;
}

/* ---- gate shards, and restoring a report read back ------------------------------------------- */

dg_status dg_report_set_shard(dg_report *r, uint32_t index, uint32_t count, const char *corpus_id)
{
    if (!r || count == 0 || index == 0 || index > count)
        return DG_E_USAGE;
    if (corpus_id && (strlen(corpus_id) != 16 || strspn(corpus_id, "0123456789abcdef") != 16))
        return DG_E_USAGE;
    r->shard_index = index;
    r->shard_count = count;
    snprintf(r->corpus_id, sizeof r->corpus_id, "%s", corpus_id ? corpus_id : "");
    return DG_OK;
}

dg_status dg_report_check_restore_range(dg_report_check *c, const dg_report_range *rg)
{
    if (!c || !rg || rg->first > rg->last || rg->count == 0 || rg->count - 1 > rg->last - rg->first ||
        (c->n_ranges > 0 && rg->first <= c->ranges[c->n_ranges - 1].last))
        return DG_E_USAGE;
    if (!report__grow(check_of(c)->owner, (void **)&c->ranges, &check_of(c)->cap_ranges, c->n_ranges, sizeof *c->ranges))
        return DG_E_NOMEM;
    c->ranges[c->n_ranges++] = *rg;
    return DG_OK;
}

dg_status dg_report_check_restore_bucket(dg_report_check *c, const dg_report_bucket *b)
{
    if (!c || !b || b->first > b->last || (c->n_buckets > 0 && b->first <= c->buckets[c->n_buckets - 1].last))
        return DG_E_USAGE;
    if (!report__grow(check_of(c)->owner, (void **)&c->buckets, &check_of(c)->cap_buckets, c->n_buckets, sizeof *c->buckets))
        return DG_E_NOMEM;
    c->buckets[c->n_buckets++] = *b;
    return DG_OK;
}

dg_status dg_report_tick_restore_event_diff(dg_report_tick *t, const dg_report_event_diff *d)
{
    if (!t || !d || (!d->in_a && !d->in_b) ||
        (t->n_event_diffs > 0 && d->index <= t->event_diffs[t->n_event_diffs - 1].index))
        return DG_E_USAGE;
    if (!report__grow(tick_of(t)->owner, (void **)&t->event_diffs, &tick_of(t)->cap_event_diffs, t->n_event_diffs,
                      sizeof *t->event_diffs))
        return DG_E_NOMEM;
    t->event_diffs[t->n_event_diffs++] = *d;
    return DG_OK;
}

/* ---- reading the model ------------------------------------------------------------------------ */

/* PASS < WARN < FAIL < ERROR. WARN sits above PASS so a sub-quantum drift shows in the worst-of,
 * and below FAIL so a real divergence is never hidden behind it. */
static int report__rank(dg_report_status s)
{
    switch (s) {
    case DG_REPORT_PASS: return 0;
    case DG_REPORT_WARN: return 1;
    case DG_REPORT_FAIL: return 2;
    case DG_REPORT_ERROR: return 3;
    }
    return 3; /* the struct is public: an unknown value counts as error */
}

dg_report_status dg_report_status_worse(dg_report_status a, dg_report_status b)
{
    /* ERROR outranks FAIL: a check that could not run says less than one that failed, and hiding
     * it behind a FAIL would let a broken setup pass unnoticed once the failure is fixed. */
    int ra = report__rank(a), rb = report__rank(b);
    dg_report_status w = rb > ra ? b : a;
    return report__rank(w) == 3 ? DG_REPORT_ERROR : w;
}

static dg_report_status report__worse(dg_report_status a, dg_report_status b)
{
    return dg_report_status_worse(a, b);
}

dg_report_status dg_report_scenario_status(const dg_report_scenario *s)
{
    dg_report_status st = DG_REPORT_PASS;
    for (uint32_t i = 0; s && i < s->n_checks; i++)
        st = report__worse(st, s->checks[i]->status);
    return st;
}

dg_report_status dg_report_overall_status(const dg_report *r)
{
    dg_report_status st = DG_REPORT_PASS;
    for (uint32_t i = 0; r && i < r->n_scenarios; i++)
        st = report__worse(st, dg_report_scenario_status(r->scenarios[i]));
    if (r && r->bisect.present && r->bisect.first_bad_commit)
        st = report__worse(st, DG_REPORT_FAIL);
    return st;
}

const char *dg_report_status_name(dg_report_status s)
{
    switch (s) {
    case DG_REPORT_PASS: return "pass";
    case DG_REPORT_WARN: return "warn";
    case DG_REPORT_FAIL: return "fail";
    case DG_REPORT_ERROR: return "error";
    }
    return "error";
}

const char *dg_report_entity_kind_name(dg_report_entity_kind k)
{
    switch (k) {
    case DG_REPORT_ENTITY_CHANGED: return "changed";
    case DG_REPORT_ENTITY_ADDED: return "added";
    case DG_REPORT_ENTITY_LOST: return "lost";
    }
    return "changed";
}

static const char *const report__kind_names[] = {"text", "json", "junit", "markdown", "html"};

const char *dg_report_kind_name(dg_report_kind k)
{
    return (unsigned)k < 5 ? report__kind_names[k] : "text";
}

dg_status dg_report_kind_from_name(const char *name, dg_report_kind *out)
{
    if (!name || !out)
        return DG_E_USAGE;
    for (int i = 0; i < 5; i++)
        if (strcmp(name, report__kind_names[i]) == 0) {
            *out = (dg_report_kind)i;
            return DG_OK;
        }
    if (strcmp(name, "md") == 0 || strcmp(name, "xml") == 0) {
        *out = name[0] == 'm' ? DG_REPORT_MARKDOWN : DG_REPORT_JUNIT;
        return DG_OK;
    }
    return DG_E_USAGE;
}
