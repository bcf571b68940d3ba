/* harness/cli_merge.c — `detgate merge REPORT.json...`: the JSON reports of a sharded gate run read
 * back (docs/REPORT-SCHEMA.md) into one dg_report and rendered in every format. A set is taken only
 * whole: one corpusId, one shard count N, the indices exactly 1..N, each once; anything else is
 * bad input (exit 2) and writes nothing. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ---- reading one report: typed getters that name where a value was wrong --------------------------- */

typedef struct mr {
    const char *file;
    bool bad;      /* the input is not a report merge can take (exit 2) */
    bool nomem;    /* the merged report could not grow (exit 125) */
    char msg[700]; /* the first problem, "FILE: where: what" */
} mr;

static void mr_fail(mr *m, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void mr_fail(mr *m, const char *at, const char *fmt, ...)
{
    if (m->bad || m->nomem)
        return;
    m->bad = true;
    int k = snprintf(m->msg, sizeof m->msg, "%s: %s%s", m->file, at[0] ? at : "top level", ": ");
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < sizeof m->msg)
        vsnprintf(m->msg + k, sizeof m->msg - (size_t)k, fmt, ap);
    va_end(ap);
}

static bool mr_ok(const mr *m) { return !m->bad && !m->nomem; }

static const char *json_kind(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* obj[key], which must be present; NULL (and the error) when it is missing. */
static json_t *mr_get(mr *m, json_t *obj, const char *at, const char *key)
{
    json_t *v = mr_ok(m) ? json_object_get(obj, key) : NULL;
    if (mr_ok(m) && !v)
        mr_fail(m, at, "key \"%s\" missing (not a detgate report of schema version %d?)", key,
                DG_REPORT_SCHEMA_VERSION);
    return v;
}

static json_t *mr_typed(mr *m, json_t *obj, const char *at, const char *key, json_type type, bool nullable)
{
    json_t *v = mr_get(m, obj, at, key);
    if (!v || (nullable && json_is_null(v)))
        return NULL;
    if (json_typeof(v) != type && !(type == JSON_TRUE && json_is_boolean(v))) {
        static const char *const names[] = {"an object", "an array", "a string", "an integer", "a number",
                                            "a boolean", "a boolean", "null"};
        mr_fail(m, at, "\"%s\": expected %s%s, found %s", key, names[type], nullable ? " or null" : "",
                json_kind(v));
        return NULL;
    }
    return v;
}

static uint64_t mr_u64(mr *m, json_t *obj, const char *at, const char *key)
{
    json_t *v = mr_typed(m, obj, at, key, JSON_INTEGER, false);
    if (v && json_integer_value(v) < 0)
        mr_fail(m, at, "\"%s\": expected a count (>= 0), found %lld", key, (long long)json_integer_value(v));
    return v && mr_ok(m) ? (uint64_t)json_integer_value(v) : 0;
}

static uint32_t mr_u32(mr *m, json_t *obj, const char *at, const char *key)
{
    uint64_t v = mr_u64(m, obj, at, key);
    if (v > UINT32_MAX)
        mr_fail(m, at, "\"%s\": expected at most %u, found %llu", key, UINT32_MAX, (unsigned long long)v);
    return (uint32_t)v;
}

static uint64_t mr_tick(mr *m, json_t *obj, const char *at, const char *key)
{
    json_t *v = mr_get(m, obj, at, key);
    return v && json_is_null(v) ? DG_REPORT_TICK_NONE : mr_u64(m, obj, at, key);
}

static int64_t mr_i64(mr *m, json_t *obj, const char *at, const char *key, bool *present)
{
    json_t *v = mr_typed(m, obj, at, key, JSON_INTEGER, true);
    *present = v != NULL;
    return v ? (int64_t)json_integer_value(v) : 0;
}

/* A number; null (a non-finite value when it was written) reads as NaN, *present false. */
static double mr_real(mr *m, json_t *obj, const char *at, const char *key, bool *present)
{
    json_t *v = mr_get(m, obj, at, key);
    *present = false;
    if (!v || json_is_null(v))
        return (double)NAN;
    if (!json_is_number(v)) {
        mr_fail(m, at, "\"%s\": expected a number or null, found %s", key, json_kind(v));
        return 0;
    }
    *present = true;
    return json_number_value(v);
}

static bool mr_bool(mr *m, json_t *obj, const char *at, const char *key)
{
    json_t *v = mr_typed(m, obj, at, key, JSON_TRUE, false);
    return v && json_is_true(v);
}

static const char *mr_str(mr *m, json_t *obj, const char *at, const char *key, bool nullable)
{
    json_t *v = mr_typed(m, obj, at, key, JSON_STRING, nullable);
    return v ? json_string_value(v) : NULL;
}

static json_t *mr_array(mr *m, json_t *obj, const char *at, const char *key)
{
    return mr_typed(m, obj, at, key, JSON_ARRAY, false);
}

/* The array's i-th item, which must be an object. */
static json_t *mr_item(mr *m, json_t *arr, size_t i, const char *at)
{
    json_t *v = json_array_get(arr, i);
    if (!json_is_object(v))
        mr_fail(m, at, "expected an object, found %s", json_kind(v));
    return mr_ok(m) ? v : NULL;
}

static dg_report_status mr_status(mr *m, json_t *obj, const char *at)
{
    const char *s = mr_str(m, obj, at, "status", false);
    for (int k = DG_REPORT_PASS; s && k <= DG_REPORT_WARN; k++)
        if (strcmp(s, dg_report_status_name((dg_report_status)k)) == 0)
            return (dg_report_status)k;
    if (s)
        mr_fail(m, at, "\"status\": expected \"pass\", \"warn\", \"fail\" or \"error\", found \"%s\"", s);
    return DG_REPORT_ERROR;
}

/* A builder call that could not allocate. */
static void mr_nomem(mr *m)
{
    if (mr_ok(m)) {
        m->nomem = true;
        snprintf(m->msg, sizeof m->msg, "out of memory while merging %s", m->file);
    }
}

/* The path of a child item for messages: AT.KEY or AT.KEY[I] (i == SIZE_MAX: no index); a path too
 * long for out ends in "...". */
static void at_child(char *out, size_t cap, const char *at, const char *key, size_t i)
{
    int k = i == SIZE_MAX ? snprintf(out, cap, "%s.%s", at, key) : snprintf(out, cap, "%s.%s[%zu]", at, key, i);
    if (k < 0 || (size_t)k >= cap)
        snprintf(out + cap - 4, 4, "...");
}

/* ---- rebuilding a scenario, check by check ----------------------------------------------------------- */

/* "rot" may carry both orientations: "quatA", "quatB", four numbers each (or neither). */
static void read_quats(mr *m, dg_report_field *f, json_t *o, const char *at)
{
    json_t *qa = json_object_get(o, "quatA"), *qb = json_object_get(o, "quatB");
    if (!qa && !qb)
        return;
    json_t *q[2] = {qa, qb};
    double *out[2] = {f->quat_a, f->quat_b};
    for (int side = 0; side < 2 && mr_ok(m); side++) {
        const char *key = side ? "quatB" : "quatA";
        if (!json_is_array(q[side]) || json_array_size(q[side]) != 4) {
            mr_fail(m, at, "\"%s\": expected an array of 4 numbers (w, x, y, z), found %s", key,
                    q[side] ? json_kind(q[side]) : "nothing");
            return;
        }
        for (size_t i = 0; i < 4; i++) {
            json_t *v = json_array_get(q[side], i);
            if (!json_is_number(v) && !json_is_null(v)) {
                mr_fail(m, at, "\"%s\"[%zu]: expected a number or null, found %s", key, i, json_kind(v));
                return;
            }
            out[side][i] = json_is_null(v) ? (double)NAN : json_number_value(v);
        }
    }
    f->has_quats = true;
}

/* A declared field's "aText" / "bText" (both or neither): its values as the schema shows them. */
static void read_texts(mr *m, dg_report_field *f, json_t *o, const char *at)
{
    json_t *ta = json_object_get(o, "aText"), *tb = json_object_get(o, "bText");
    if (!ta && !tb)
        return;
    if (!json_is_string(ta) || !json_is_string(tb)) {
        mr_fail(m, at, "\"aText\" and \"bText\": expected both, as strings, found %s and %s",
                ta ? json_kind(ta) : "nothing", tb ? json_kind(tb) : "nothing");
        return;
    }
    snprintf(f->a_text, sizeof f->a_text, "%s", json_string_value(ta));
    snprintf(f->b_text, sizeof f->b_text, "%s", json_string_value(tb));
    f->has_text = true;
}

static void read_field(mr *m, dg_report_entity *e, json_t *o, const char *at)
{
    const char *name = mr_str(m, o, at, "field", false), *unit = mr_str(m, o, at, "unit", false);
    bool has_a, has_b, has_d, q_a, q_b, q_d;
    int64_t aq = mr_i64(m, o, at, "aQ", &q_a), bq = mr_i64(m, o, at, "bQ", &q_b), dq = mr_i64(m, o, at, "deltaQ", &q_d);
    double a = mr_real(m, o, at, "a", &has_a), b = mr_real(m, o, at, "b", &has_b),
           d = mr_real(m, o, at, "delta", &has_d);
    if (!mr_ok(m))
        return;
    if (!dg_report_entity_add_field_real(e, name, unit, has_a && has_b, a, b, d)) {
        mr_fail(m, at, "more than %d fields in one entity", DG_REPORT_FIELDS_MAX);
        return;
    }
    dg_report_field *f = &e->fields[e->n_fields - 1];
    f->has_quanta = q_a && q_b && q_d;
    f->a_q = aq;
    f->b_q = bq;
    f->delta_q = dq;
    read_quats(m, f, o, at);
    read_texts(m, f, o, at);
}

static dg_report_entity_kind read_kind(mr *m, json_t *o, const char *at)
{
    const char *s = mr_str(m, o, at, "kind", false);
    for (int k = DG_REPORT_ENTITY_CHANGED; s && k <= DG_REPORT_ENTITY_LOST; k++)
        if (strcmp(s, dg_report_entity_kind_name((dg_report_entity_kind)k)) == 0)
            return (dg_report_entity_kind)k;
    if (s)
        mr_fail(m, at, "\"kind\": expected \"changed\", \"added\" or \"lost\", found \"%s\"", s);
    return DG_REPORT_ENTITY_CHANGED;
}

static void read_entity(mr *m, dg_report_tick *t, json_t *o, const char *at)
{
    uint32_t id = mr_u32(m, o, at, "id");
    const char *name = mr_str(m, o, at, "name", true);
    dg_report_entity_kind kind = read_kind(m, o, at);
    json_t *fields = mr_array(m, o, at, "fields");
    uint32_t cut = mr_u32(m, o, at, "fieldsCut");
    if (!mr_ok(m))
        return;
    dg_report_entity *e = dg_report_tick_add_entity(t, id, name, kind);
    if (!e) {
        mr_nomem(m);
        return;
    }
    for (size_t i = 0; mr_ok(m) && i < json_array_size(fields); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "fields", i);
        json_t *f = mr_item(m, fields, i, at2);
        if (f)
            read_field(m, e, f, at2);
    }
    e->fields_cut = cut;
}

