/* harness/engine.c — the two sides of the gate: the record side (source -> real quantizer and writer
 * -> hash of exactly the quantized state that was written) and the replay side (real reader ->
 * rebuilt state -> hash). Both keep only the per-tick hashes; entity states are re-derived when a
 * diff needs them, so memory stays flat however long the recording. */
#include "harness_internal.h"
#include "test_hooks.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void dg_harness__stream_free(harness__stream *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

dg_status dg_harness__stream_push(harness__stream *s, const harness__tickrec *r, dg_error *err)
{
    if (s->count_only) {
        s->n++;
        s->entity_ticks += r->count;
        return DG_OK;
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        harness__tickrec *v = realloc(s->v, nc * sizeof *v);
        if (!v)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash stream", "out of memory");
        s->v = v;
        s->cap = nc;
    }
    s->v[s->n++] = *r;
    s->entity_ticks += r->count;
    return DG_OK;
}

dg_status dg_harness__stream_reserve(harness__stream *s, uint64_t n, dg_error *err)
{
    /* a count from a file or a scenario is a hint only: never reserve past 256 M ticks */
    if (s->count_only || n <= s->cap || n > (UINT64_C(1) << 28))
        return DG_OK;
    harness__tickrec *v = realloc(s->v, (size_t)n * sizeof *v);
    if (!v)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash stream", "out of memory (%llu ticks)",
                            (unsigned long long)n);
    s->v = v;
    s->cap = (size_t)n;
    return DG_OK;
}

size_t dg_harness__stream_find(const harness__stream *s, uint64_t tick)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].tick < tick)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < s->n && s->v[lo].tick == tick) ? lo : SIZE_MAX;
}

/* Scratch arrays that grow to the widest tick seen, never per tick. */
typedef struct scratch {
    dg_qentity *q;
    uint64_t *eh;
    uint32_t *ids;
    uint64_t *rh; /* per-entity raw hashes (record side, hash log version 2) */
    size_t cap;
    uint64_t *rb; /* the raw values' bits (record side, hash log version 3) */
    size_t rb_cap;
} scratch;

static dg_status scratch_fit(scratch *s, size_t n, dg_error *err)
{
    if (n <= s->cap)
        return DG_OK;
    size_t nc = s->cap ? s->cap : 256;
    while (nc < n)
        nc *= 2;
    dg_qentity *q = realloc(s->q, nc * sizeof *q);
    if (q)
        s->q = q;
    uint64_t *eh = realloc(s->eh, nc * sizeof *eh);
    if (eh)
        s->eh = eh;
    uint32_t *ids = realloc(s->ids, nc * sizeof *ids);
    if (ids)
        s->ids = ids;
    uint64_t *rh = realloc(s->rh, nc * sizeof *rh);
    if (rh)
        s->rh = rh;
    if (!q || !eh || !ids || !rh)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "harness", "out of memory (%zu entities)", n);
    s->cap = nc;
    return DG_OK;
}

static void scratch_free(scratch *s)
{
    free(s->q);
    free(s->eh);
    free(s->ids);
    free(s->rh);
    free(s->rb);
    memset(s, 0, sizeof *s);
}

/* One entity's raw hash (docs/STATE-HASH.md §6 over that entity alone): the floats the sources
 * hash for the tick's raw hash, in the same order, so the tick's drift can be pinned to an entity. */
static uint64_t entity_raw_hash(uint64_t tick, const dg_entity_in *e, const double *xraw, size_t k)
{
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    dg_harness__raw_entity(&hs, e, xraw, k);
    return dg_hash_raw_end(&hs);
}

void dg_harness__raw_entity(dg_hash_stream *hs, const dg_entity_in *e, const double *xraw, size_t k)
{
    /* filled, not initialised: an initialiser would zero the 32 declared-field slots for every entity */
    double raw[HARNESS_RAW_FIELDS + HARNESS_DECL_MAX_FIELDS];
    size_t m = dg_harness__raw_floats(e, xraw, k, raw);
    dg_hash_raw_entity(hs, e->id, raw, m);
}

/* The frame's raw values as bit patterns, nvals per entity (hash log version 3), into sc->rb. */
static dg_status raw_bits(const harness__frame *f, uint32_t nvals, scratch *sc, dg_error *err)
{
    if (!dg_grow((void **)&sc->rb, &sc->rb_cap, f->n * nvals + 1, sizeof *sc->rb))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "harness", "out of memory (%zu entities)", f->n);
    for (size_t i = 0; i < f->n; i++) {
        double raw[HARNESS_RAW_FIELDS + HARNESS_DECL_MAX_FIELDS];
        size_t m = dg_harness__raw_floats(&f->ents[i], f->xraw ? f->xraw + i * f->nxraw : NULL, f->nxraw, raw);
        if (m != nvals)
            return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "hash log",
                                "tick %llu entity %u: %zu raw values, the log's header names %u",
                                (unsigned long long)f->tick, (unsigned)f->ents[i].id, m, (unsigned)nvals);
        memcpy(sc->rb + i * nvals, raw, m * sizeof *raw);
    }
    return DG_OK;
}

