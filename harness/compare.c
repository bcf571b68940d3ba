/* harness/compare.c — the harness's comparisons: two hash streams, a stream and a hash log, two
 * recordings in lockstep, and the state diff behind a hash mismatch (entities added, lost or
 * changed; which fields; both values in quanta and real units) written into a dg_report check. */
#include "harness_internal.h"
#include "test_hooks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DETAIL_MAX 16          /* ticks diffed in detail when the record side must be re-derived */
#define TRAJ_BEFORE 120        /* trajectory window around the first divergence, in ticks */
#define TRAJ_AFTER 240

/* ---- world diffs ----------------------------------------------------------------------------- */

uint32_t dg_harness__count_diff(const dg_qentity *a, size_t na, const dg_qentity *b, size_t nb)
{
    size_t i = 0, j = 0;
    uint32_t n = 0;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && a[i].id < b[j].id)) {
            n++;
            i++;
        } else if (i >= na || b[j].id < a[i].id) {
            n++;
            j++;
        } else {
            n += !dg_qentity_equal(&a[i], &b[j]);
            i++;
            j++;
        }
    }
    return n;
}

static void add_entity(dg_report_tick *t, const dg_qentity *a, const dg_qentity *b, dg_report_entity_kind k,
                       const dg_flrep_header *names)
{
    char nb[DG_REPORT_NAME_CAP];
    uint32_t id = a ? a->id : b->id;
    dg_report_entity *e = dg_report_tick_add_entity(t, id, dg_harness__entity_name(names, id, nb, sizeof nb), k);
    if (e && a && b)
        dg_report_entity_diff_qentity(e, a, b);
}

void dg_harness__diff_worlds(dg_report_tick *t, const dg_qentity *a, size_t na, const dg_qentity *b,
                          size_t nb, const dg_flrep_header *names)
{
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && a[i].id < b[j].id)) {
            t->lost++;
            add_entity(t, &a[i++], NULL, DG_REPORT_ENTITY_LOST, names);
        } else if (i >= na || b[j].id < a[i].id) {
            t->added++;
            add_entity(t, NULL, &b[j++], DG_REPORT_ENTITY_ADDED, names);
        } else {
            if (!dg_qentity_equal(&a[i], &b[j])) {
                t->changed++;
                add_entity(t, &a[i], &b[j], DG_REPORT_ENTITY_CHANGED, names);
            }
            i++;
            j++;
        }
    }
}

static bool rec_equal(const harness__tickrec *a, const harness__tickrec *b)
{
    return a->count == b->count && a->state == b->state && a->events == b->events;
}

/* ---- two streams ------------------------------------------------------------------------------ */

uint64_t dg_harness__compare_streams(dg_report_check *c, const harness__stream *a, const harness__stream *b,
                                  uint64_t add_after, uint64_t *first_ticks, size_t max_first, size_t *n_first,
                                  uint64_t *first_raw)
{
    size_t i = 0, j = 0;
    uint64_t diverged = 0;
    *n_first = 0;
    *first_raw = DG_REPORT_TICK_NONE;
    while (i < a->n || j < b->n) {
        uint64_t tick;
        bool differs;
        if (j >= b->n || (i < a->n && a->v[i].tick < b->v[j].tick)) {
            tick = a->v[i++].tick;
            differs = true;
        } else if (i >= a->n || b->v[j].tick < a->v[i].tick) {
            tick = b->v[j++].tick;
            differs = true;
        } else {
            tick = a->v[i].tick;
            differs = !rec_equal(&a->v[i], &b->v[j]);
            if (a->v[i].has_raw && b->v[j].has_raw && a->v[i].raw != b->v[j].raw &&
                *first_raw == DG_REPORT_TICK_NONE)
                *first_raw = tick;
            i++;
            j++;
        }
        if (!differs)
            continue;
        diverged++;
        if (*n_first < max_first)
            first_ticks[(*n_first)++] = tick;
        /* Hashes alone do not say how many entities differ: 0 means "not localized". */
        if (c && (add_after == DG_REPORT_TICK_NONE || tick > add_after))
            dg_report_check_add_divergent(c, tick, 0);
    }
    return diverged;
}

/* ---- world diffs with declared fields ------------------------------------------------------------ */

static size_t schema_nx(const dg_schema *s)
{
    return s ? s->field_count : 0;
}

static bool extras_equal(harness__xworld a, size_t i, harness__xworld b, size_t j, size_t nx)
{
    return nx == 0 || !a.x || !b.x || memcmp(a.x + i * nx, b.x + j * nx, nx * sizeof *a.x) == 0;
}

uint32_t dg_harness__count_diff_x(harness__xworld a, harness__xworld b, const dg_schema *schema)
{
    size_t nx = schema_nx(schema);
    if (nx == 0)
        return dg_harness__count_diff(a.ents, a.n, b.ents, b.n);
    size_t i = 0, j = 0;
    uint32_t n = 0;
    while (i < a.n || j < b.n) {
        if (j >= b.n || (i < a.n && a.ents[i].id < b.ents[j].id)) {
            n++;
            i++;
        } else if (i >= a.n || b.ents[j].id < a.ents[i].id) {
            n++;
            j++;
        } else {
            n += !dg_qentity_equal(&a.ents[i], &b.ents[j]) || !extras_equal(a, i, b, j, nx);
            i++;
            j++;
        }
    }
    return n;
}

/* Position and velocity in metres at each side's quanta (the report's own diff assumes 1/64, 1/32). */
static void requantize(dg_report_entity *e, const dg_schema *sa, const dg_schema *sb)
{
    sa = sa ? sa : dg_schema_legacy();
    sb = sb ? sb : dg_schema_legacy();
    for (uint32_t k = 0; k < e->n_fields; k++) {
        dg_report_field *f = &e->fields[k];
        bool pos = strncmp(f->name, "pos.", 4) == 0, vel = strncmp(f->name, "vel.", 4) == 0;
        if ((!pos && !vel) || !f->has_quanta)
            continue;
        f->a = (double)f->a_q * (pos ? sa->pos_quantum_m : sa->vel_quantum_mps);
        f->b = (double)f->b_q * (pos ? sb->pos_quantum_m : sb->vel_quantum_mps);
        f->delta = f->b - f->a;
    }
}