/* A restore call's answer: DG_E_USAGE is the input's fault (out of order), anything else memory's. */
static void restored(mr *m, dg_status st, const char *at, const char *what)
{
    if (st == DG_E_USAGE)
        mr_fail(m, at, "%s out of order or empty (first > last, or not after the one before)", what);
    else if (st != DG_OK)
        mr_nomem(m);
}

static void read_event(mr *m, dg_report_event *e, json_t *o, const char *at)
{
    uint32_t kind = mr_u32(m, o, at, "kind");
    e->a = mr_u32(m, o, at, "a");
    e->b = mr_u32(m, o, at, "b");
    uint32_t c = mr_u32(m, o, at, "c"), d = mr_u32(m, o, at, "d");
    const char *text = mr_str(m, o, at, "text", false);
    e->text_len = mr_u32(m, o, at, "textBytes");
    if (!mr_ok(m))
        return;
    if (kind > UINT8_MAX || c > UINT16_MAX || d > UINT16_MAX) {
        mr_fail(m, at, "event field out of range (kind <= 255, c and d <= 65535)");
        return;
    }
    e->kind = (uint8_t)kind;
    e->c = (uint16_t)c;
    e->d = (uint16_t)d;
    snprintf(e->text, sizeof e->text, "%s", text);
}