uint64_t dg_harness__raw_hash(uint64_t tick, const dg_entity_in *ents, size_t n)
{
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    for (size_t i = 0; i < n; i++)
        dg_harness__raw_entity(&hs, &ents[i], NULL, 0);
    return dg_hash_raw_end(&hs);
}

static dg_status log_tick(dg_hash_log_writer *log, bool entities, uint32_t nvals, const dg_tick_hash *th,
                          const harness__frame *f, const dg_qentity *q, scratch *sc, dg_error *err)
{
    if (!log)
        return DG_OK;
    dg_hash_log_tick lt = {0};
    lt.tick = th->tick;
    lt.entity_count = th->entity_count;
    lt.state = th->state;
    lt.events = th->events;
    lt.has_raw = f && f->has_raw;
    lt.raw = f ? f->raw : 0;
    if (entities) {
        for (size_t i = 0; i < th->entity_count; i++)
            sc->ids[i] = q[i].id;
        lt.ids = sc->ids;
        lt.hashes = sc->eh;
        if (f && f->has_raw && f->n == th->entity_count) { /* record side: the floats are at hand */
            for (size_t i = 0; i < f->n; i++)
                sc->rh[i] = entity_raw_hash(f->tick, &f->ents[i], f->xraw ? f->xraw + i * f->nxraw : NULL,
                                            f->nxraw);
            lt.raw_hashes = sc->rh;
            dg_status st = nvals ? raw_bits(f, nvals, sc, err) : DG_OK;
            if (st != DG_OK)
                return st;
            lt.raw_bits = nvals ? sc->rb : NULL;
        }
    }
    return dg_hash_log_writer_write(log, &lt, err);
}

/* ---- a version 3 log of the standard floats, tick by tick (the C API's repeat runs) ---------------- */

/* Whether a tick of n entities still goes into a raw log holding *kept entity-ticks: the first ticks
 * up to HARNESS_RAW_LOG_CAP, none after the first that does not fit (the log stays a prefix). */
static bool raw_log_room(uint64_t *kept, size_t n)
{
    if (*kept + n > HARNESS_RAW_LOG_CAP) {
        *kept = HARNESS_RAW_LOG_CAP + 1;
        return false;
    }
    *kept += n;
    return true;
}


struct harness__raw_logger {
    dg_hash_log_writer *w;
    uint32_t nvals;
    bool capped;
    uint64_t kept; /* entity-ticks logged (HARNESS_RAW_LOG_CAP at most when capped) */
    scratch sc;
};

dg_status dg_harness__raw_logger_open(harness__raw_logger **out, const char *path, const char *name, bool capped,
                                      dg_error *err)
{
    *out = NULL;
    harness__raw_logger *l = calloc(1, sizeof *l);
    if (!l)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "harness", "out of memory");
    dg_hash_log_header lh = {.entities = true, .raw = true, .entity_raw = true};
    snprintf(lh.scenario, sizeof lh.scenario, "%s", name);
    snprintf(lh.format, sizeof lh.format, "flrep");
    l->nvals = lh.n_values = dg_harness__raw_value_names(NULL, lh.values, sizeof lh.values);
    l->capped = capped;
    dg_status st = dg_hash_log_writer_open(&l->w, path, &lh, err);
    if (st != DG_OK) {
        free(l);
        return st;
    }
    *out = l;
    return DG_OK;
}

dg_status dg_harness__raw_logger_tick(harness__raw_logger *l, uint64_t tick, const dg_entity_in *sorted,
                                      const dg_qentity *q, const int64_t *xq, size_t nx, size_t n,
                                      const dg_event *ev, size_t nev, dg_error *err)
{
    if (l->capped && !raw_log_room(&l->kept, n))
        return DG_OK;
    dg_status st = scratch_fit(&l->sc, n, err);
    if (st != DG_OK)
        return st;
    dg_tick_hash th = dg_hash_tick_x(tick, q, xq, nx, n, ev, nev, l->sc.eh);
    harness__frame f = {.tick = tick, .ents = sorted, .n = n, .has_raw = true,
                        .raw = dg_harness__raw_hash(tick, sorted, n)};
    return log_tick(l->w, true, l->nvals, &th, &f, q, &l->sc, err);
}

dg_status dg_harness__raw_logger_close(harness__raw_logger *l, dg_error *err)
{
    if (!l)
        return DG_OK;
    dg_status st = dg_hash_log_writer_close(l->w, err);
    scratch_free(&l->sc);
    free(l);
    return st;
}

/* ---- the record side ---------------------------------------------------------------------------- */