/* Every declared field of one entity that differs, with its name, unit and both values. */
static void diff_extras(dg_report_entity *e, const int64_t *xa, const int64_t *xb, const dg_schema *s)
{
    for (size_t f = 0; f < s->field_count; f++) {
        if (xa[f] == xb[f])
            continue;
        const dg_field_def *d = &s->fields[f];
        char ta[DG_REPORT_VALUE_TEXT_CAP], tb[DG_REPORT_VALUE_TEXT_CAP];
        dg_schema_format_value(d, xa[f], ta, sizeof ta);
        dg_schema_format_value(d, xb[f], tb, sizeof tb);
        bool numeric = d->type == DG_FIELD_INT || d->type == DG_FIELD_UINT || d->type == DG_FIELD_FLOAT;
        if (dg_report_entity_add_field_text(e, d->name, d->unit ? d->unit : "", xa[f], xb[f], numeric,
                                            dg_schema_value_double(d, xa[f]), dg_schema_value_double(d, xb[f]), ta,
                                            tb) &&
            d->type != DG_FIELD_FLOAT && numeric) /* an integer's delta exactly, beyond 2^53 too */
            e->fields[e->n_fields - 1].delta = (double)e->fields[e->n_fields - 1].delta_q;
    }
}

static void add_entity_x(dg_report_tick *t, harness__xworld a, size_t i, harness__xworld b, size_t j,
                         dg_report_entity_kind k, const dg_schema *s, const dg_flrep_header *names)
{
    char nb[DG_REPORT_NAME_CAP];
    uint32_t id = k == DG_REPORT_ENTITY_ADDED ? b.ents[j].id : a.ents[i].id;
    dg_report_entity *e = dg_report_tick_add_entity(t, id, dg_harness__entity_name(names, id, nb, sizeof nb), k);
    if (!e || k != DG_REPORT_ENTITY_CHANGED)
        return;
    dg_report_entity_diff_qentity(e, &a.ents[i], &b.ents[j]);
    if (!dg_schema_is_legacy(a.schema) || !dg_schema_is_legacy(b.schema))
        requantize(e, a.schema, b.schema);
    if (schema_nx(s) && a.x && b.x)
        diff_extras(e, a.x + i * s->field_count, b.x + j * s->field_count, s);
}

void dg_harness__diff_worlds_x(dg_report_tick *t, harness__xworld a, harness__xworld b, const dg_schema *schema,
                            const dg_flrep_header *names)
{
    size_t i = 0, j = 0, nx = schema_nx(schema);
    while (i < a.n || j < b.n) {
        if (j >= b.n || (i < a.n && a.ents[i].id < b.ents[j].id)) {
            t->lost++;
            add_entity_x(t, a, i++, b, 0, DG_REPORT_ENTITY_LOST, schema, names);
        } else if (i >= a.n || b.ents[j].id < a.ents[i].id) {
            t->added++;
            add_entity_x(t, a, 0, b, j++, DG_REPORT_ENTITY_ADDED, schema, names);
        } else {
            if (!dg_qentity_equal(&a.ents[i], &b.ents[j]) || !extras_equal(a, i, b, j, nx)) {
                t->changed++;
                add_entity_x(t, a, i, b, j, DG_REPORT_ENTITY_CHANGED, schema, names);
            }
            i++;
            j++;
        }
    }
}

static bool field_def_equal(const dg_field_def *a, const dg_field_def *b)
{
    if (strcmp(a->name, b->name) != 0 || strcmp(a->unit ? a->unit : "", b->unit ? b->unit : "") != 0 ||
        a->type != b->type || a->bits != b->bits || a->quantum != b->quantum || a->enum_count != b->enum_count)
        return false;
    for (size_t k = 0; k < a->enum_count; k++)
        if (strcmp(a->enum_names[k], b->enum_names[k]) != 0)
            return false;
    return true;
}

const dg_schema *dg_harness__common_schema(const dg_flrep_header *a, const dg_flrep_header *b)
{
    const dg_schema *x = a ? a->schema : NULL, *y = b ? b->schema : NULL;
    if (!x || !y || dg_schema_is_legacy(x) || x->std_mask != y->std_mask || x->pos_quantum_m != y->pos_quantum_m ||
        x->vel_quantum_mps != y->vel_quantum_mps || x->field_count != y->field_count)
        return NULL;
    for (size_t f = 0; f < x->field_count; f++)
        if (!field_def_equal(&x->fields[f], &y->fields[f]))
            return NULL;
    return x;
}

/* ---- record side re-derived from the source vs the recording ---------------------------------- */

/* The batch quantizer: the quanta of dg_quant_entity_schema entity by entity, and its first error,
 * placed in the frame's stream as the record side places it. */
static dg_status quantize_frame(const dg_schema *s, const harness__frame *f, dg_qentity *q, dg_error *err)
{
    dg_status st = dg_quant_entities_schema(s, f->ents, q, f->n, NULL, err);
    if (st != DG_OK)
        dg_harness__frame_locate(f, err);
    return st;
}

static int read_to(dg_flrep_reader *r, uint64_t tick, dg_flrep_tick *t, dg_error *err)
{
    int rc;
    while ((rc = dg_flrep_reader_next(r, t, err)) == 1 && t->tick < tick) {
    }
    if (rc == 1 && t->tick != tick)
        return 0;
    return rc;
}

static int source_to(harness__source *s, uint64_t tick, harness__frame *f, dg_error *err)
{
    int rc;
    while ((rc = s->next(s, f, err)) == 1 && f->tick < tick) {
    }
    if (rc == 1 && f->tick != tick)
        return 0;
    return rc;
}

