/* harness/hash_views.c — what a comparison by hash (a hash-log golden, diff with a hash log on one
 * side) can still show: with per-entity hashes on both sides (a log with entity lines, a .flrep
 * recording replayed) the spread, how many distinct entities had diverged by each tick; with
 * states on a side (a recording) the trajectory, on that side, of the entity that diverged first.
 * What the data does not allow is said in one detail line instead of a chart left out unexplained. */
#include "harness_internal.h"

#include <stdlib.h>
#include <string.h>

#define HV_BEFORE 120 /* the trajectory window around the first divergence, as compare.c's */
#define HV_AFTER 240

typedef struct hv_side {
    harness__view_kind kind;
    const char *path;
    dg_hash_log_reader *log;
    dg_flrep_reader *rd;
    bool entities; /* per-entity hashes at every tick the side has */
    bool have;     /* a tick was read */
    uint64_t every; /* a log's largest step between two ticks: > 1 for a sampled log */
    int rc;        /* 1: the fields below hold a tick; 0: the end or an error */
    uint64_t tick, state, events;
    size_t n;
    const uint32_t *ids;
    const uint64_t *eh;
    uint32_t *idbuf;
    uint64_t *ehbuf;
    size_t cap;
} hv_side;

static bool hv_open(hv_side *s, const char *path, harness__view_kind kind)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->path = path;
    dg_error err;
    dg_error_clear(&err);
    if (kind == HARNESS_VIEW_LOG && dg_hash_log_reader_open(&s->log, path, &err) == DG_OK) {
        s->entities = dg_hash_log_reader_header(s->log)->entities;
        return true;
    }
    if (kind == HARNESS_VIEW_FLREP && dg_flrep_reader_open_file(&s->rd, path, NULL, &err) == DG_OK) {
        s->entities = true;
        return true;
    }
    return false;
}

static void hv_close(hv_side *s)
{
    dg_hash_log_reader_close(s->log);
    dg_flrep_reader_close(s->rd);
    free(s->idbuf);
    free(s->ehbuf);
}

static bool hv_fit(hv_side *s, size_t n)
{
    if (n <= s->cap)
        return true;
    size_t nc = s->cap ? s->cap * 2 : 1024;
    while (nc < n)
        nc *= 2;
    uint32_t *ids = realloc(s->idbuf, nc * sizeof *ids);
    if (ids)
        s->idbuf = ids;
    uint64_t *eh = realloc(s->ehbuf, nc * sizeof *eh);
    if (eh)
        s->ehbuf = eh;
    if (!ids || !eh)
        return false;
    s->cap = nc;
    return true;
}

/* The next tick of the side (an error ends it: the comparison itself has said what went wrong). */
static void hv_next(hv_side *s)
{
    dg_error err;
    dg_error_clear(&err);
    s->rc = 0;
    if (s->log) {
        dg_hash_log_tick lt;
        if (dg_hash_log_reader_next(s->log, &lt, &err) != 1)
            return;
        uint64_t step = s->have ? lt.tick - s->tick : 0;
        *s = (hv_side){.kind = s->kind, .path = s->path, .log = s->log, .entities = s->entities, .rc = 1,
                       .have = true, .every = step > s->every ? step : s->every,
                       .tick = lt.tick, .state = lt.state, .events = lt.events, .n = lt.entity_count,
                       .ids = lt.ids, .eh = lt.hashes, .idbuf = s->idbuf, .ehbuf = s->ehbuf, .cap = s->cap};
        if (s->entities && (!lt.ids || !lt.hashes))
            s->entities = false;
        return;
    }
    dg_flrep_tick t;
    if (!s->rd || dg_flrep_reader_next(s->rd, &t, &err) != 1 || !hv_fit(s, t.ent_count))
        return;
    for (size_t i = 0; i < t.ent_count; i++)
        s->idbuf[i] = t.ents[i].id;
    dg_tick_hash th = dg_hash_tick(t.tick, t.ents, t.ent_count, t.events, t.event_count, s->ehbuf);
    s->rc = 1;
    s->tick = t.tick;
    s->state = th.state;
    s->events = th.events;
    s->n = t.ent_count;
    s->ids = s->idbuf;
    s->eh = s->ehbuf;
}

/* The distinct entities diverged so far: a sorted array (one insertion per entity, ever). */
typedef struct hv_seen {
    uint32_t *v;
    size_t n, cap;
    bool nomem;
} hv_seen;