/* What one tick of the record side does after the source produced it: write (quantize, encode),
 * hash exactly what was written, keep the hash, log it. */
typedef struct rec_state {
    size_t nx;     /* declared extra fields */
    int64_t *xq;   /* what the writer wrote of them, sorted like sc.q */
    size_t xq_cap;
    dg_flrep_writer *w;
    dg_hash_log_writer *log;
    bool log_entities;
    uint32_t log_values;         /* raw values per entity in log (version 3), 0 = none */
    dg_hash_log_writer *raw_log; /* the second log (harness__record_opts.raw_log): version 3 */
    uint32_t raw_log_values;
    uint64_t raw_log_kept;       /* entity-ticks in it so far (HARNESS_RAW_LOG_CAP at most) */
    scratch sc;
    harness__stream *out;
    dg_error *err;
} rec_state;

/* The tick into the record side's logs (none, one or two). */
static dg_status rec_logs(rec_state *rs, const dg_tick_hash *th, const harness__frame *f)
{
    dg_status st = log_tick(rs->log, rs->log_entities, rs->log_values, th, f, rs->sc.q, &rs->sc, rs->err);
    if (st == DG_OK && rs->raw_log && raw_log_room(&rs->raw_log_kept, f->n))
        st = log_tick(rs->raw_log, true, rs->raw_log_values, th, f, rs->sc.q, &rs->sc, rs->err);
    return st;
}

/* The id an error of the quantizer names ("entity N" as its place, or its message starting so). */
static bool error_entity(const dg_error *err, unsigned *id, bool *in_msg)
{
    *in_msg = false;
    if (sscanf(err->where, "entity %u", id) == 1)
        return true;
    return (*in_msg = sscanf(err->msg, "entity %u:", id) == 1);
}