/* One side of an event position: an event object, or null when that side has none there. */
static bool read_event_side(mr *m, json_t *o, const char *at, const char *key, dg_report_event *e)
{
    json_t *v = mr_typed(m, o, at, key, JSON_OBJECT, true);
    if (!v)
        return false;
    char at2[256];
    at_child(at2, sizeof at2, at, key, SIZE_MAX);
    read_event(m, e, v, at2);
    return true;
}

static void read_event_diffs(mr *m, dg_report_tick *t, json_t *ev, const char *at)
{
    char at1[256];
    at_child(at1, sizeof at1, at, "events", SIZE_MAX);
    json_t *arr = ev ? mr_array(m, ev, at1, "diffs") : NULL;
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at1, "diffs", i);
        json_t *o = mr_item(m, arr, i, at2);
        dg_report_event_diff d;
        memset(&d, 0, sizeof d);
        if (!o)
            break;
        d.index = mr_u32(m, o, at2, "index");
        d.in_a = read_event_side(m, o, at2, "a", &d.a);
        d.in_b = read_event_side(m, o, at2, "b", &d.b);
        json_t *tda = mr_get(m, o, at2, "textDiffersAt");
        d.text_diff_at = tda && !json_is_null(tda) ? mr_u32(m, o, at2, "textDiffersAt") : UINT32_MAX;
        if (mr_ok(m))
            restored(m, dg_report_tick_restore_event_diff(t, &d), at2, "event position");
    }
    if (ev && mr_ok(m))
        t->event_diffs_cut = mr_u32(m, ev, at1, "diffsCut");
}