dg_status dg_harness__detail_source_vs_file(dg_report_check *c, harness__source *src, const char *path,
                                         uint64_t fault_tick, const uint64_t *ticks, size_t n,
                                         const harness__stream *rec, uint64_t *not_reproduced, dg_error *err)
{
    *not_reproduced = DG_REPORT_TICK_NONE;
    dg_flrep_reader *r = NULL;
    dg_qentity *q = NULL;
    size_t qcap = 0;
    dg_error scratch_err; /* errors past the first detail tick only stop the detail */
    dg_error_clear(&scratch_err);
    dg_status st = src->rewind(src, err);
    if (st == DG_OK)
        st = dg_flrep_reader_open_file(&r, path, NULL, err);
    if (st != DG_OK)
        return st;
    if (fault_tick != UINT64_MAX)
        dg_flrep__reader_set_fault_double_delta(r, fault_tick);
    /* the source's declared fields, when the recording has the same (it was recorded from it) */
    const dg_schema *xs = dg_harness__common_schema(&src->hdr, dg_flrep_reader_header(r));
    size_t nx = dg_harness__source_fields(src);
    for (size_t k = 0; k < n && st == DG_OK; k++) {
        harness__frame f;
        dg_flrep_tick t;
        int fs = source_to(src, ticks[k], &f, err);
        int rs = fs < 0 ? -1 : read_to(r, ticks[k], &t, err);
        if (fs < 0 || rs < 0) {
            st = err->code;
            break;
        }
        dg_report_tick *rt = dg_report_add_tick(c, ticks[k]);
        uint32_t ndiff = 0;
        if (fs == 1 && f.n > qcap) {
            free(q);
            qcap = f.n * 2;
            q = malloc(qcap * sizeof *q);
            if (!q) {
                st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
                break;
            }
        }
        if (fs == 1 && (st = quantize_frame(src->hdr.schema, &f, q, err)) != DG_OK)
            break;
        /* The re-run must reproduce what was recorded, or the diff would blame the codec for the
         * source's own nondeterminism. */
        size_t ri = fs == 1 ? dg_harness__stream_find(rec, ticks[k]) : SIZE_MAX;
        if (ri != SIZE_MAX && *not_reproduced == DG_REPORT_TICK_NONE) {
            dg_tick_hash th = dg_hash_tick_x(f.tick, q, f.extras, f.extras ? nx : 0, f.n, f.events, f.nev, NULL);
            if (th.state != rec->v[ri].state || th.events != rec->v[ri].events)
                *not_reproduced = ticks[k];
        }
        const dg_qentity *qa = fs == 1 ? q : NULL;
        size_t na = fs == 1 ? f.n : 0;
        const dg_qentity *qb = rs == 1 ? t.ents : NULL;
        size_t nb = rs == 1 ? t.ent_count : 0;
        harness__xworld wa = {qa, fs == 1 ? f.extras : NULL, na, src->hdr.schema},
                        wb = {qb, rs == 1 ? t.extras : NULL, nb, dg_flrep_reader_header(r)->schema};
        ndiff = dg_harness__count_diff_x(wa, wb, xs);
        if (rt) {
            dg_harness__diff_worlds_x(rt, wa, wb, xs, &src->hdr);
            uint64_t ea = fs == 1 ? dg_hash_events(f.events, f.nev) : 0;
            uint64_t eb = rs == 1 ? dg_hash_events(t.events, t.event_count) : 0;
            rt->events_differ = ea != eb;
            dg_report_tick_diff_events(rt, fs == 1 ? f.events : NULL, fs == 1 ? f.nev : 0,
                                       rs == 1 ? t.events : NULL, rs == 1 ? t.event_count : 0);
        }
        dg_report_check_add_divergent(c, ticks[k], ndiff);
        /* The reader is linear: re-open it after a tick it lacked so the next target is reachable. */
        if (rs == 0) {
            dg_flrep_reader_seek(r, ticks[k], &scratch_err);
        }
    }
    free(q);
    dg_flrep_reader_close(r);
    return st;
}

/* ---- two recordings in lockstep ---------------------------------------------------------------- */

typedef struct side {
    dg_flrep_reader *r;
    dg_flrep_tick t;
    int rc; /* 1 = t valid, 0 = end */
    uint64_t entity_ticks;
} side;

static dg_status side_next(side *s, dg_error *err)
{
    s->rc = dg_flrep_reader_next(s->r, &s->t, err);
    if (s->rc < 0)
        return err->code;
    if (s->rc == 1)
        s->entity_ticks += s->t.ent_count;
    return DG_OK;
}

/* ---- which divergent entities to draw, and how far a divergence spread -------------------------- */

/* How an entity's difference at one tick ranks: an entity on both sides before one present on one
 * side only (it has no difference to measure); then, field kind by field kind in this order, the
 * larger difference in that kind's own units: position (Euclidean, m), velocity (Euclidean, m/s),
 * rotation (deg), health (%), then flags / type / faction (how many of them differ). Kinds are never
 * compared with each other: metres do not outweigh degrees, a position difference outranks any
 * rotation. docs/REPORT-SCHEMA.md, "HTML", states the same rule. */
#define RANK_KINDS 5
typedef struct rank {
    bool one_sided;
    double d[RANK_KINDS];
} rank;