void dg_harness__frame_locate(const harness__frame *f, dg_error *err)
{
    const harness__at *a = &f->at;
    if (!a->label || err->code == DG_OK || err->code == DG_E_NOMEM || err->code == DG_E_IO)
        return;
    dg_error e = *err;
    unsigned id = 0;
    bool in_msg, ent = error_entity(&e, &id, &in_msg);
    size_t lo = 0, hi = f->n; /* the entity's index: ents are sorted by id */
    while (ent && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->ents[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool ent_at = ent && !a->line && a->ent_bytes && lo < f->n && f->ents[lo].id == id;
    char tick[80], where[sizeof e.where];
    int tn = snprintf(tick, sizeof tick, "tick %llu", (unsigned long long)f->tick);
    if (ent_at) /* the error's offset is the entity's: the tick's record named too */
        snprintf(tick + tn, sizeof tick - (size_t)tn, " (its record at byte %llu)", (unsigned long long)a->at);
    bool names_tick = !ent && strncmp(e.msg, tick, (size_t)tn) == 0 && (e.msg[tn] == ' ' || e.msg[tn] == ':');
    uint64_t off = ent_at ? a->ents_at + (uint64_t)lo * a->ent_bytes : a->at;
    if (a->line)
        snprintf(where, sizeof where, "%s:%llu:1", a->label, (unsigned long long)a->at);
    else
        snprintf(where, sizeof where, "%s", a->label);
    dg_error_clear(err);
    if (names_tick)
        dg_error_set(err, e.code, a->line ? DG_OFFSET_NONE : off, where, "%s", e.msg);
    else if (ent && !in_msg)
        dg_error_set(err, e.code, a->line ? DG_OFFSET_NONE : off, where, "%s, %s: %s", tick, e.where, e.msg);
    else
        dg_error_set(err, e.code, a->line ? DG_OFFSET_NONE : off, where, "%s%s %s", tick, ent ? "," : ":", e.msg);
}

/* rec_tick with declared extra fields: the writer's float-domain form with extras, the hash over them. */
static dg_status rec_tick_x(rec_state *rs, const harness__frame *f)
{
    dg_status st = scratch_fit(&rs->sc, f->n, rs->err);
    if (st == DG_OK && f->n * rs->nx > rs->xq_cap) {
        int64_t *x = realloc(rs->xq, f->n * rs->nx * sizeof *x);
        if (!x)
            return dg_error_set(rs->err, DG_E_NOMEM, DG_OFFSET_NONE, "harness", "out of memory");
        rs->xq = x;
        rs->xq_cap = f->n * rs->nx;
    }
    if (st == DG_OK)
        if ((st = dg_flrep_writer_tick_x(rs->w, f->tick, f->ents, f->extras, f->n, f->events, f->nev, rs->sc.q,
                                         rs->xq, rs->err)) != DG_OK)
            dg_harness__frame_locate(f, rs->err);
    if (st != DG_OK)
        return st;
    dg_tick_hash th = dg_hash_tick_x(f->tick, rs->sc.q, rs->xq, rs->nx, f->n, f->events, f->nev, rs->sc.eh);
    harness__tickrec r = {f->tick, th.state, th.events, th.combined, f->raw, th.entity_count, f->has_raw};
    if ((st = dg_harness__stream_push(rs->out, &r, rs->err)) != DG_OK)
        return st;
    return rec_logs(rs, &th, f);
}

static dg_status rec_tick(rec_state *rs, const harness__frame *fin)
{
    harness__frame fr = *fin, *f = &fr;
    if (f->raw_later) { /* the source left it to this thread (record_loop, piped) */
        f->raw = dg_harness__raw_hash(f->tick, f->ents, f->n);
        f->raw_later = false;
    }
    if (rs->nx)
        return rec_tick_x(rs, f);
    dg_status st = scratch_fit(&rs->sc, f->n, rs->err);
    if (st == DG_OK)
        if ((st = dg_flrep_writer_tick(rs->w, f->tick, f->ents, f->n, f->events, f->nev, rs->sc.q, rs->err)) != DG_OK)
            dg_harness__frame_locate(f, rs->err);
    if (st != DG_OK)
        return st;
    /* The record side hashes what the writer handed back: exactly what went to disk. */
    dg_tick_hash th = dg_hash_tick(f->tick, rs->sc.q, f->n, f->events, f->nev, rs->sc.eh);
    harness__tickrec r = {f->tick, th.state, th.events, th.combined, f->raw, th.entity_count, f->has_raw};
    if ((st = dg_harness__stream_push(rs->out, &r, rs->err)) != DG_OK)
        return st;
    return rec_logs(rs, &th, f);
}

/* When the thread budget spares one, the source keeps running on the calling thread (an engine
 * may expect that) and the writing, hashing and logging move to a second thread, fed blocks of
 * copied frames in tick order: the simulation no longer waits for the codec. The outcome is the
 * one-thread loop's: the same ticks reach rec_tick in the same order, and the first error in tick
 * order is the one returned (the source may have run a block ahead; nothing it produced after a
 * failed tick is written). */
#define REC_BLOCK_TICKS 256
#define REC_BLOCKS 4

typedef struct rec_fhdr {
    uint64_t tick, raw;
    size_t n, ent_off, nev, ev_off;
    bool has_raw, raw_later;
    size_t x_off; /* its declared fields' slots in the block's x */
    size_t xr_off, nxraw; /* its float fields' raw values in the block's xr */
    harness__at at;
} rec_fhdr;

typedef struct rec_block {
    rec_fhdr f[REC_BLOCK_TICKS];
    size_t nf;
    dg_entity_in *ents;
    size_t ents_n, ents_cap;
    dg_event *evs;
    size_t *text_off; /* per event: where its text starts in text */
    size_t evs_n, evs_cap;
    char *text;
    size_t text_n, text_cap;
    int64_t *x; /* declared fields' slots */
    size_t x_n, x_cap, nx;
    double *xr; /* declared float fields' raw values */
    size_t xr_n, xr_cap;
} rec_block;

typedef struct rec_pipe {
    rec_state *rs;
    rec_block blk[REC_BLOCKS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t filled, consumed; /* blocks handed over / done (under mu) */
    bool eof;                /* the producer hands over no more (under mu) */
    bool failed;             /* rec_tick failed: the producer stops (under mu) */
    dg_status st;            /* the consumer's */
} rec_pipe;

/* Appends a copy of frame f (its arrays and event texts) to b. */
static bool block_add(rec_block *b, const harness__frame *f)
{
    size_t text = 0;
    for (size_t i = 0; i < f->nev; i++)
        text += f->events[i].text_len;
    size_t ecap = b->evs_cap;
    if (!dg_grow((void **)&b->ents, &b->ents_cap, b->ents_n + f->n, sizeof *b->ents) ||
        !dg_grow((void **)&b->evs, &b->evs_cap, b->evs_n + f->nev, sizeof *b->evs) ||
        !dg_grow((void **)&b->text_off, &ecap, b->evs_n + f->nev, sizeof *b->text_off) ||
        !dg_grow((void **)&b->text, &b->text_cap, b->text_n + text, 1))
        return false;
    size_t nxr = f->xraw ? f->n * f->nxraw : 0;
    if ((b->nx && !dg_grow((void **)&b->x, &b->x_cap, b->x_n + f->n * b->nx, sizeof *b->x)) ||
        (nxr && !dg_grow((void **)&b->xr, &b->xr_cap, b->xr_n + nxr, sizeof *b->xr)))
        return false;
    rec_fhdr *h = &b->f[b->nf++];
    *h = (rec_fhdr){.tick = f->tick, .raw = f->raw, .n = f->n, .ent_off = b->ents_n, .nev = f->nev,
                    .ev_off = b->evs_n, .has_raw = f->has_raw, .raw_later = f->raw_later, .x_off = b->x_n,
                    .xr_off = b->xr_n, .nxraw = f->xraw ? f->nxraw : 0, .at = f->at};
    if (nxr)
        memcpy(b->xr + b->xr_n, f->xraw, nxr * sizeof *b->xr);
    b->xr_n += nxr;
    if (b->nx && f->n)
        memcpy(b->x + b->x_n, f->extras, f->n * b->nx * sizeof *b->x);
    b->x_n += f->n * b->nx;
    if (f->n)
        memcpy(b->ents + b->ents_n, f->ents, f->n * sizeof *f->ents);
    b->ents_n += f->n;
    for (size_t i = 0; i < f->nev; i++) {
        b->evs[b->evs_n] = f->events[i];
        b->text_off[b->evs_n++] = b->text_n;
        if (f->events[i].text_len)
            memcpy(b->text + b->text_n, f->events[i].text, f->events[i].text_len);
        b->text_n += f->events[i].text_len;
    }
    return true;
}

static void block_free(rec_block *b)
{
    free(b->ents);
    free(b->evs);
    free(b->text_off);
    free(b->text);
    free(b->x);
    free(b->xr);
}

static dg_status block_write(rec_state *rs, rec_block *b)
{
    for (size_t i = 0; i < b->evs_n; i++)
        b->evs[i].text = b->evs[i].text_len ? b->text + b->text_off[i] : NULL;
    for (size_t i = 0; i < b->nf; i++) {
        const rec_fhdr *h = &b->f[i];
        harness__frame f = {.tick = h->tick, .ents = b->ents + h->ent_off, .n = h->n, .events = b->evs + h->ev_off,
                            .nev = h->nev, .has_raw = h->has_raw, .raw = h->raw,
                            .extras = b->nx ? b->x + h->x_off : NULL, .xraw = h->nxraw ? b->xr + h->xr_off : NULL,
                            .nxraw = h->nxraw, .raw_later = h->raw_later, .at = h->at};
        dg_status st = rec_tick(rs, &f);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}

static void *rec_consumer(void *arg)
{
    rec_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->consumed == p->filled && !p->eof)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->consumed == p->filled)
            break;
        rec_block *b = &p->blk[p->consumed % REC_BLOCKS];
        pthread_mutex_unlock(&p->mu);
        dg_status st = block_write(p->rs, b);
        pthread_mutex_lock(&p->mu);
        p->consumed++;
        if (st != DG_OK) {
            p->st = st;
            p->failed = true;
            pthread_cond_broadcast(&p->cv);
            break;
        }
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Producer side: hands the filling block over and waits for a free one. False: the consumer failed. */
static bool pipe_hand_over(rec_pipe *p, bool eof)
{
    pthread_mutex_lock(&p->mu);
    if (p->blk[p->filled % REC_BLOCKS].nf > 0)
        p->filled++;
    p->eof = eof;
    pthread_cond_broadcast(&p->cv);
    while (!eof && !p->failed && p->filled - p->consumed >= REC_BLOCKS)
        pthread_cond_wait(&p->cv, &p->mu);
    bool ok = !p->failed;
    rec_block *next = &p->blk[p->filled % REC_BLOCKS]; /* consumed, or never used: free to refill */
    if (!eof)
        next->nf = next->ents_n = next->evs_n = next->text_n = next->x_n = next->xr_n = 0;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

/* Starts the consumer thread of p (its thread already taken from the budget). */
static bool pipe_start(rec_pipe *p, rec_state *rs, pthread_t *tid)
{
    memset(p, 0, sizeof *p);
    p->rs = rs;
    for (int k = 0; k < REC_BLOCKS; k++)
        p->blk[k].nx = rs->nx;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(tid, NULL, rec_consumer, p) == 0)
        return true;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    return false;
}

/* Ends the hand-over, waits for the consumer; returns its status. */
static dg_status pipe_finish(rec_pipe *p, pthread_t tid)
{
    pipe_hand_over(p, true);
    pthread_join(tid, NULL);
    dg_harness__cpu_give(1);
    for (int k = 0; k < REC_BLOCKS; k++)
        block_free(&p->blk[k]);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    return p->st;
}

/* The source's ticks through rec_tick, on one thread or (from a block edge on, once a thread is
 * spare) two. */
static dg_status record_loop(harness__source *src, const harness__record_opts *o, rec_state *rs)
{
    rec_pipe pipe;
    pthread_t tid;
    bool piped = false;
    dg_error src_err;
    dg_error_clear(&src_err);
    dg_status st = DG_OK;
    harness__frame f = {0}; /* raw_later stays false for a source that never sets it */
    int rc;
    uint64_t k = 0;
    while ((rc = src->next(src, &f, piped ? &src_err : rs->err)) == 1) {
        if (!piped && o && o->jobs > 1 && k % REC_BLOCK_TICKS == 0 && dg_harness__cpu_take(1) == 1) {
            piped = pipe_start(&pipe, rs, &tid);
            if (!piped)
                dg_harness__cpu_give(1);
            src->raw_later_ok = piped; /* the raw hash moves off the simulation's thread too */
        }
        k++;
        if (!piped) {
            if ((st = rec_tick(rs, &f)) != DG_OK)
                break;
        } else {
            rec_block *b = &pipe.blk[pipe.filled % REC_BLOCKS];
            if (!block_add(b, &f)) {
                st = dg_error_set(&src_err, DG_E_NOMEM, DG_OFFSET_NONE, "record", "out of memory");
                break;
            }
            if (b->nf == REC_BLOCK_TICKS && !pipe_hand_over(&pipe, false))
                break;
        }
        if (o && o->progress)
            o->progress(o->progress_user, f.tick, src->expected_ticks);
    }
    if (!piped)
        return st == DG_OK && rc < 0 ? rs->err->code : st;
    src->raw_later_ok = false;
    dg_status cst = pipe_finish(&pipe, tid); /* the consumer's error comes first in tick order */
    if (cst != DG_OK)
        return cst;
    if (st == DG_OK && rc < 0)
        st = src_err.code;
    if (st != DG_OK)
        *rs->err = src_err;
    return st;
}

/* Creates one record-side hash log at path: entity lines with their raw hashes when entities
 * (version 2), and with values the raw floats too (version 3, named from the source's schema). */
static dg_status rec_log_open(const harness__source *src, const harness__record_opts *o, const char *path,
                              bool entities, bool values, dg_hash_log_writer **out, uint32_t *nvals, dg_error *err)
{
    dg_hash_log_header lh = {0};
    snprintf(lh.scenario, sizeof lh.scenario, "%s", src->name);
    snprintf(lh.format, sizeof lh.format, "%s", o->format_name ? o->format_name : "flrep");
    lh.entities = entities;
    lh.raw = true;
    lh.entity_raw = entities; /* version 2: the e lines carry each entity's raw hash */
    lh.n_values = values ? dg_harness__raw_value_names(&src->decl, lh.values, sizeof lh.values) : 0;
    if (values && lh.n_values == 0)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, path, "the raw values' names do not fit a hash log "
                            "header (%d bytes)", DG_HASH_LOG_VALUES_CAP);
    *nvals = lh.n_values;
    return dg_hash_log_writer_open(out, path, &lh, err);
}

dg_status dg_harness__record(harness__source *src, const char *path, const harness__record_opts *o,
                          harness__stream *out, dg_error *err)
{
    rec_state rs = {.out = out, .err = err, .log_entities = o && o->log_entities, .nx = dg_harness__source_fields(src)};
    dg_status st = dg_harness__stream_reserve(out, out->n + src->expected_ticks, err);
    if (st == DG_OK)
    {
        dg_flrep_writer_opts wo = {0};
        wo.fsync = o ? o->fsync : DG_FLREP_FSYNC_CLOSE;
        st = dg_flrep_writer_open(&rs.w, path, &src->hdr, &wo, err);
    }
    if (st != DG_OK)
        return st;
    if (o && o->fault_self_check)
        dg_flrep__writer_set_fault_self_check(rs.w, o->fault_self_check_tick);
    if (o && o->on_chunk)
        dg_flrep_writer_on_chunk(rs.w, o->on_chunk, o->on_chunk_user);
    if (o && o->hash_log)
        st = rec_log_open(src, o, o->hash_log, o->log_entities || o->log_raw, o->log_raw, &rs.log, &rs.log_values,
                          err);
    if (st == DG_OK && o && o->raw_log)
        st = rec_log_open(src, o, o->raw_log, true, true, &rs.raw_log, &rs.raw_log_values, err);
    rs.log_entities = rs.log_entities || (o && o->log_raw);
    if (st == DG_OK)
        st = record_loop(src, o, &rs);
    if (st == DG_OK && out->n == 0)
        st = dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, src->name, "the source produced no tick");
    scratch_free(&rs.sc);
    free(rs.xq);
    if (st != DG_OK) {
        dg_flrep_writer_abort(rs.w);
        if (rs.log) {
            dg_hash_log_writer_close(rs.log, NULL);
            remove(o->hash_log);
        }
        if (rs.raw_log) {
            dg_hash_log_writer_close(rs.raw_log, NULL);
            remove(o->raw_log);
        }
        return st;
    }
    st = dg_flrep_writer_close(rs.w, err);
    dg_status lst = rs.log ? dg_hash_log_writer_close(rs.log, err) : DG_OK;
    dg_status rst = rs.raw_log ? dg_hash_log_writer_close(rs.raw_log, err) : DG_OK;
    return st != DG_OK ? st : lst != DG_OK ? lst : rst;
}

/* Linear playback of r from where it stands: the first `skip` ticks are read but neither hashed nor
 * logged (they are already in out, hashed by the parallel replay), every later tick is hashed, pushed
 * and logged. A tick that cannot be read while skipping drops the records from it on, as a linear
 * pass that stopped there would have left them. */
dg_status dg_harness__replay_hash_from(dg_flrep_reader *r, size_t skip, dg_hash_log_writer *log, bool log_entities,
                                    harness__stream *out, dg_error *err)
{
    scratch sc = {0};
    dg_status st = DG_OK;
    dg_flrep_tick t;
    int rc = 1;
    size_t nx = dg_harness__reader_fields(r);
    for (size_t i = 0; i < skip; i++) {
        if ((rc = dg_flrep_reader_next(r, &t, err)) != 1) {
            for (size_t k = i; k < skip && out->n > 0; k++)
                out->entity_ticks -= out->v[--out->n].count;
            return rc < 0 ? err->code : DG_OK;
        }
    }
    while ((rc = dg_flrep_reader_next(r, &t, err)) == 1) {
        uint64_t *eh = NULL;
        if (log && log_entities) {
            if ((st = scratch_fit(&sc, t.ent_count, err)) != DG_OK)
                break;
            eh = sc.eh;
        }
        dg_tick_hash th = dg_harness__hash_read_tick(&t, nx, eh);
        harness__tickrec rec = {t.tick, th.state, th.events, th.combined, 0, th.entity_count, false};
        if ((st = dg_harness__stream_push(out, &rec, err)) != DG_OK)
            break;
        if (log && (st = log_tick(log, log_entities, 0, &th, NULL, t.ents, &sc, err)) != DG_OK)
            break;
    }
    if (st == DG_OK && rc < 0)
        st = err->code;
    scratch_free(&sc);
    return st;
}

dg_status dg_harness__replay_hash(const char *path, uint64_t fault_tick, dg_hash_log_writer *log,
                               bool log_entities, harness__stream *out, dg_error *err)
{
    dg_flrep_reader *r = NULL;
    dg_status st = dg_flrep_reader_open_file(&r, path, NULL, err);
    if (st != DG_OK)
        return st;
    if (fault_tick != UINT64_MAX)
        dg_flrep__reader_set_fault_double_delta(r, fault_tick);
    st = dg_harness__stream_reserve(out, out->n + dg_flrep_reader_info(r)->tick_count, err);
    if (st == DG_OK)
        st = dg_harness__replay_hash_from(r, 0, log, log_entities, out, err);
    dg_flrep_reader_close(r);
    return st;
}

/* ---- declared fields ------------------------------------------------------------------------ */

size_t dg_harness__reader_fields(const dg_flrep_reader *r)
{
    const dg_flrep_header *h = r ? dg_flrep_reader_header(r) : NULL;
    return h && h->schema ? h->schema->field_count : 0;
}

dg_tick_hash dg_harness__hash_read_tick(const dg_flrep_tick *t, size_t nx, uint64_t *entity_hashes)
{
    return dg_hash_tick_x(t->tick, t->ents, t->extras, t->extras ? nx : 0, t->ent_count, t->events, t->event_count,
                          entity_hashes);
}

size_t dg_harness__source_fields(const harness__source *s)
{
    if (s->decl.declared)
        return s->decl.field_count;
    return s->hdr.schema ? s->hdr.schema->field_count : 0; /* the C API's: a schema given as such */
}

static const harness__decl *g_preset;

void dg_harness__decl_preset(const harness__decl *d) { g_preset = d && d->declared ? d : NULL; }
const harness__decl *dg_harness__decl_preset_get(void) { return g_preset; }

dg_status dg_harness__source_schema_ready(harness__source *s, dg_error *err)
{
    const harness__decl *pre = g_preset;
    char msg[256];
    if (pre && s->decl.declared && !dg_harness__decl_equal(&s->decl, pre, msg, sizeof msg))
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, s->decl.where, "the stream's declared fields disagree "
                            "with the project file's (%s): %s (stream against project)", pre->where, msg);
    if (pre && !s->decl.declared && !dg_harness__decl_is_legacy(pre))
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, s->name, "the project file declares fields (%s) that "
                            "this stream cannot carry (a binary stream of version 1: write version 2)", pre->where);
    dg_harness__decl_view(&s->decl, &s->schema_view);
    bool legacy = !s->decl.declared || dg_harness__decl_is_legacy(&s->decl);
    s->hdr.schema = legacy ? NULL : &s->schema_view.schema;
    return DG_OK;
}