static void read_tick(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    uint64_t tick = mr_u64(m, o, at, "tick");
    uint32_t added = mr_u32(m, o, at, "entitiesAdded"), lost = mr_u32(m, o, at, "entitiesLost"),
             changed = mr_u32(m, o, at, "entitiesChanged");
    json_t *ev = mr_typed(m, o, at, "events", JSON_OBJECT, false);
    bool differ = ev && mr_bool(m, ev, at, "differ");
    uint32_t ea = ev ? mr_u32(m, ev, at, "countA") : 0, eb = ev ? mr_u32(m, ev, at, "countB") : 0;
    json_t *ents = mr_array(m, o, at, "entities");
    uint32_t cut = mr_u32(m, o, at, "entitiesCut");
    if (!mr_ok(m))
        return;
    dg_report_tick *t = dg_report_add_tick(c, tick);
    if (!t) {
        mr_nomem(m); /* the merged caps are the largest of the shards': a tick can only be refused by malloc */
        return;
    }
    t->added = added;
    t->lost = lost;
    t->changed = changed;
    t->events_differ = differ;
    t->events_a = ea;
    t->events_b = eb;
    for (size_t i = 0; mr_ok(m) && i < json_array_size(ents); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "entities", i);
        json_t *e = mr_item(m, ents, i, at2);
        if (e)
            read_entity(m, t, e, at2);
    }
    t->entities_cut = cut;
    read_event_diffs(m, t, ev, at);
}

static void read_ranges(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    json_t *arr = mr_array(m, o, at, "ranges");
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "ranges", i);
        json_t *r = mr_item(m, arr, i, at2);
        dg_report_range rg = {r ? mr_u64(m, r, at2, "first") : 0, r ? mr_u64(m, r, at2, "last") : 0,
                              r ? mr_u64(m, r, at2, "count") : 0};
        if (mr_ok(m))
            restored(m, dg_report_check_restore_range(c, &rg), at2, "range");
    }
}

static void read_timeline(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    char at1[256];
    at_child(at1, sizeof at1, at, "timeline", SIZE_MAX);
    json_t *tl = mr_typed(m, o, at, "timeline", JSON_OBJECT, false);
    uint64_t width = tl ? mr_u64(m, tl, at1, "bucketTicks") : 1;
    json_t *arr = tl ? mr_array(m, tl, at1, "buckets") : NULL;
    if (mr_ok(m) && width == 0)
        mr_fail(m, at1, "\"bucketTicks\": expected at least 1, found 0");
    c->bucket_width = width;
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at1, "buckets", i);
        json_t *b = mr_item(m, arr, i, at2);
        dg_report_bucket bk = {0, 0, 0, 0};
        if (b) {
            bk.first = mr_u64(m, b, at2, "first");
            bk.last = mr_u64(m, b, at2, "last");
            bk.ticks = mr_u32(m, b, at2, "ticks");
            bk.entities = mr_u32(m, b, at2, "maxEntities");
        }
        if (mr_ok(m))
            restored(m, dg_report_check_restore_bucket(c, &bk), at2, "bucket");
    }
}

static void read_points(mr *m, dg_report_check *c, json_t *o, const char *at, char side)
{
    const char key[2] = {(char)(side == 'A' ? 'a' : 'b'), 0};
    json_t *arr = mr_array(m, o, at, key);
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, key, i);
        json_t *p = mr_item(m, arr, i, at2);
        bool hx, hy, hz;
        uint64_t tick = p ? mr_u64(m, p, at2, "tick") : 0;
        double x = p ? mr_real(m, p, at2, "x", &hx) : 0, y = p ? mr_real(m, p, at2, "y", &hy) : 0,
               z = p ? mr_real(m, p, at2, "z", &hz) : 0;
        if (mr_ok(m) && dg_report_check_add_point(c, side, tick, x, y, z) != DG_OK)
            mr_nomem(m);
    }
}

/* Why the harness picked this trajectory: "firstTick" and "largest" (field, unit, delta) or null. */
static void read_trajectory_reason(mr *m, dg_report_check *c, json_t *tr, const char *at)
{
    uint64_t first = mr_tick(m, tr, at, "firstTick");
    json_t *lg = mr_typed(m, tr, at, "largest", JSON_OBJECT, true);
    char at1[256];
    at_child(at1, sizeof at1, at, "largest", SIZE_MAX);
    const char *field = lg ? mr_str(m, lg, at1, "field", false) : NULL;
    const char *unit = lg ? mr_str(m, lg, at1, "unit", false) : NULL;
    bool has_d = false;
    double d = lg ? mr_real(m, lg, at1, "delta", &has_d) : 0;
    if (mr_ok(m))
        dg_report_check_set_trajectory_reason(c, first, field, unit, d);
}

