/* reports/report_json.c — the report room's machine-readable copy: JSON schema version 2
 * (docs/REPORT-SCHEMA.md, docs/report-schema.json). Keys in a fixed order, integers as integers,
 * doubles in their shortest exact form, NaN/inf as null, every string escaped. */
#include <string.h>

#include "report_internal.h"

#define JW_MAX_DEPTH 16

typedef struct jw {
    dg_rsink *s;
    int depth;
    bool first[JW_MAX_DEPTH];
    bool flat[JW_MAX_DEPTH]; /* leaf objects (a field, a range, a point) stay on one line */
} jw;

static void jw__indent(jw *w)
{
    dg_rep__sink_put(w->s, "\n", 1);
    for (int i = 0; i < w->depth; i++)
        dg_rep__sink_put(w->s, "  ", 2);
}

static void jw__sep(jw *w)
{
    bool first = w->first[w->depth];
    w->first[w->depth] = false;
    if (w->flat[w->depth]) {
        if (!first)
            dg_rep__sink_put(w->s, ", ", 2);
        return;
    }
    if (!first)
        dg_rep__sink_put(w->s, ",", 1);
    jw__indent(w);
}

static void jw__key(jw *w, const char *key)
{
    jw__sep(w);
    if (key) {
        dg_rep__json_str(w->s, key);
        dg_rep__sink_put(w->s, ": ", 2);
    }
}

static void jw__open(jw *w, const char *key, char bracket, bool flat)
{
    jw__key(w, key);
    dg_rep__sink_put(w->s, &bracket, 1);
    w->depth++; /* the model nests 11 levels at most: well under JW_MAX_DEPTH */
    w->first[w->depth] = true;
    w->flat[w->depth] = flat || w->flat[w->depth - 1];
}

static void jw_open(jw *w, const char *key, char bracket)
{
    jw__open(w, key, bracket, false);
}

static void jw_open_flat(jw *w, const char *key, char bracket)
{
    jw__open(w, key, bracket, true);
}

static void jw_close(jw *w, char bracket)
{
    bool empty = w->first[w->depth], flat = w->flat[w->depth];
    w->depth--;
    if (!empty && !flat)
        jw__indent(w);
    dg_rep__sink_put(w->s, &bracket, 1);
}

static void jw_str(jw *w, const char *key, const char *v)
{
    jw__key(w, key);
    dg_rep__json_str(w->s, v);
}

static void jw_i64(jw *w, const char *key, int64_t v)
{
    jw__key(w, key);
    dg_rep__sink_printf(w->s, "%lld", (long long)v);
}

static void jw_u64(jw *w, const char *key, uint64_t v)
{
    jw__key(w, key);
    dg_rep__sink_printf(w->s, "%llu", (unsigned long long)v);
}

static void jw_tick(jw *w, const char *key, uint64_t tick)
{
    if (tick == DG_REPORT_TICK_NONE) {
        jw__key(w, key);
        dg_rep__sink_puts(w->s, "null");
    } else {
        jw_u64(w, key, tick);
    }
}

static void jw_bool(jw *w, const char *key, bool v)
{
    jw__key(w, key);
    dg_rep__sink_puts(w->s, v ? "true" : "false");
}

static void jw_double(jw *w, const char *key, double v)
{
    jw__key(w, key);
    dg_rep__double(w->s, v, true);
}

static void jw_null(jw *w, const char *key)
{
    jw__key(w, key);
    dg_rep__sink_puts(w->s, "null");
}

/* ---- pieces ----------------------------------------------------------------------------------- */

static void json__field(jw *w, const dg_report_field *f)
{
    jw_open_flat(w, NULL, '{');
    jw_str(w, "field", f->name);
    jw_str(w, "unit", f->unit);
    if (f->has_quanta) {
        jw_i64(w, "aQ", f->a_q);
        jw_i64(w, "bQ", f->b_q);
        jw_i64(w, "deltaQ", f->delta_q);
    } else {
        jw_null(w, "aQ");
        jw_null(w, "bQ");
        jw_null(w, "deltaQ");
    }
    if (f->has_values) {
        jw_double(w, "a", f->a);
        jw_double(w, "b", f->b);
    } else {
        jw_null(w, "a");
        jw_null(w, "b");
    }
    jw_double(w, "delta", f->delta);
    if (f->has_text) { /* a declared field: both values as its schema shows them */
        jw_str(w, "aText", f->a_text);
        jw_str(w, "bText", f->b_text);
    }
    if (f->has_quats) { /* "rot" only: both orientations, w x y z */
        const double *q[2] = {f->quat_a, f->quat_b};
        for (int side = 0; side < 2; side++) {
            jw_open_flat(w, side ? "quatB" : "quatA", '[');
            for (int i = 0; i < 4; i++)
                jw_double(w, NULL, q[side][i]);
            jw_close(w, ']');
        }
    }
    jw_close(w, '}');
}