static double dist3(const double a[3], const double b[3])
{
    double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static rank rank_of(const dg_qentity *a, const dg_qentity *b)
{
    rank r = {a == NULL || b == NULL, {0, 0, 0, 0, 0}};
    if (r.one_sided)
        return r;
    double pa[3], pb[3];
    dg_quant_pos_m(a, pa);
    dg_quant_pos_m(b, pb);
    r.d[0] = dist3(pa, pb);
    dg_quant_vel_mps(a, pa);
    dg_quant_vel_mps(b, pb);
    r.d[1] = dist3(pa, pb);
    bool rot_differs = a->rot_largest != b->rot_largest || memcmp(a->rot, b->rot, sizeof a->rot) != 0;
    r.d[2] = rot_differs ? dg_quant_rot_angle_deg(a, b) : 0; /* equal quanta: exactly 0, not acos noise */
    r.d[3] = fabs(dg_quant_health_pct(b) - dg_quant_health_pct(a));
    r.d[4] = (a->flags != b->flags) + (a->type_index != b->type_index) + (a->faction_index != b->faction_index);
    return r;
}

/* True when x ranks strictly before y. */
static bool rank_before(const rank *x, const rank *y)
{
    if (x->one_sided != y->one_sided)
        return !x->one_sided;
    for (int k = 0; k < RANK_KINDS; k++)
        if (x->d[k] != y->d[k])
            return x->d[k] > y->d[k];
    return false;
}

#define PICK_MAX 16 /* entities followed per check (the report may keep fewer: limits.trajectory_entities) */

typedef struct pick {
    uint32_t id;
    uint64_t tick; /* its first divergent tick */
    rank r;
    const char *field, *unit; /* its largest difference's kind, and that difference */
    double delta;
    const dg_qentity *a, *b;  /* during one tick only */
} pick;

/* The kind a rank was decided by, for the "why" line: the first kind that differs at all. */
static void pick_reason(pick *p)
{
    static const char *const names[RANK_KINDS] = {"pos", "vel", "rot", "health", NULL};
    static const char *const units[RANK_KINDS] = {"m", "m/s", "deg", "%", ""};
    p->field = NULL;
    p->unit = "";
    p->delta = 0;
    if (p->r.one_sided) {
        p->field = p->a ? "lost" : "added";
        return;
    }
    for (int k = 0; k < RANK_KINDS; k++)
        if (p->r.d[k] > 0) {
            p->field = names[k];
            p->unit = units[k];
            p->delta = p->r.d[k];
            break;
        }
    if (p->field)
        return;
    const dg_qentity *a = p->a, *b = p->b;
    p->field = a->flags != b->flags ? "flags" : a->type_index != b->type_index ? "type" : "faction";
    p->delta = a->flags != b->flags ? (double)b->flags - a->flags
               : a->type_index != b->type_index ? (double)b->type_index - a->type_index
                                               : (double)b->faction_index - a->faction_index;
}

/* Distinct entity ids seen diverging: open addressing, id + 1 stored so 0 marks a free slot. */
typedef struct idset {
    uint64_t *slot;
    size_t cap, n;
    bool nomem;
} idset;

static size_t idset_home(uint32_t id, size_t cap)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static bool idset_grow(idset *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint64_t *n = calloc(ncap, sizeof *n);
    if (!n) {
        s->nomem = true;
        return false;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i]) {
            size_t h = idset_home((uint32_t)(s->slot[i] - 1), ncap);
            while (n[h])
                h = (h + 1) & (ncap - 1);
            n[h] = s->slot[i];
        }
    free(s->slot);
    s->slot = n;
    s->cap = ncap;
    return true;
}

/* Adds id; true when it was not there before. */
static bool idset_add(idset *s, uint32_t id)
{
    if (s->nomem || ((s->n + 1) * 2 > s->cap && !idset_grow(s)))
        return false;
    size_t h = idset_home(id, s->cap);
    while (s->slot[h]) {
        if (s->slot[h] == (uint64_t)id + 1)
            return false;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = (uint64_t)id + 1;
    s->n++;
    return true;
}

/* What one compare_files walk gathers beside the diff: the entities to draw and the spread. */
typedef struct follow {
    idset seen;
    pick picks[PICK_MAX];
    uint32_t n_picks;
} follow;

/* One divergent entity at `tick`: counted in the spread; while there is room, a candidate to draw,
 * kept in rank order among this tick's new ones (picks[from..] are this tick's). */
static void follow_entity(follow *fw, uint32_t from, uint64_t tick, const dg_qentity *a, const dg_qentity *b)
{
    uint32_t id = a ? a->id : b->id;
    if (!idset_add(&fw->seen, id))
        return;
    pick p = {id, tick, rank_of(a, b), NULL, NULL, 0, a, b};
    uint32_t n = fw->n_picks, at = n;
    while (at > from && rank_before(&p.r, &fw->picks[at - 1].r))
        at--;
    if (at >= PICK_MAX)
        return;
    if (n == PICK_MAX)
        n--; /* the last of this tick's candidates falls off */
    memmove(&fw->picks[at + 1], &fw->picks[at], (n - at) * sizeof p);
    fw->picks[at] = p;
    fw->n_picks = n + 1;
}

/* Walks one divergent tick's two states; records a spread step when new entities diverged. */
static void follow_tick(follow *fw, dg_report_check *c, uint64_t tick, const dg_qentity *a, size_t na,
                        const dg_qentity *b, size_t nb)
{
    size_t before = fw->seen.n, i = 0, j = 0;
    uint32_t from = fw->n_picks;
    while (i < na || j < nb) {
        if (j >= nb || (i < na && a[i].id < b[j].id)) {
            follow_entity(fw, from, tick, &a[i++], NULL);
        } else if (i >= na || b[j].id < a[i].id) {
            follow_entity(fw, from, tick, NULL, &b[j++]);
        } else {
            if (!dg_qentity_equal(&a[i], &b[j]))
                follow_entity(fw, from, tick, &a[i], &b[j]);
            i++;
            j++;
        }
    }
    for (uint32_t k = from; k < fw->n_picks; k++) {
        pick_reason(&fw->picks[k]);
        fw->picks[k].a = fw->picks[k].b = NULL; /* the states go away with the tick */
    }
    if (fw->seen.n > before)
        dg_report_check_add_spread(c, tick, fw->seen.n > UINT32_MAX ? UINT32_MAX : (uint32_t)fw->seen.n);
}

/* One entity's path on both sides, from TRAJ_BEFORE ticks before its first divergence to TRAJ_AFTER
 * after, into the trajectory started last. */
static void trajectory_points(dg_report_check *c, const char *pa, const char *pb, uint64_t first, uint32_t id)
{
    const char *paths[2] = {pa, pb};
    for (int s = 0; s < 2; s++) {
        dg_flrep_reader *r = NULL;
        dg_error scratch_err; /* a trajectory is best effort: a read error only shortens it */
        dg_error_clear(&scratch_err);
        if (dg_flrep_reader_open_file(&r, paths[s], NULL, &scratch_err) != DG_OK)
            continue;
        uint64_t from = first > TRAJ_BEFORE ? first - TRAJ_BEFORE : 0;
        dg_flrep_tick t;
        if (dg_flrep_reader_seek(r, from, &scratch_err) == DG_OK) {
            while (dg_flrep_reader_next(r, &t, &scratch_err) == 1 && t.tick <= first + TRAJ_AFTER) {
                size_t lo = 0, hi = t.ent_count;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (t.ents[mid].id < id)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo < t.ent_count && t.ents[lo].id == id) {
                    double m[3];
                    dg_quant_pos_m(&t.ents[lo], m);
                    dg_report_check_add_point(c, s == 0 ? 'A' : 'B', t.tick, m[0], m[1], m[2]);
                }
            }
        }
        dg_flrep_reader_close(r);
    }
}