/* One trajectory object (main: the check's "trajectory"; else one of "moreTrajectories"). */
static void read_one_trajectory(mr *m, dg_report_check *c, json_t *tr, const char *at, bool main)
{
    uint32_t id = mr_u32(m, tr, at, "entityId");
    const char *name = mr_str(m, tr, at, "name", true);
    if (!mr_ok(m))
        return;
    dg_status st = main ? dg_report_check_set_trajectory(c, id, name) : dg_report_check_add_trajectory(c, id, name);
    if (st != DG_OK) {
        mr_nomem(m);
        return;
    }
    read_points(m, c, tr, at, 'A');
    read_points(m, c, tr, at, 'B');
    uint32_t cut_a = mr_u32(m, tr, at, "pointsCutA"), cut_b = mr_u32(m, tr, at, "pointsCutB");
    dg_report_trajectory *t = main ? &c->trajectory
                              : c->n_more_trajectories ? &c->more_trajectories[c->n_more_trajectories - 1] : NULL;
    if (t && mr_ok(m)) {
        t->cut_a = cut_a;
        t->cut_b = cut_b;
    }
    read_trajectory_reason(m, c, tr, at);
}

static void read_trajectory(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    char at1[256];
    at_child(at1, sizeof at1, at, "trajectory", SIZE_MAX);
    json_t *tr = mr_typed(m, o, at, "trajectory", JSON_OBJECT, true);
    json_t *more = mr_array(m, o, at, "moreTrajectories");
    uint32_t cut = mr_u32(m, o, at, "trajectoriesCut");
    if (!tr || !mr_ok(m))
        return;
    read_one_trajectory(m, c, tr, at1, true);
    for (size_t i = 0; mr_ok(m) && i < json_array_size(more); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "moreTrajectories", i);
        json_t *t = mr_item(m, more, i, at2);
        if (t)
            read_one_trajectory(m, c, t, at2, false);
    }
    if (mr_ok(m))
        c->trajectories_cut = cut;
}

static void read_spread(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    char at1[256];
    at_child(at1, sizeof at1, at, "spread", SIZE_MAX);
    json_t *sp = mr_typed(m, o, at, "spread", JSON_OBJECT, false);
    json_t *arr = sp ? mr_array(m, sp, at1, "steps") : NULL;
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at1, "steps", i);
        json_t *p = mr_item(m, arr, i, at2);
        uint64_t tick = p ? mr_u64(m, p, at2, "tick") : 0;
        uint32_t n = p ? mr_u32(m, p, at2, "entities") : 0;
        if (mr_ok(m))
            restored(m, dg_report_check_add_spread(c, tick, n), at2, "spread step");
    }
    if (sp && mr_ok(m))
        c->spread_cut = mr_u32(m, sp, at1, "stepsCut");
}

static void read_values(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    json_t *arr = mr_array(m, o, at, "values");
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "values", i);
        json_t *v = mr_item(m, arr, i, at2);
        const char *field = v ? mr_str(m, v, at2, "field", false) : NULL;
        /* null: that side has no such row */
        const char *a = v ? mr_str(m, v, at2, "a", true) : NULL, *b = v ? mr_str(m, v, at2, "b", true) : NULL;
        if (mr_ok(m) && dg_report_check_add_value(c, field, a, b) != DG_OK)
            mr_nomem(m);
    }
    if (mr_ok(m))
        c->values_cut = mr_u32(m, o, at, "valuesCut");
}

static void read_details(mr *m, dg_report_check *c, json_t *o, const char *at)
{
    json_t *arr = mr_array(m, o, at, "details");
    for (size_t i = 0; mr_ok(m) && i < json_array_size(arr); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "details", i);
        json_t *v = json_array_get(arr, i);
        if (!json_is_string(v))
            mr_fail(m, at2, "expected a string, found %s", json_kind(v));
        if (mr_ok(m) && dg_report_check_add_detail(c, "%s", json_string_value(v)) != DG_OK)
            mr_nomem(m);
    }
    if (mr_ok(m))
        c->details_cut = mr_u32(m, o, at, "detailsCut");
}

static void read_check(mr *m, dg_report_scenario *sc, json_t *o, const char *at)
{
    const char *name = mr_str(m, o, at, "name", false), *msg = mr_str(m, o, at, "message", true);
    dg_report_status status = mr_status(m, o, at);
    bool have_d;
    double dur = mr_real(m, o, at, "durationSeconds", &have_d);
    if (!mr_ok(m))
        return;
    dg_report_check *c = dg_report_add_check(sc, name, status);
    if (!c || (msg && dg_report_check_set_message(c, "%s", msg) != DG_OK)) {
        mr_nomem(m);
        return;
    }
    c->duration_s = have_d ? dur : 0;
    c->first_tick = mr_tick(m, o, at, "firstDivergentTick");
    c->first_raw_tick = mr_tick(m, o, at, "firstRawDivergentTick");
    c->sub_quantum = mr_bool(m, o, at, "subQuantum");
    c->divergent_ticks = mr_u64(m, o, at, "divergentTicks");
    read_ranges(m, c, o, at);
    c->ranges_coalesced = mr_bool(m, o, at, "rangesCoalesced");
    json_t *ticks = mr_array(m, o, at, "ticks");
    for (size_t i = 0; mr_ok(m) && i < json_array_size(ticks); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "ticks", i);
        json_t *t = mr_item(m, ticks, i, at2);
        if (t)
            read_tick(m, c, t, at2);
    }
    c->ticks_cut = mr_u64(m, o, at, "ticksCut");
    read_timeline(m, c, o, at);
    read_trajectory(m, c, o, at);
    read_spread(m, c, o, at);
    read_values(m, c, o, at);
    read_details(m, c, o, at);
}