static bool hv_seen_add(hv_seen *s, uint32_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->n && s->v[lo] == id)
        return false;
    if (!dg_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
        s->nomem = true;
        return false;
    }
    memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof *s->v);
    s->v[lo] = id;
    s->n++;
    return true;
}

/* One tick on both sides whose state hashes differ: every entity on one side only or with another
 * hash has diverged. *first gets the lowest such id the first time. */
static void hv_tick(dg_report_check *c, const hv_side *a, const hv_side *b, hv_seen *seen, uint32_t *first,
                    uint64_t *first_tick)
{
    size_t before = seen->n, i = 0, j = 0;
    while (i < a->n || j < b->n) {
        uint32_t id;
        if (j >= b->n || (i < a->n && a->ids[i] < b->ids[j])) {
            id = a->ids[i++];
        } else if (i >= a->n || b->ids[j] < a->ids[i]) {
            id = b->ids[j++];
        } else {
            bool same = a->eh[i] == b->eh[j];
            id = a->ids[i];
            i++;
            j++;
            if (same)
                continue;
        }
        if (*first_tick == DG_REPORT_TICK_NONE) {
            *first = id; /* ids come in ascending order: the lowest of the first divergent tick */
            *first_tick = a->tick;
        }
        hv_seen_add(seen, id);
    }
    if (seen->n > before)
        dg_report_check_add_spread(c, a->tick, seen->n > UINT32_MAX ? UINT32_MAX : (uint32_t)seen->n);
}

/* The followed entity's positions on a recording's side, around its first divergence. */
static void hv_points(dg_report_check *c, const char *path, char side, uint32_t id, uint64_t first)
{
    dg_flrep_reader *r = NULL;
    dg_error err; /* best effort: a read error only shortens the path */
    dg_error_clear(&err);
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK)
        return;
    dg_flrep_tick t;
    if (dg_flrep_reader_seek(r, first > HV_BEFORE ? first - HV_BEFORE : 0, &err) == DG_OK)
        while (dg_flrep_reader_next(r, &t, &err) == 1 && t.tick <= first + HV_AFTER)
            for (size_t k = 0; k < t.ent_count; k++)
                if (t.ents[k].id == id) {
                    double m[3];
                    dg_quant_pos_m(&t.ents[k], m);
                    dg_report_check_add_point(c, side, t.tick, m[0], m[1], m[2]);
                    break;
                }
    dg_flrep_reader_close(r);
}

static const char *hv_what(harness__view_kind k)
{
    return k == HARNESS_VIEW_LOG ? "a hash log" : k == HARNESS_VIEW_FLREP ? "a recording" : "an RPLY recording";
}

/* The trajectory from each side that holds states, and a line saying what it is. */
static void hv_trajectory(dg_report_check *c, const hv_side *a, const hv_side *b, uint32_t id, uint64_t first,
                          const char *const names[2])
{
    bool sa = a->kind == HARNESS_VIEW_FLREP, sb = b->kind == HARNESS_VIEW_FLREP;
    if (!sa && !sb) {
        dg_report_check_add_detail(c, "no trajectory: neither side holds entity states (%s is %s, %s %s)", names[0],
                                   hv_what(a->kind), names[1], hv_what(b->kind));
        return;
    }
    char nb[DG_REPORT_NAME_CAP];
    const dg_flrep_header *h = dg_flrep_reader_header(sa ? a->rd : b->rd);
    const char *name = dg_harness__entity_name(h, id, nb, sizeof nb);
    if (dg_report_check_set_trajectory(c, id, name && name[0] ? name : NULL) != DG_OK)
        return;
    dg_report_check_set_trajectory_reason(c, first, NULL, NULL, 0);
    if (sa)
        hv_points(c, a->path, 'A', id, first);
    if (sb)
        hv_points(c, b->path, 'B', id, first);
    if (sa && sb)
        dg_report_check_add_detail(c, "trajectory of entity %u, the lowest id among those that diverged first (a "
                                      "hash does not say by how much)",
                                   (unsigned)id);
    else
        dg_report_check_add_detail(c, "trajectory of entity %u, the lowest id among those that diverged first (a "
                                      "hash does not say by how much), on %s only: %s is %s",
                                   (unsigned)id, names[sb], names[sa], hv_what(sa ? b->kind : a->kind));
}