/* The picked entities' trajectories: the first (earliest, largest difference) is the main one. */
static void trajectories(dg_report_check *c, const follow *fw, const char *pa, const char *pb,
                         const dg_flrep_header *names)
{
    for (uint32_t i = 0; i < fw->n_picks; i++) {
        const pick *p = &fw->picks[i];
        char nb[DG_REPORT_NAME_CAP];
        const char *name = dg_harness__entity_name(names, p->id, nb, sizeof nb);
        dg_status st = i == 0 ? dg_report_check_set_trajectory(c, p->id, name && name[0] ? name : NULL)
                              : dg_report_check_add_trajectory(c, p->id, name && name[0] ? name : NULL);
        if (st != DG_OK)
            return;
        dg_report_check_set_trajectory_reason(c, p->tick, p->field, p->unit, p->delta);
        trajectory_points(c, pa, pb, p->tick, p->id);
    }
}

uint64_t dg_harness__compare_files(dg_report_check *c, dg_report_scenario *sc, const char *pa, const char *pb,
                                dg_error *err)
{
    side a = {0}, b = {0};
    uint64_t diverged = 0;
    follow fw;
    memset(&fw, 0, sizeof fw);
    dg_status st = dg_flrep_reader_open_file(&a.r, pa, NULL, err);
    if (st == DG_OK)
        st = dg_flrep_reader_open_file(&b.r, pb, NULL, err);
    harness__diff_skip skip = {0}; /* with --jobs: the equal ticks before the first difference */
    if (st == DG_OK)
        st = dg_harness__diff_skip_equal(pa, pb, &a.r, &b.r, &skip, err);
    b.entity_ticks = skip.b_entity_ticks;
    if (st == DG_OK && !skip.a_end)
        st = side_next(&a, err);
    if (st == DG_OK && !skip.b_end)
        st = side_next(&b, err);
    const dg_flrep_header *names = a.r ? dg_flrep_reader_header(a.r) : NULL;
    const dg_schema *xs = a.r && b.r ? dg_harness__common_schema(names, dg_flrep_reader_header(b.r)) : NULL;
    size_t nxa = dg_harness__reader_fields(a.r), nxb = dg_harness__reader_fields(b.r);
    while (st == DG_OK && (a.rc == 1 || b.rc == 1)) {
        bool only_a = b.rc != 1 || (a.rc == 1 && a.t.tick < b.t.tick);
        bool only_b = a.rc != 1 || (b.rc == 1 && b.t.tick < a.t.tick);
        uint64_t tick = only_b ? b.t.tick : a.t.tick;
        const dg_qentity *qa = only_b ? NULL : a.t.ents;
        size_t na = only_b ? 0 : a.t.ent_count;
        const dg_qentity *qb = only_a ? NULL : b.t.ents;
        size_t nb = only_a ? 0 : b.t.ent_count;
        bool events_differ = only_a ? a.t.event_count > 0 : only_b && b.t.event_count > 0;
        bool differs = only_a || only_b;
        /* past the other side's last tick: counted, and told as a length in the check's message
         * (callers: "B ends at tick T"), not detailed as a tick whose every entity was lost */
        bool past_end = (only_a && b.rc != 1) || (only_b && a.rc != 1);
        if (!differs) {
            dg_tick_hash ha = dg_harness__hash_read_tick(&a.t, nxa, NULL);
            dg_tick_hash hb = dg_harness__hash_read_tick(&b.t, nxb, NULL);
            differs = ha.combined != hb.combined;
            events_differ = ha.events != hb.events;
        }
        if (differs) {
            diverged++;
            if (!past_end)
                follow_tick(&fw, c, tick, qa, na, qb, nb);
            harness__xworld wa = {qa, only_b ? NULL : a.t.extras, na, names->schema},
                            wb = {qb, only_a ? NULL : b.t.extras, nb, dg_flrep_reader_header(b.r)->schema};
            dg_report_check_add_divergent(c, tick, dg_harness__count_diff_x(wa, wb, xs));
            dg_report_tick *rt = past_end ? NULL : dg_report_add_tick(c, tick);
            if (rt) {
                dg_harness__diff_worlds_x(rt, wa, wb, xs, names);
                rt->events_differ = events_differ;
                dg_report_tick_diff_events(rt, only_b ? NULL : a.t.events, only_b ? 0 : a.t.event_count,
                                           only_a ? NULL : b.t.events, only_a ? 0 : b.t.event_count);
            }
        }
        if (!only_b)
            st = side_next(&a, err);
        if (st == DG_OK && !only_a)
            st = side_next(&b, err);
    }
    if (sc) { /* both counts are B's, the side the scenario is named after */
        sc->ticks = b.r ? dg_flrep_reader_info(b.r)->tick_count : 0;
        sc->entity_ticks = b.entity_ticks;
    }
    if (st == DG_OK)
        trajectories(c, &fw, pa, pb, names);
    free(fw.seen.slot);
    dg_flrep_reader_close(a.r);
    dg_flrep_reader_close(b.r);
    return st == DG_OK ? diverged : UINT64_MAX;
}

/* ---- a stream against a hash log (golden) ------------------------------------------------------- */

dg_status dg_harness__load_log(const char *log, harness__stream *out, dg_hash_log_header *hdr, dg_error *err)
{
    dg_hash_log_reader *r = NULL;
    if (dg_hash_log_reader_open(&r, log, err) != DG_OK)
        return err->code;
    if (hdr)
        *hdr = *dg_hash_log_reader_header(r);
    dg_hash_log_tick lt;
    dg_status st = DG_OK;
    int got = 1;
    while (st == DG_OK && (got = dg_hash_log_reader_next(r, &lt, err)) == 1) {
        harness__tickrec rec = {lt.tick, lt.state, lt.events, 0, lt.raw, lt.entity_count, lt.has_raw};
        st = dg_harness__stream_push(out, &rec, err);
    }
    if (st == DG_OK && got < 0)
        st = err->code;
    dg_hash_log_reader_close(r);
    return st;
}