static void read_scenario(mr *m, dg_report *rep, json_t *o, const char *at)
{
    const char *name = mr_str(m, o, at, "name", false), *format = mr_str(m, o, at, "format", true);
    uint64_t ticks = mr_u64(m, o, at, "ticks"), et = mr_u64(m, o, at, "entityTicks"),
             bytes = mr_u64(m, o, at, "fileBytes");
    json_t *checks = mr_array(m, o, at, "checks");
    if (!mr_ok(m))
        return;
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, format);
    if (!sc) {
        mr_nomem(m);
        return;
    }
    sc->ticks = ticks;
    sc->entity_ticks = et;
    sc->file_bytes = bytes;
    for (size_t i = 0; mr_ok(m) && i < json_array_size(checks); i++) {
        char at2[256];
        at_child(at2, sizeof at2, at, "checks", i);
        json_t *c = mr_item(m, checks, i, at2);
        if (c)
            read_check(m, sc, c, at2);
    }
}

/* ---- one shard report: its header ------------------------------------------------------------------ */

typedef struct shard_doc {
    const char *path;
    json_t *doc;
    uint32_t index, count;
    const char *corpus_id;
    dg_report_limits limits;
    int64_t started;
    double duration;
    bool incomplete;
    const char *version;
} shard_doc;

static void read_limits(mr *m, json_t *doc, dg_report_limits *l)
{
    json_t *o = mr_typed(m, doc, "", "limits", JSON_OBJECT, false);
    if (!o)
        return;
    l->ticks_per_check = mr_u32(m, o, "limits", "ticksPerCheck");
    l->entities_per_tick = mr_u32(m, o, "limits", "entitiesPerTick");
    l->ranges_per_check = mr_u32(m, o, "limits", "rangesPerCheck");
    l->timeline_buckets = mr_u32(m, o, "limits", "timelineBuckets");
    l->trajectory_points = mr_u32(m, o, "limits", "trajectoryPoints");
    l->events_per_tick = mr_u32(m, o, "limits", "eventsPerTick");
    l->values_per_check = mr_u32(m, o, "limits", "valuesPerCheck");
    l->details_per_check = mr_u32(m, o, "limits", "detailsPerCheck");
    l->trajectory_entities = mr_u32(m, o, "limits", "trajectoryEntities");
    l->spread_points = mr_u32(m, o, "limits", "spreadPoints");
}

/* Reads what merge checks the set with: schema version, command, shard, corpus id, limits. */
static void read_header(mr *m, shard_doc *d)
{
    if (!json_is_object(d->doc)) {
        mr_fail(m, "", "expected a detgate report (a JSON object), found %s", json_kind(d->doc));
        return;
    }
    json_t *ver = mr_typed(m, d->doc, "", "schemaVersion", JSON_INTEGER, false);
    if (ver && json_integer_value(ver) != DG_REPORT_SCHEMA_VERSION)
        mr_fail(m, "", "\"schemaVersion\": expected %d, found %lld", DG_REPORT_SCHEMA_VERSION,
                (long long)json_integer_value(ver));
    json_t *tool = mr_typed(m, d->doc, "", "tool", JSON_OBJECT, false);
    d->version = tool ? mr_str(m, tool, "tool", "version", true) : NULL;
    const char *cmd = mr_str(m, d->doc, "", "command", true);
    if (mr_ok(m) && (!cmd || strcmp(cmd, "gate") != 0))
        mr_fail(m, "", "\"command\": expected \"gate\" (merge takes the reports of a sharded gate), found %s%s%s",
                cmd ? "\"" : "", cmd ? cmd : "null", cmd ? "\"" : "");
    json_t *shard = mr_typed(m, d->doc, "", "shard", JSON_OBJECT, true);
    if (mr_ok(m) && !shard)
        mr_fail(m, "", "\"shard\": expected {\"index\": I, \"count\": N}, found null");
    d->index = shard ? mr_u32(m, shard, "shard", "index") : 0;
    d->count = shard ? mr_u32(m, shard, "shard", "count") : 0;
    if (mr_ok(m) && (d->count == 0 || d->index == 0 || d->index > d->count))
        mr_fail(m, "shard", "expected 1 <= index <= count, found %u/%u", d->index, d->count);
    d->corpus_id = mr_str(m, d->doc, "", "corpusId", false);
    if (mr_ok(m) && (strlen(d->corpus_id) != 16 || strspn(d->corpus_id, "0123456789abcdef") != 16))
        mr_fail(m, "", "\"corpusId\": expected 16 lowercase hex digits, found \"%s\"", d->corpus_id);
    read_limits(m, d->doc, &d->limits);
    json_t *st = mr_typed(m, d->doc, "", "startedUnix", JSON_INTEGER, false);
    d->started = st ? (int64_t)json_integer_value(st) : 0;
    bool have;
    d->duration = mr_real(m, d->doc, "", "durationSeconds", &have);
    d->duration = have ? d->duration : 0;
    d->incomplete = mr_bool(m, d->doc, "", "incomplete");
    mr_array(m, d->doc, "", "scenarios");
}