/* Opens both sides, the logs first: when a log has no entity lines there is nothing to compare a
 * recording's entity hashes with, and it is not read (a reader loads the whole file). */
static void hv_open_both(hv_side *a, const char *pa, harness__view_kind ka, bool *oa, hv_side *b, const char *pb,
                         harness__view_kind kb, bool *ob)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    a->kind = ka;
    b->kind = kb;
    *oa = *ob = true;
    if (ka == HARNESS_VIEW_LOG)
        *oa = hv_open(a, pa, ka);
    if (kb == HARNESS_VIEW_LOG)
        *ob = hv_open(b, pb, kb);
    bool moot = (ka == HARNESS_VIEW_LOG && !a->entities) || (kb == HARNESS_VIEW_LOG && !b->entities);
    if (ka != HARNESS_VIEW_LOG && !moot)
        *oa = hv_open(a, pa, ka);
    if (kb != HARNESS_VIEW_LOG && !moot)
        *ob = hv_open(b, pb, kb);
}

void dg_harness__hash_views(dg_report_check *c, const char *pa, harness__view_kind ka, const char *pb,
                         harness__view_kind kb, const char *const names[2])
{
    static const char *const ab[2] = {"side A", "side B"};
    if (!names)
        names = ab;
    if (c->divergent_ticks == 0)
        return;
    hv_side a, b;
    bool oa, ob;
    hv_open_both(&a, pa, ka, &oa, &b, pb, kb, &ob);
    if (!oa || !ob || !a.entities || !b.entities) {
        /* the first reason in this order: a log without entity lines, an RPLY side, a read error */
        const hv_side *no = oa && ka == HARNESS_VIEW_LOG && !a.entities   ? &a
                            : ob && kb == HARNESS_VIEW_LOG && !b.entities ? &b
                            : !oa || !a.entities                          ? &a
                                                                          : &b;
        bool other = no->kind == HARNESS_VIEW_OTHER;
        if (other)
            dg_report_check_add_detail(c, "no spread or trajectory: the comparison is by tick hashes, and an RPLY "
                                          "recording's entity hashes are not read for it (diff two RPLY recordings "
                                          "for the entity diff)");
        else if (no->kind == HARNESS_VIEW_LOG && (no == &a ? oa : ob))
            dg_report_check_add_detail(c, "no spread or trajectory: %s is a hash log without entity lines, so "
                                          "which entities diverged is not known (`record --hash-log L --log-entities` "
                                          "writes a log that has them; or diff a recording made at that revision)",
                                       names[no == &b]);
        else
            dg_report_check_add_detail(c, "no spread or trajectory: %s could not be read again for them",
                                       names[no == &b]);
        hv_close(&a);
        hv_close(&b);
        return;
    }
    hv_seen seen = {0};
    uint32_t first = 0;
    uint64_t first_tick = DG_REPORT_TICK_NONE;
    hv_next(&a);
    hv_next(&b);
    while (a.rc == 1 && b.rc == 1 && a.entities && b.entities) {
        if (a.tick < b.tick) {
            hv_next(&a);
        } else if (b.tick < a.tick) {
            hv_next(&b);
        } else {
            if (a.state != b.state || a.n != b.n)
                hv_tick(c, &a, &b, &seen, &first, &first_tick);
            hv_next(&a);
            hv_next(&b);
        }
    }
    const hv_side *smp = a.kind == HARNESS_VIEW_LOG && a.every > 1   ? &a
                         : b.kind == HARNESS_VIEW_LOG && b.every > 1 ? &b
                                                                     : NULL;
    if (smp) /* a hash-log-only golden's entity log (harness/golden_entities.c) */
        dg_report_check_add_detail(c, "%s holds entity hashes every %llu ticks only (a sampled entity log): the "
                                      "spread counts the entities diverged at those ticks, and the entity followed "
                                      "is the lowest id among those diverged at the first of them with a difference",
                                   names[smp == &b], (unsigned long long)smp->every);
    if (first_tick != DG_REPORT_TICK_NONE)
        hv_trajectory(c, &a, &b, first, first_tick, names);
    else
        dg_report_check_add_detail(c, "no spread or trajectory: no entity differs where both sides have the tick "
                                      "(the ticks differ in events or in length only)");
    free(seen.v);
    hv_close(&a);
    hv_close(&b);
}