size_t dg_harness__detail_max(void) { return DETAIL_MAX; }

/* ---- header and tables ------------------------------------------------------------------------ */

#define HDR_VALUE_CAP 160 /* one side's value as text: a quoted, escaped string is cut to fit */

/* `"Viper 1"`: the string quoted, its bytes escaped (an embedded NUL or a control byte shows). */
static const char *hdr_quote(char *buf, size_t cap, dg_flrep_str s)
{
    buf[0] = '"';
    size_t n = dg_escape_bytes(buf + 1, cap - 2, s.s, s.s ? s.len : 0);
    buf[n + 1] = '"';
    buf[n + 2] = '\0';
    return buf;
}

static bool hdr_str_equal(dg_flrep_str a, dg_flrep_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.s, b.s, a.len) == 0);
}

typedef struct hdr_cmp {
    dg_report_check *c;
    uint32_t n;        /* differing values */
    char first[3][64]; /* the first differing fields' names, for the one-line message */
    bool nomem;        /* a table could not be sorted by index: the check is an ERROR */
} hdr_cmp;

static void hdr_differs(hdr_cmp *h, const char *field, const char *a, const char *b)
{
    if (h->n < 3)
        snprintf(h->first[h->n], sizeof h->first[0], "%s", field);
    h->n++;
    dg_report_check_add_value(h->c, field, a, b);
}

static void hdr_u64(hdr_cmp *h, const char *field, uint64_t a, uint64_t b)
{
    if (a == b)
        return;
    char va[24], vb[24];
    snprintf(va, sizeof va, "%llu", (unsigned long long)a);
    snprintf(vb, sizeof vb, "%llu", (unsigned long long)b);
    hdr_differs(h, field, va, vb);
}

static void hdr_str(hdr_cmp *h, const char *field, dg_flrep_str a, dg_flrep_str b)
{
    if (hdr_str_equal(a, b))
        return;
    char va[HDR_VALUE_CAP], vb[HDR_VALUE_CAP];
    hdr_differs(h, field, hdr_quote(va, sizeof va, a), hdr_quote(vb, sizeof vb, b));
}

/* Bit for bit: the radius is written as an IEEE double, and -0.0 or a NaN payload is a difference too. */
static void hdr_f64(hdr_cmp *h, const char *field, double a, double b)
{
    if (memcmp(&a, &b, sizeof a) == 0)
        return;
    char va[40], vb[40];
    snprintf(va, sizeof va, "%.17g", a);
    snprintf(vb, sizeof vb, "%.17g", b);
    hdr_differs(h, field, va, vb);
}

/* "type[2].name": a table row's field. */
static const char *hdr_field(char *buf, size_t cap, const char *row, const char *name)
{
    snprintf(buf, cap, "%s.%s", row, name);
    return buf;
}

/* A row present on one side only: the row named, the side that has it summarized. */
static void hdr_row_one_side(hdr_cmp *h, const char *row, const char *summary, bool in_a)
{
    hdr_differs(h, row, in_a ? summary : NULL, in_a ? NULL : summary);
}

/* A table row's place: its index (what a record refers to) and where it sits in the table. */
typedef struct hdr_slot {
    uint16_t index;
    uint32_t pos;
} hdr_slot;

static int hdr_slot_cmp(const void *pa, const void *pb)
{
    const hdr_slot *x = pa, *y = pb;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos; /* a repeated index: in table order */
}

/* The rows of a table in index order. n rows of `size` bytes, each starting with its uint16_t index
 * (dg_flrep_type and dg_flrep_faction both do). NULL when out of memory (n > 0). */
static hdr_slot *hdr_by_index(const void *rows, size_t n, size_t size)
{
    hdr_slot *v = n ? malloc(n * sizeof *v) : NULL;
    for (size_t i = 0; v && i < n; i++) {
        memcpy(&v[i].index, (const char *)rows + i * size, sizeof v[i].index);
        v[i].pos = (uint32_t)i;
    }
    if (v)
        qsort(v, n, sizeof *v, hdr_slot_cmp);
    return v;
}

/* Pairs the rows of two tables by index: row(h, i, j, ctx) for each pair (i or j SIZE_MAX on the
 * side that has no row of that index). Their order in the tables is not compared: a record names a
 * row by its index, so a table written in another order (or with gaps) means the same. */
static void hdr_match_rows(hdr_cmp *h, const void *ra, size_t na, const void *rb, size_t nb, size_t size,
                           void (*row)(hdr_cmp *, size_t, size_t, const void *, const void *), const void *a,
                           const void *b)
{
    hdr_slot *x = hdr_by_index(ra, na, size), *y = hdr_by_index(rb, nb, size);
    if ((na && !x) || (nb && !y)) {
        h->nomem = true;
        na = nb = 0;
    }
    for (size_t i = 0, j = 0; i < na || j < nb;) {
        bool take_a = i < na && (j >= nb || x[i].index <= y[j].index);
        bool take_b = j < nb && (i >= na || y[j].index <= x[i].index);
        row(h, take_a ? x[i].pos : SIZE_MAX, take_b ? y[j].pos : SIZE_MAX, a, b);
        i += take_a;
        j += take_b;
    }
    free(x);
    free(y);
}

/* A type or faction row's id and name, the part the two tables share: the row named "table[index]"
 * into row, a row on one side only (x or y NULL) reported summarized by its id and name (`"red"
 * "Red"`), else its id and name compared. True when both sides have it (the caller compares the rest). */