static bool load_doc(shard_doc *d, const char *path, char *msg, size_t cap)
{
    json_error_t je;
    d->path = path;
    d->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!d->doc) {
        snprintf(msg, cap, "%s:%d:%d: not JSON: %s", path, je.line, je.column, je.text);
        return false;
    }
    mr m = {.file = path};
    read_header(&m, d);
    if (!mr_ok(&m))
        snprintf(msg, cap, "%s", m.msg);
    return mr_ok(&m);
}

/* ---- the set: complete, no duplicate, one corpus --------------------------------------------------------- */

static bool check_set(const shard_doc *d, size_t n)
{
    const shard_doc *first = &d[0];
    for (size_t i = 1; i < n; i++) {
        if (strcmp(d[i].corpus_id, first->corpus_id) != 0) {
            fprintf(stderr, "detgate merge: %s sharded corpus %s but %s sharded corpus %s: not shards of one run "
                            "(a different scenario list, goldens or --format)\n",
                    d[i].path, d[i].corpus_id, first->path, first->corpus_id);
            return false;
        }
        if (d[i].count != first->count) {
            fprintf(stderr, "detgate merge: %s is shard %u/%u but %s is shard %u/%u: not shards of one plan\n",
                    d[i].path, d[i].index, d[i].count, first->path, first->index, first->count);
            return false;
        }
    }
    const shard_doc **seen = calloc(first->count + 1u, sizeof *seen);
    if (!seen) {
        fprintf(stderr, "detgate merge: out of memory\n");
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        if (seen[d[i].index]) {
            fprintf(stderr, "detgate merge: shard %u/%u given twice: %s and %s\n", d[i].index, d[i].count,
                    seen[d[i].index]->path, d[i].path);
            ok = false;
        }
        seen[d[i].index] = &d[i];
    }
    for (uint32_t s = 1; ok && s <= first->count; s++)
        if (!seen[s]) {
            fprintf(stderr, "detgate merge: shard %u/%u of corpus %s is missing: every shard 1..%u must be given\n", s,
                    first->count, first->corpus_id, first->count);
            ok = false;
        }
    free(seen);
    return ok;
}

/* ---- putting the scenarios together, in name order ------------------------------------------------------ */

typedef struct scn_ref {
    const char *name;
    json_t *obj;
    const shard_doc *from;
    size_t at; /* its index in that report */
} scn_ref;

static int cmp_scn(const void *a, const void *b)
{
    const scn_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->from->index > y->from->index) - (x->from->index < y->from->index);
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* A new report with the largest caps of the shards (so nothing a shard kept is cut again), the
 * earliest start, the longest shard's duration (the wall time when shards run side by side). */
static dg_report *merged_report(const shard_doc *d, size_t n)
{
    dg_report_limits l = d[0].limits;
    int64_t started = d[0].started;
    double duration = d[0].duration;
    bool incomplete = false;
    for (size_t i = 0; i < n; i++) {
        l.ticks_per_check = max_u32(l.ticks_per_check, d[i].limits.ticks_per_check);
        l.entities_per_tick = max_u32(l.entities_per_tick, d[i].limits.entities_per_tick);
        l.ranges_per_check = max_u32(l.ranges_per_check, d[i].limits.ranges_per_check);
        l.timeline_buckets = max_u32(l.timeline_buckets, d[i].limits.timeline_buckets);
        l.trajectory_points = max_u32(l.trajectory_points, d[i].limits.trajectory_points);
        l.events_per_tick = max_u32(l.events_per_tick, d[i].limits.events_per_tick);
        l.values_per_check = max_u32(l.values_per_check, d[i].limits.values_per_check);
        l.details_per_check = max_u32(l.details_per_check, d[i].limits.details_per_check);
        l.trajectory_entities = max_u32(l.trajectory_entities, d[i].limits.trajectory_entities);
        l.spread_points = max_u32(l.spread_points, d[i].limits.spread_points);
        started = d[i].started < started ? d[i].started : started;
        duration = d[i].duration > duration ? d[i].duration : duration;
        incomplete |= d[i].incomplete;
    }
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = dg_report_new("gate", d[0].version, &l, &err);
    if (!rep)
        return NULL;
    rep->started_unix = started;
    rep->duration_s = duration;
    rep->nomem = incomplete;
    dg_report_set_shard(rep, 1, 1, d[0].corpus_id);
    return rep;
}