/* ---- small utilities ------------------------------------------------------------------------ */

double dg_harness__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double dg_harness__thread_cpu_now(void)
{
#if defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
    return dg_harness__now();
}

/* Every temp path handed out is remembered (with the names the .flrep and RPLY writers write it under
 * first)
 * so an interrupted run can remove them from a signal handler: plain arrays, unlink() only.
 * `gate --jobs` hands out paths from several threads: a mutex orders the writers (the handler never
 * locks it, it only reads), and a slot whose file still exists is skipped, so a long scenario's
 * recording stays remembered while other workers cycle through their short-lived files. */
#define TEMP_RING 128
#define TEMP_NAME 600
#define TEMP_NAMES 3 /* the path, the .flrep writer's PATH.tmp-PID, the RPLY writer's PATH.tmp */
static char temp_ring[TEMP_RING][TEMP_NAMES][TEMP_NAME];
static volatile sig_atomic_t temp_next;
static pthread_mutex_t temp_mu = PTHREAD_MUTEX_INITIALIZER;

static bool temp_slot_live(int slot)
{
    for (int k = 0; k < TEMP_NAMES; k++)
        if (temp_ring[slot][k][0] && access(temp_ring[slot][k], F_OK) == 0)
            return true;
    return false;
}

/* Caller holds temp_mu. The next slot in ring order whose files are gone (the oldest if all live). */
static int temp_free_slot(void)
{
    for (int i = 0; i < TEMP_RING; i++) {
        int slot = (temp_next + i) % TEMP_RING;
        if (!temp_slot_live(slot))
            return slot;
    }
    return temp_next % TEMP_RING;
}