static bool hdr_named_row(hdr_cmp *h, char *row, size_t cap, const char *table, uint16_t index,
                          const dg_flrep_str *x_id, const dg_flrep_str *x_name, const dg_flrep_str *y_id,
                          const dg_flrep_str *y_name)
{
    snprintf(row, cap, "%s[%u]", table, (unsigned)index);
    if (!x_id || !y_id) {
        char q[HDR_VALUE_CAP], q2[HDR_VALUE_CAP], s[2 * HDR_VALUE_CAP + 8];
        snprintf(s, sizeof s, "%s %s", hdr_quote(q, sizeof q, x_id ? *x_id : *y_id),
                 hdr_quote(q2, sizeof q2, x_id ? *x_name : *y_name));
        hdr_row_one_side(h, row, s, x_id != NULL);
        return false;
    }
    char f[64];
    hdr_str(h, hdr_field(f, sizeof f, row, "id"), *x_id, *y_id);
    hdr_str(h, hdr_field(f, sizeof f, row, "name"), *x_name, *y_name);
    return true;
}

static void hdr_type_row(hdr_cmp *h, size_t i, size_t j, const void *pa, const void *pb)
{
    const dg_flrep_header *a = pa, *b = pb;
    const dg_flrep_type *x = i != SIZE_MAX ? &a->types[i] : NULL, *y = j != SIZE_MAX ? &b->types[j] : NULL;
    char row[48], f[64];
    if (!hdr_named_row(h, row, sizeof row, "type", x ? x->index : y->index, x ? &x->id : NULL, x ? &x->name : NULL,
                       y ? &y->id : NULL, y ? &y->name : NULL))
        return;
    hdr_u64(h, hdr_field(f, sizeof f, row, "category"), x->category, y->category);
    hdr_u64(h, hdr_field(f, sizeof f, row, "projectile"), x->projectile_kind, y->projectile_kind);
}

static void hdr_faction_row(hdr_cmp *h, size_t i, size_t j, const void *pa, const void *pb)
{
    const dg_flrep_header *a = pa, *b = pb;
    const dg_flrep_faction *x = i != SIZE_MAX ? &a->factions[i] : NULL, *y = j != SIZE_MAX ? &b->factions[j] : NULL;
    char row[48];
    hdr_named_row(h, row, sizeof row, "faction", x ? x->index : y->index, x ? &x->id : NULL, x ? &x->name : NULL,
                  y ? &y->id : NULL, y ? &y->name : NULL);
}

static void hdr_types(hdr_cmp *h, const dg_flrep_header *a, const dg_flrep_header *b)
{
    hdr_u64(h, "types", a->type_count, b->type_count);
    hdr_match_rows(h, a->types, a->type_count, b->types, b->type_count, sizeof *a->types, hdr_type_row, a, b);
}

static void hdr_factions(hdr_cmp *h, const dg_flrep_header *a, const dg_flrep_header *b)
{
    hdr_u64(h, "factions", a->faction_count, b->faction_count);
    hdr_match_rows(h, a->factions, a->faction_count, b->factions, b->faction_count, sizeof *a->factions,
                   hdr_faction_row, a, b);
}

static void hdr_roster(hdr_cmp *h, const dg_flrep_header *a, const dg_flrep_header *b)
{
    hdr_u64(h, "participants", a->participant_count, b->participant_count);
    size_t n = a->participant_count > b->participant_count ? a->participant_count : b->participant_count;
    for (size_t i = 0; i < n; i++) {
        const dg_flrep_participant *x = i < a->participant_count ? &a->participants[i] : NULL;
        const dg_flrep_participant *y = i < b->participant_count ? &b->participants[i] : NULL;
        char row[48], f[64], q[HDR_VALUE_CAP], s[HDR_VALUE_CAP + 32];
        snprintf(row, sizeof row, "participant[%lu]", (unsigned long)(x ? x->participant_id : y->participant_id));
        if (!x || !y) {
            const dg_flrep_participant *t = x ? x : y;
            snprintf(s, sizeof s, "entity %lu %s", (unsigned long)t->entity_id, hdr_quote(q, sizeof q, t->callsign));
            hdr_row_one_side(h, row, s, x != NULL);
            continue;
        }
        hdr_u64(h, hdr_field(f, sizeof f, row, "participant id"), x->participant_id, y->participant_id);
        hdr_u64(h, hdr_field(f, sizeof f, row, "entity id"), x->entity_id, y->entity_id);
        hdr_str(h, hdr_field(f, sizeof f, row, "callsign"), x->callsign, y->callsign);
    }
    hdr_u64(h, "mission objects", a->mission_object_count, b->mission_object_count);
    n = a->mission_object_count > b->mission_object_count ? a->mission_object_count : b->mission_object_count;
    for (size_t i = 0; i < n; i++) {
        const dg_flrep_mission_object *x = i < a->mission_object_count ? &a->mission_objects[i] : NULL;
        const dg_flrep_mission_object *y = i < b->mission_object_count ? &b->mission_objects[i] : NULL;
        char row[48], f[64], q[HDR_VALUE_CAP], s[HDR_VALUE_CAP + 32];
        snprintf(row, sizeof row, "mission object[%zu]", i);
        if (!x || !y) {
            const dg_flrep_mission_object *t = x ? x : y;
            snprintf(s, sizeof s, "%s entity %lu", hdr_quote(q, sizeof q, t->object_id), (unsigned long)t->entity_id);
            hdr_row_one_side(h, row, s, x != NULL);
            continue;
        }
        hdr_str(h, hdr_field(f, sizeof f, row, "object id"), x->object_id, y->object_id);
        hdr_u64(h, hdr_field(f, sizeof f, row, "entity id"), x->entity_id, y->entity_id);
    }
}

/* What differs between two runs of the same build on purpose: shown beside the check, never compared. */
static void hdr_shown(dg_report_check *c, const dg_flrep_header *a, const dg_flrep_header *b)
{
    char qa[HDR_VALUE_CAP], qb[HDR_VALUE_CAP];
    dg_report_check_add_detail(c, "not compared: engine version A %s, B %s", hdr_quote(qa, sizeof qa, a->engine_version),
                               hdr_quote(qb, sizeof qb, b->engine_version));
    dg_report_check_add_detail(c, "not compared: start time A %llu, B %llu (Unix seconds)",
                               (unsigned long long)a->start_unix_seconds, (unsigned long long)b->start_unix_seconds);
    dg_report_check_add_detail(c, "not compared: format version A %u.%u, B %u.%u", (unsigned)a->major,
                               (unsigned)a->minor, (unsigned)b->major, (unsigned)b->minor);
}