/* Returns 0, or the exit code of what went wrong (message printed). */
static int merge_scenarios(dg_report *rep, const shard_doc *d, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += json_array_size(json_object_get(d[i].doc, "scenarios"));
    scn_ref *refs = calloc(total ? total : 1, sizeof *refs);
    if (!refs) {
        fprintf(stderr, "detgate merge: out of memory\n");
        return CLI_UNTESTED;
    }
    size_t k = 0;
    mr m = {.file = ""};
    for (size_t i = 0; mr_ok(&m) && i < n; i++) {
        json_t *arr = json_object_get(d[i].doc, "scenarios");
        m.file = d[i].path;
        for (size_t j = 0; mr_ok(&m) && j < json_array_size(arr); j++) {
            char at[64];
            snprintf(at, sizeof at, "scenarios[%zu]", j);
            json_t *o = mr_item(&m, arr, j, at);
            const char *name = o ? mr_str(&m, o, at, "name", false) : NULL;
            if (name)
                refs[k++] = (scn_ref){name, o, &d[i], j};
        }
    }
    if (mr_ok(&m))
        qsort(refs, k, sizeof *refs, cmp_scn);
    for (size_t i = 1; mr_ok(&m) && i < k; i++)
        if (strcmp(refs[i].name, refs[i - 1].name) == 0) {
            fprintf(stderr, "detgate merge: scenario %s is in %s and in %s: a scenario belongs to one shard\n",
                    refs[i].name, refs[i - 1].from->path, refs[i].from->path);
            free(refs);
            return CLI_USAGE;
        }
    for (size_t i = 0; mr_ok(&m) && i < k; i++) {
        char at[64];
        snprintf(at, sizeof at, "scenarios[%zu]", refs[i].at);
        m.file = refs[i].from->path;
        read_scenario(&m, rep, refs[i].obj, at);
    }
    free(refs);
    if (!mr_ok(&m))
        fprintf(stderr, "detgate merge: %s\n", m.msg);
    return m.bad ? CLI_USAGE : m.nomem ? CLI_UNTESTED : 0;
}

/* ---- the command ------------------------------------------------------------------------------------------ */

int cli_merge(int argc, char **argv)
{
    static const struct option opts[] = {CLI_REPORT_OPTS, {0, 0, 0, 0}};
    cli_reports rp = {0};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1)
        if (!cli_report_opt(&rp, c, optarg))
            return cli_usage_error("merge", "unknown option or missing value '%s'", argv[optind - 1]);
    size_t n = (size_t)(argc - optind);
    if (n == 0)
        return cli_usage_error("merge", "expected REPORT.json... (the JSON report of every shard)");
    if (!rp.dir && !rp.text && !rp.json && !rp.junit && !rp.markdown && !rp.html && !rp.markdown_append)
        rp.dir = "build/reports";
    int prc = cli_reports_prepare(&rp, "merge", (const char *const *)(argv + optind), n);
    if (prc)
        return prc;
    shard_doc *d = calloc(n, sizeof *d);
    if (!d) {
        fprintf(stderr, "detgate merge: out of memory\n");
        return CLI_UNTESTED;
    }
    int code = 0;
    for (size_t i = 0; code == 0 && i < n; i++) {
        char msg[800];
        if (!load_doc(&d[i], argv[optind + (int)i], msg, sizeof msg)) {
            fprintf(stderr, "detgate merge: %s\n", msg);
            code = CLI_USAGE;
        }
    }
    if (code == 0 && !check_set(d, n))
        code = CLI_USAGE;
    dg_report *rep = code == 0 ? merged_report(d, n) : NULL;
    if (code == 0 && !rep) {
        fprintf(stderr, "detgate merge: out of memory\n");
        code = CLI_UNTESTED;
    }
    if (code == 0)
        code = merge_scenarios(rep, d, n);
    if (code == 0) {
        bool ok = cli_write_reports(rep, &rp, "merge");
        code = cli_exit_for(rep);
        code = ok ? code : code ? code : CLI_UNTESTED;
    }
    dg_report_free(rep);
    for (size_t i = 0; i < n; i++)
        json_decref(d[i].doc);
    free(d);
    return code;
}