static void json__entity(jw *w, const dg_report_entity *e)
{
    jw_open(w, NULL, '{');
    jw_u64(w, "id", e->id);
    if (e->name[0])
        jw_str(w, "name", e->name);
    else
        jw_null(w, "name");
    jw_str(w, "kind", dg_report_entity_kind_name(e->kind));
    jw_open(w, "fields", '[');
    for (uint32_t i = 0; i < e->n_fields; i++)
        json__field(w, &e->fields[i]);
    jw_close(w, ']');
    jw_u64(w, "fieldsCut", e->fields_cut);
    jw_close(w, '}');
}

static void json__event(jw *w, const char *key, const dg_report_event *e, bool present)
{
    if (!present) {
        jw_null(w, key);
        return;
    }
    jw_open_flat(w, key, '{');
    jw_u64(w, "kind", e->kind);
    jw_str(w, "kindName", dg_report_event_kind_name(e->kind));
    jw_u64(w, "a", e->a);
    jw_u64(w, "b", e->b);
    jw_u64(w, "c", e->c);
    jw_u64(w, "d", e->d);
    jw_str(w, "text", e->text);
    jw_u64(w, "textBytes", e->text_len);
    jw_bool(w, "textCut", strlen(e->text) < e->text_len);
    jw_close(w, '}');
}

static void json__event_diff(jw *w, const dg_report_event_diff *d)
{
    static const char *const names[] = {"kind", "a", "b", "c", "d"};
    jw_open_flat(w, NULL, '{');
    jw_u64(w, "index", d->index);
    json__event(w, "a", &d->a, d->in_a);
    json__event(w, "b", &d->b, d->in_b);
    jw_open_flat(w, "differ", '[');
    if (d->in_a && d->in_b) {
        uint32_t va[5] = {d->a.kind, d->a.a, d->a.b, d->a.c, d->a.d};
        uint32_t vb[5] = {d->b.kind, d->b.a, d->b.b, d->b.c, d->b.d};
        for (int i = 0; i < 5; i++)
            if (va[i] != vb[i])
                jw_str(w, NULL, names[i]);
        if (d->text_diff_at != UINT32_MAX)
            jw_str(w, NULL, "text");
    }
    jw_close(w, ']');
    if (d->text_diff_at != UINT32_MAX)
        jw_u64(w, "textDiffersAt", d->text_diff_at);
    else
        jw_null(w, "textDiffersAt");
    jw_close(w, '}');
}

static void json__tick(jw *w, const dg_report_tick *t)
{
    jw_open(w, NULL, '{');
    jw_u64(w, "tick", t->tick);
    jw_u64(w, "entitiesAdded", t->added);
    jw_u64(w, "entitiesLost", t->lost);
    jw_u64(w, "entitiesChanged", t->changed);
    jw_open(w, "events", '{');
    jw_bool(w, "differ", t->events_differ);
    jw_u64(w, "countA", t->events_a);
    jw_u64(w, "countB", t->events_b);
    jw_open(w, "diffs", '[');
    for (uint32_t i = 0; i < t->n_event_diffs; i++)
        json__event_diff(w, &t->event_diffs[i]);
    jw_close(w, ']');
    jw_u64(w, "diffsCut", t->event_diffs_cut);
    jw_close(w, '}');
    jw_open(w, "entities", '[');
    for (uint32_t i = 0; i < t->n_entities; i++)
        json__entity(w, &t->entities[i]);
    jw_close(w, ']');
    jw_u64(w, "entitiesCut", t->entities_cut);
    jw_close(w, '}');
}

static void json__points(jw *w, const char *key, const dg_report_point *p, uint32_t n)
{
    jw_open(w, key, '[');
    for (uint32_t i = 0; i < n; i++) {
        jw_open_flat(w, NULL, '{');
        jw_u64(w, "tick", p[i].tick);
        jw_double(w, "x", p[i].x);
        jw_double(w, "y", p[i].y);
        jw_double(w, "z", p[i].z);
        jw_close(w, '}');
    }
    jw_close(w, ']');
}

static void json__trajectory(jw *w, const char *key, const dg_report_trajectory *t)
{
    if (!t->present) {
        jw_null(w, key);
        return;
    }
    jw_open(w, key, '{');
    jw_u64(w, "entityId", t->entity_id);
    if (t->name[0])
        jw_str(w, "name", t->name);
    else
        jw_null(w, "name");
    json__points(w, "a", t->a, t->n_a);
    json__points(w, "b", t->b, t->n_b);
    jw_u64(w, "pointsCutA", t->cut_a);
    jw_u64(w, "pointsCutB", t->cut_b);
    jw_tick(w, "firstTick", t->first_tick);
    if (t->why_field[0]) {
        jw_open_flat(w, "largest", '{');
        jw_str(w, "field", t->why_field);
        jw_str(w, "unit", t->why_unit);
        jw_double(w, "delta", t->why_delta);
        jw_close(w, '}');
    } else {
        jw_null(w, "largest");
    }
    jw_close(w, '}');
}