static void temp_remember(const char *path)
{
    if (strlen(path) + 24 >= TEMP_NAME)
        return;
    pthread_mutex_lock(&temp_mu);
    int slot = temp_free_slot();
    snprintf(temp_ring[slot][0], TEMP_NAME, "%s", path);
    snprintf(temp_ring[slot][1], TEMP_NAME, "%s.tmp-%ld", path, (long)getpid());
    snprintf(temp_ring[slot][2], TEMP_NAME, "%s.tmp", path);
    temp_next = (slot + 1) % TEMP_RING;
    pthread_mutex_unlock(&temp_mu);
}

void dg_harness__temp_remember(const char *path) { temp_remember(path); }

void dg_harness__temp_cleanup(void)
{
    for (int i = 0; i < TEMP_RING; i++)
        for (int k = 0; k < TEMP_NAMES; k++)
            if (temp_ring[i][k][0])
                unlink(temp_ring[i][k]);
}

bool dg_harness__temp_path(char *buf, size_t cap, const char *dir, const char *stem, const char *suffix)
{
    static unsigned counter; /* under temp_mu: two threads never get the same name */
    if (!dir) {
        dir = getenv("TMPDIR");
        if (!dir || !dir[0])
            dir = "/tmp";
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    pthread_mutex_lock(&temp_mu);
    unsigned n_made = counter++;
    pthread_mutex_unlock(&temp_mu);
    int n = snprintf(buf, cap, "%s/dg-%s-%ld-%lx-%u%s", dir, stem ? stem : "tmp", (long)getpid(),
                     (unsigned long)ts.tv_nsec, n_made, suffix ? suffix : "");
    if (n <= 0 || (size_t)n >= cap)
        return false;
    temp_remember(buf);
    return true;
}

dg_status dg_harness__copy_prefix(const char *src, const char *dst, uint64_t len, dg_error *err)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, src, "cannot open: %s", strerror(errno));
    FILE *o = fopen(dst, "wb");
    if (!o) {
        fclose(in);
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, dst, "cannot create: %s", strerror(errno));
    }
    char buf[1 << 16];
    uint64_t left = len;
    dg_status st = DG_OK;
    while (left > 0) {
        size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        size_t got = fread(buf, 1, want, in);
        if (got == 0 || fwrite(buf, 1, got, o) != got) {
            st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, dst, "copy failed after %llu bytes",
                              (unsigned long long)(len - left));
            break;
        }
        left -= got;
    }
    fclose(in);
    if (fclose(o) != 0 && st == DG_OK)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, dst, "write failed: %s", strerror(errno));
    return st;
}

const char *dg_harness__entity_name(const dg_flrep_header *h, uint32_t id, char *buf, size_t cap)
{
    if (!h || !buf || cap == 0)
        return NULL;
    for (size_t i = 0; i < h->participant_count; i++) {
        const dg_flrep_participant *p = &h->participants[i];
        if (p->entity_id == id && p->callsign.len > 0) {
            size_t n = p->callsign.len < cap - 1 ? p->callsign.len : cap - 1;
            memcpy(buf, p->callsign.s, n);
            buf[n] = 0;
            return buf;
        }
    }
    return NULL;
}

void dg_harness__scenario_name(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    for (const char *p = base; *p && *p != '.' && n + 1 < cap && n < DG_HASH_LOG_NAME_MAX; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || c == '+';
        out[n++] = ok ? c : '_';
    }
    if (n == 0 && cap > 1)
        out[n++] = 'x';
    if (cap)
        out[n] = 0;
}