/* One declared field as a line: "angvel float quantum 0.000244140625 unit rad/s". */
static void field_text(const dg_field_def *d, char *out, size_t cap)
{
    static const char *const types[] = {"?", "int", "uint", "float", "bool", "enum", "bytes"};
    int n = snprintf(out, cap, "%s %s", d->name, d->type <= 6 ? types[d->type] : "?");
    if (d->type == DG_FIELD_FLOAT)
        n += snprintf(out + n, cap - (size_t)n, " quantum %.17g", d->quantum);
    else if (d->type != DG_FIELD_BOOL && d->type != DG_FIELD_ENUM)
        n += snprintf(out + n, cap - (size_t)n, " %u %s", d->bits, d->type == DG_FIELD_BYTES ? "bytes" : "bits");
    for (size_t k = 0; d->type == DG_FIELD_ENUM && k < d->enum_count && (size_t)n < cap; k++)
        n += snprintf(out + n, cap - (size_t)n, "%s%s", k ? "," : " ", d->enum_names[k]);
    if ((size_t)n < cap && d->unit && d->unit[0])
        snprintf(out + n, cap - (size_t)n, " unit %s", d->unit);
}

/* The entity schemas (a 1.x file's is the legacy one): standard fields, quanta, declared fields. */
static void hdr_schema(hdr_cmp *h, const dg_flrep_header *a, const dg_flrep_header *b)
{
    const dg_schema *x = a->schema ? a->schema : dg_schema_legacy(), *y = b->schema ? b->schema : dg_schema_legacy();
    char va[HDR_VALUE_CAP], vb[HDR_VALUE_CAP], name[40];
    if (x->std_mask != y->std_mask) {
        static const char *const std[] = {"type", "faction", "pos", "vel", "rot", "health", "flags"};
        size_t na = 0, nb = 0;
        va[0] = vb[0] = 0;
        for (int i = 0; i < 7; i++) {
            if (x->std_mask & (1u << i))
                na += (size_t)snprintf(va + na, sizeof va - na, "%s%s", na ? "," : "", std[i]);
            if (y->std_mask & (1u << i))
                nb += (size_t)snprintf(vb + nb, sizeof vb - nb, "%s%s", nb ? "," : "", std[i]);
        }
        hdr_differs(h, "standard fields", na ? va : "(none)", nb ? vb : "(none)");
    }
    hdr_f64(h, "position quantum", x->pos_quantum_m, y->pos_quantum_m);
    hdr_f64(h, "velocity quantum", x->vel_quantum_mps, y->vel_quantum_mps);
    for (size_t f = 0; f < x->field_count || f < y->field_count; f++) {
        snprintf(name, sizeof name, "field[%zu]", f);
        if (f < x->field_count)
            field_text(&x->fields[f], va, sizeof va);
        if (f < y->field_count)
            field_text(&y->fields[f], vb, sizeof vb);
        if (f >= x->field_count || f >= y->field_count || strcmp(va, vb) != 0)
            hdr_differs(h, name, f < x->field_count ? va : "(none)", f < y->field_count ? vb : "(none)");
    }
}

int dg_harness__compare_headers(dg_report_scenario *sc, const char *pa, const char *pb)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "header", DG_REPORT_PASS);
    if (!c)
        return -1;
    dg_flrep_reader *ra = NULL, *rb = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_file(&ra, pa, NULL, &err) != DG_OK ||
        dg_flrep_reader_open_file(&rb, pb, NULL, &err) != DG_OK) {
        char buf[512];
        dg_error_format(&err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        dg_flrep_reader_close(ra);
        return -1;
    }
    const dg_flrep_header *a = dg_flrep_reader_header(ra), *b = dg_flrep_reader_header(rb);
    hdr_cmp h = {c, 0, {"", "", ""}, false};
    hdr_u64(&h, "tick rate", a->tick_rate_hz, b->tick_rate_hz);
    hdr_f64(&h, "planet radius", a->planet_radius_m, b->planet_radius_m);
    hdr_u64(&h, "keyframe interval", a->keyframe_interval_ticks, b->keyframe_interval_ticks);
    hdr_u64(&h, "session flags", a->session_flags, b->session_flags);
    hdr_str(&h, "mission id", a->mission_id, b->mission_id);
    hdr_types(&h, a, b);
    hdr_factions(&h, a, b);
    hdr_roster(&h, a, b);
    hdr_schema(&h, a, b);
    if (h.n)
        dg_report_check_set_message(c, "%lu header and table value%s differ%s: %s%s%s%s%s%s", (unsigned long)h.n,
                                    h.n == 1 ? "" : "s", h.n == 1 ? "s" : "", h.first[0], h.n > 1 ? ", " : "",
                                    h.first[1], h.n > 2 ? ", " : "", h.first[2], h.n > 3 ? ", ..." : "");
    else if (a->schema && !dg_schema_is_legacy(a->schema)) /* a declared schema: what it has, no planet assumed */
        dg_report_check_set_message(c, "tick rate, %skeyframe interval, session flags, mission id, the entity schema "
                                       "(%zu declared field%s)%s%s and the %zu participants equal",
                                    a->planet_radius_m > 0 ? "planet radius, " : "", a->schema->field_count,
                                    dg_report_plural_s(a->schema->field_count),
                                    a->schema->std_mask & DG_STD_TYPE ? ", the types" : "",
                                    a->schema->std_mask & DG_STD_FACTION ? ", the factions" : "",
                                    a->participant_count);
    else
        dg_report_check_set_message(c, "tick rate, planet radius, keyframe interval, session flags, mission id and "
                                       "the %zu types, %zu factions, %zu participants and %zu mission objects equal",
                                    a->type_count, a->faction_count, a->participant_count, a->mission_object_count);
    hdr_shown(c, a, b);
    if (h.nomem) {
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "out of memory comparing the type and faction tables");
    }
    dg_flrep_reader_close(ra);
    dg_flrep_reader_close(rb);
    c->duration_s = dg_harness__now() - t0;
    return h.nomem ? -1 : h.n ? 1 : 0;
}