static void json__more_trajectories(jw *w, const dg_report_check *c)
{
    jw_open(w, "moreTrajectories", '[');
    for (uint32_t i = 0; i < c->n_more_trajectories; i++)
        json__trajectory(w, NULL, &c->more_trajectories[i]);
    jw_close(w, ']');
    jw_u64(w, "trajectoriesCut", c->trajectories_cut);
}

static void json__spread(jw *w, const dg_report_check *c)
{
    jw_open(w, "spread", '{');
    jw_open(w, "steps", '[');
    for (uint32_t i = 0; i < c->n_spread; i++) {
        jw_open_flat(w, NULL, '{');
        jw_u64(w, "tick", c->spread[i].tick);
        jw_u64(w, "entities", c->spread[i].entities);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_u64(w, "stepsCut", c->spread_cut);
    jw_close(w, '}');
}

static void json__timeline(jw *w, const dg_report_check *c)
{
    jw_open(w, "timeline", '{');
    jw_u64(w, "bucketTicks", c->bucket_width);
    jw_open(w, "buckets", '[');
    for (uint32_t i = 0; i < c->n_buckets; i++) {
        const dg_report_bucket *b = &c->buckets[i];
        jw_open_flat(w, NULL, '{');
        jw_u64(w, "first", b->first);
        jw_u64(w, "last", b->last);
        jw_u64(w, "ticks", b->ticks);
        jw_u64(w, "maxEntities", b->entities);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_close(w, '}');
}

static void json__check(jw *w, const dg_report_check *c)
{
    jw_open(w, NULL, '{');
    jw_str(w, "name", c->name);
    jw_str(w, "status", dg_report_status_name(c->status));
    jw_str(w, "message", c->message);
    jw_double(w, "durationSeconds", c->duration_s);
    jw_tick(w, "firstDivergentTick", c->first_tick);
    jw_tick(w, "firstRawDivergentTick", c->first_raw_tick);
    jw_bool(w, "subQuantum", c->sub_quantum);
    jw_u64(w, "divergentTicks", c->divergent_ticks);
    jw_open(w, "ranges", '[');
    for (uint32_t i = 0; i < c->n_ranges; i++) {
        jw_open_flat(w, NULL, '{');
        jw_u64(w, "first", c->ranges[i].first);
        jw_u64(w, "last", c->ranges[i].last);
        jw_u64(w, "count", c->ranges[i].count);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_bool(w, "rangesCoalesced", c->ranges_coalesced);
    jw_open(w, "ticks", '[');
    for (uint32_t i = 0; i < c->n_ticks; i++)
        json__tick(w, c->ticks[i]);
    jw_close(w, ']');
    jw_u64(w, "ticksCut", c->ticks_cut);
    json__timeline(w, c);
    json__trajectory(w, "trajectory", &c->trajectory);
    json__more_trajectories(w, c);
    json__spread(w, c);
    jw_open(w, "values", '[');
    for (uint32_t i = 0; i < c->n_values; i++) {
        jw_open_flat(w, NULL, '{');
        jw_str(w, "field", c->values[i].field);
        jw_str(w, "a", c->values[i].a);
        jw_str(w, "b", c->values[i].b);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_u64(w, "valuesCut", c->values_cut);
    jw_open(w, "details", '[');
    for (uint32_t i = 0; i < c->n_details; i++)
        jw_str(w, NULL, c->details[i]);
    jw_close(w, ']');
    jw_u64(w, "detailsCut", c->details_cut);
    jw_close(w, '}');
}

static void json__scenario(jw *w, const dg_report_scenario *sc)
{
    jw_open(w, NULL, '{');
    jw_str(w, "name", sc->name);
    jw_str(w, "format", sc->format);
    jw_str(w, "status", dg_report_status_name(dg_report_scenario_status(sc)));
    jw_u64(w, "ticks", sc->ticks);
    jw_u64(w, "entityTicks", sc->entity_ticks);
    jw_u64(w, "fileBytes", sc->file_bytes);
    jw_open(w, "checks", '[');
    for (uint32_t i = 0; i < sc->n_checks; i++)
        json__check(w, sc->checks[i]);
    jw_close(w, ']');
    jw_close(w, '}');
}

static const char *json__verdict(dg_report_verdict v)
{
    return v == DG_REPORT_GOOD ? "good" : v == DG_REPORT_SKIP ? "skip" : "bad";
}

static void json__bisect(jw *w, const dg_report_bisect *b)
{
    if (!b->present) {
        jw_null(w, "bisect");
        return;
    }
    jw_open(w, "bisect", '{');
    jw_str(w, "scenario", b->scenario);
    jw_str(w, "firstBadCommit", b->first_bad_commit);
    jw_str(w, "subject", b->subject);
    jw_str(w, "goodRev", b->good_rev);
    jw_str(w, "badRev", b->bad_rev);
    jw_tick(w, "firstDivergentTick", b->first_tick);
    jw_open(w, "steps", '[');
    for (uint32_t i = 0; i < b->n_steps; i++) {
        jw_open_flat(w, NULL, '{');
        jw_str(w, "commit", b->steps[i].commit);
        jw_str(w, "verdict", json__verdict(b->steps[i].verdict));
        jw_tick(w, "firstDivergentTick", b->steps[i].first_tick);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_close(w, '}');
}

static void json__summary(jw *w, const dg_report *r)
{
    dg_rep__tally t;
    dg_rep__count(r, &t);
    jw_open_flat(w, "summary", '{');
    jw_u64(w, "scenarios", t.scenarios);
    jw_u64(w, "scenariosPassed", t.sc_pass);
    jw_u64(w, "scenariosWarned", t.sc_warn);
    jw_u64(w, "scenariosFailed", t.sc_fail);
    jw_u64(w, "scenariosErrored", t.sc_error);
    jw_u64(w, "checks", t.checks);
    jw_u64(w, "checksPassed", t.ck_pass);
    jw_u64(w, "checksWarned", t.ck_warn);
    jw_u64(w, "checksFailed", t.ck_fail);
    jw_u64(w, "checksErrored", t.ck_error);
    jw_close(w, '}');
}

static void json__limits(jw *w, const dg_report_limits *l)
{
    jw_open_flat(w, "limits", '{');
    jw_u64(w, "ticksPerCheck", l->ticks_per_check);
    jw_u64(w, "entitiesPerTick", l->entities_per_tick);
    jw_u64(w, "fieldsPerEntity", DG_REPORT_FIELDS_MAX);
    jw_u64(w, "rangesPerCheck", l->ranges_per_check);
    jw_u64(w, "timelineBuckets", l->timeline_buckets);
    jw_u64(w, "trajectoryPoints", l->trajectory_points);
    jw_u64(w, "eventsPerTick", l->events_per_tick);
    jw_u64(w, "valuesPerCheck", l->values_per_check);
    jw_u64(w, "detailsPerCheck", l->details_per_check);
    jw_u64(w, "trajectoryEntities", l->trajectory_entities);
    jw_u64(w, "spreadPoints", l->spread_points);
    jw_close(w, '}');
}

/* A gate run's shard and corpus id (detgate merge checks a set of shard reports with them). */
static void json__shard(jw *w, const dg_report *r)
{
    if (r->shard_count == 0) {
        jw_null(w, "shard");
    } else {
        jw_open_flat(w, "shard", '{');
        jw_u64(w, "index", r->shard_index);
        jw_u64(w, "count", r->shard_count);
        jw_close(w, '}');
    }
    if (r->corpus_id[0])
        jw_str(w, "corpusId", r->corpus_id);
    else
        jw_null(w, "corpusId");
    if (r->note)
        jw_str(w, "note", r->note);
    else
        jw_null(w, "note");
}

void dg_rep__json(const dg_report *r, const dg_report_opts *o, dg_rsink *s)
{
    (void)o;
    jw w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.first[0] = true;
    dg_rep__sink_put(s, "{", 1);
    w.depth = 1;
    w.first[1] = true;
    jw_u64(&w, "schemaVersion", DG_REPORT_SCHEMA_VERSION);
    jw_open_flat(&w, "tool", '{');
    jw_str(&w, "name", "detgate");
    jw_str(&w, "version", r->tool_version);
    jw_close(&w, '}');
    jw_str(&w, "command", r->command);
    jw_i64(&w, "startedUnix", r->started_unix);
    jw_double(&w, "durationSeconds", r->duration_s);
    jw_str(&w, "status", dg_report_status_name(dg_report_overall_status(r)));
    jw_bool(&w, "incomplete", r->nomem);
    json__summary(&w, r);
    json__limits(&w, &r->limits);
    json__shard(&w, r);
    jw_open(&w, "scenarios", '[');
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        json__scenario(&w, r->scenarios[i]);
    jw_close(&w, ']');
    json__bisect(&w, &r->bisect);
    jw_close(&w, '}');
    dg_rep__sink_put(s, "\n", 1);
}
