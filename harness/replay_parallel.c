/* harness/replay_parallel.c — the replay side on several threads, and the process's thread budget.
 *
 * A .flrep chunk opens with a keyframe that replaces the whole world, so chunks decode
 * independently. The recording's chunks are cut into runs of consecutive chunks ("units"); each
 * thread opens a reader of its own, seeks to a unit's first tick, hashes its ticks straight into
 * their slots of the output stream, and reads one tick past the unit's end (linearly, as a single
 * pass would cross that edge). Units are handed out in order and at most a window of them is
 * ahead of the one being written, so memory stays bounded; whichever thread finds the next unit
 * done writes its hash-log lines, so the log is written in tick order by one thread at a time.
 *
 * The result is the single pass's, whatever the thread count: when a unit is written, the tick its
 * predecessor read past its end must equal the unit's first tick (the seam). Any error, or a seam
 * that does not hold, stops the threads, and the ticks from that unit on are replayed by one
 * linear reader from the start of the file (the ticks before it read and not hashed again), so the
 * error, its message and the ticks hashed before it are exactly those of one pass; a fault hook
 * (double-delta) is set on every reader and behaves the same way. */
#include "harness_internal.h"
#include "test_hooks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the thread budget ------------------------------------------------------------------------ */

/* Threads beyond the ones already running that may still start: --jobs N sets N - 1 (the main
 * thread holds one). A gate worker holds one for as long as it has scenarios; a parallel section
 * takes what is free, never more, and gives it back, so the process never runs more than N busy
 * threads. */
static atomic_uint cpu_spare;

void dg_harness__cpu_init(unsigned total) { atomic_store(&cpu_spare, total > 1 ? total - 1 : 0); }

unsigned dg_harness__cpu_take(unsigned want)
{
    unsigned have = atomic_load(&cpu_spare);
    for (;;) {
        unsigned take = want < have ? want : have;
        if (take == 0)
            return 0;
        if (atomic_compare_exchange_weak(&cpu_spare, &have, have - take))
            return take;
    }
}

void dg_harness__cpu_give(unsigned n) { atomic_fetch_add(&cpu_spare, n); }

unsigned dg_harness__cpu_spare(void) { return atomic_load(&cpu_spare); }

/* Runs fn(arg, 0..n-1) on the calling thread and up to n - 1 helpers (as many as the budget gives);
 * returns when every call has returned. Calls are taken in index order. */
typedef struct par_tasks {
    void (*fn)(void *arg, size_t i);
    void *arg;
    size_t n;
    atomic_size_t next;
} par_tasks;

static void *par_worker(void *p)
{
    par_tasks *t = p;
    size_t i;
    while ((i = atomic_fetch_add(&t->next, 1)) < t->n)
        t->fn(t->arg, i);
    return NULL;
}

/* Starts up to want helpers running fn(arg); returns how many started (their tokens taken). */
static unsigned start_helpers(pthread_t *tid, unsigned want, void *(*fn)(void *), void *arg)
{
    unsigned got = dg_harness__cpu_take(want), started = 0;
    pthread_attr_t attr;
    bool have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) /* the main thread's default stack: the checks keep path buffers on it */
        pthread_attr_setstacksize(&attr, 8u << 20);
    for (unsigned k = 0; k < got; k++)
        if (pthread_create(&tid[started], have_attr ? &attr : NULL, fn, arg) == 0)
            started++;
    if (have_attr)
        pthread_attr_destroy(&attr);
    dg_harness__cpu_give(got - started);
    return started;
}

static void join_helpers(pthread_t *tid, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        pthread_join(tid[k], NULL);
    dg_harness__cpu_give(n);
}

#define PAR_MAX 64

void dg_harness__run_parallel(void (*fn)(void *arg, size_t i), void *arg, size_t n)
{
    par_tasks t = {fn, arg, n, 0};
    pthread_t tid[PAR_MAX];
    unsigned helpers = n > 1 ? start_helpers(tid, n - 1 < PAR_MAX ? (unsigned)(n - 1) : PAR_MAX, par_worker, &t) : 0;
    par_worker(&t);
    join_helpers(tid, helpers);
}

/* ---- the parallel replay ---------------------------------------------------------------------- */

typedef struct rp_unit {
    size_t c0, c1;  /* chunks [c0, c1) */
    size_t first;   /* index (from the stream's base) of its first tick */
    size_t nticks;  /* its ticks by the index */
} rp_unit;

enum { SLOT_FREE, SLOT_RUNNING, SLOT_DONE };

typedef struct rp_slot {
    int state;
    bool ok;              /* every tick of the unit read and hashed */
    int seam_rc;          /* the read past the unit's end: 1 = seam holds the tick, 0 = end, -1 = error */
    harness__tickrec seam;
    uint32_t *ids;        /* entity lines of the unit's ticks, when the log has them */
    uint64_t *eh;
    size_t ent_n, ent_cap;
} rp_slot;

typedef struct rp_job {
    const char *path;
    uint64_t fault_tick;
    dg_hash_log_writer *log;
    bool log_entities;
    const dg_flrep_chunk_info *chunks;
    const rp_unit *units;
    size_t nunits;
    harness__stream *out;
    size_t base;
    rp_slot *slots;
    size_t nslots;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    size_t next_unit, next_write;
    bool writing, stop;
    size_t redo_from;       /* SIZE_MAX, or the tick index the linear pass takes over from */
    dg_status log_st;
    dg_error log_err;
    double cpu_s;
    /* the writer's, between units */
    bool have_seam;
    harness__tickrec seam;
} rp_job;

static bool rec_same(const harness__tickrec *a, const harness__tickrec *b)
{
    return a->tick == b->tick && a->state == b->state && a->events == b->events && a->count == b->count;
}

static bool slot_fit(rp_slot *s, size_t n)
{
    if (n <= s->ent_cap)
        return true;
    size_t nc = s->ent_cap ? s->ent_cap : 4096;
    while (nc < n)
        nc *= 2;
    uint32_t *ids = realloc(s->ids, nc * sizeof *ids);
    if (ids)
        s->ids = ids;
    uint64_t *eh = realloc(s->eh, nc * sizeof *eh);
    if (eh)
        s->eh = eh;
    if (!ids || !eh)
        return false;
    s->ent_cap = nc;
    return true;
}

/* Hashes unit u into its slots of the stream (and its entity lines into the slot). Any failure
 * leaves s->ok false: the linear pass will say what it was. */
static void rp_decode(rp_job *J, dg_flrep_reader **rd, size_t u, rp_slot *s)
{
    const rp_unit *U = &J->units[u];
    dg_error err;
    dg_error_clear(&err);
    s->ok = false;
    s->seam_rc = -1;
    s->ent_n = 0;
    if (!*rd) {
        if (dg_flrep_reader_open_file(rd, J->path, NULL, &err) != DG_OK)
            return;
        if (J->fault_tick != UINT64_MAX)
            dg_flrep__reader_set_fault_double_delta(*rd, J->fault_tick);
    }
    dg_flrep_reader *r = *rd;
    if (dg_flrep_reader_seek(r, J->chunks[U->c0].first_tick, &err) != DG_OK)
        return;
    harness__tickrec *dst = J->out->v + J->base + U->first;
    dg_flrep_tick t;
    for (size_t i = 0; i < U->nticks; i++) {
        if (dg_flrep_reader_next(r, &t, &err) != 1)
            return;
        uint64_t *eh = NULL;
        if (J->log && J->log_entities) {
            if (!slot_fit(s, s->ent_n + t.ent_count))
                return;
            for (size_t k = 0; k < t.ent_count; k++)
                s->ids[s->ent_n + k] = t.ents[k].id;
            eh = s->eh + s->ent_n;
            s->ent_n += t.ent_count;
        }
        dg_tick_hash th = dg_harness__hash_read_tick(&t, dg_harness__reader_fields(r), eh);
        harness__tickrec rec = {t.tick, th.state, th.events, th.combined, 0, th.entity_count, false};
        dst[i] = rec;
    }
    s->seam_rc = dg_flrep_reader_next(r, &t, &err);
    if (s->seam_rc == 1) {
        dg_tick_hash th = dg_harness__hash_read_tick(&t, dg_harness__reader_fields(r), NULL);
        harness__tickrec rec = {t.tick, th.state, th.events, th.combined, 0, th.entity_count, false};
        s->seam = rec;
    }
    s->ok = true;
}

/* Checks unit u against the seam before it, adds it to the stream's totals and writes its log
 * lines. False: the threads stop (redo_from or log_st says why). Called by one thread at a time. */
static bool rp_write(rp_job *J, size_t u, rp_slot *s)
{
    const rp_unit *U = &J->units[u];
    const harness__tickrec *v = J->out->v + J->base + U->first;
    bool seam_ok = u == 0 || (J->have_seam && rec_same(&J->seam, &v[0]));
    if (!s->ok || !seam_ok || (u + 1 == J->nunits && s->seam_rc != 0)) {
        /* the last unit's read past its end must find the end; a linear pass says what else it found */
        size_t at = s->ok && seam_ok ? U->first + U->nticks : U->first;
        for (size_t i = 0; s->ok && seam_ok && i < U->nticks; i++)
            J->out->entity_ticks += v[i].count;
        pthread_mutex_lock(&J->mu);
        J->redo_from = at;
        pthread_mutex_unlock(&J->mu);
        return false;
    }
    size_t off = 0;
    for (size_t i = 0; i < U->nticks; i++) {
        J->out->entity_ticks += v[i].count;
        if (!J->log)
            continue;
        dg_hash_log_tick lt = {0};
        lt.tick = v[i].tick;
        lt.entity_count = v[i].count;
        lt.state = v[i].state;
        lt.events = v[i].events;
        if (J->log_entities) {
            lt.ids = s->ids + off;
            lt.hashes = s->eh + off;
            off += v[i].count;
        }
        dg_error err;
        dg_error_clear(&err);
        if (dg_hash_log_writer_write(J->log, &lt, &err) != DG_OK) {
            pthread_mutex_lock(&J->mu);
            J->log_st = err.code;
            J->log_err = err;
            J->redo_from = U->first + i + 1; /* a single pass stops after pushing this tick */
            pthread_mutex_unlock(&J->mu);
            return false;
        }
    }
    J->have_seam = s->seam_rc == 1;
    J->seam = s->seam;
    return true;
}

/* Caller holds mu. Writes every finished unit in order, as long as the next one is done. */
static void rp_write_ready(rp_job *J)
{
    J->writing = true;
    while (!J->stop && J->next_write < J->nunits) {
        rp_slot *s = &J->slots[J->next_write % J->nslots];
        if (s->state != SLOT_DONE)
            break;
        pthread_mutex_unlock(&J->mu);
        bool ok = rp_write(J, J->next_write, s);
        pthread_mutex_lock(&J->mu);
        if (!ok) {
            J->stop = true;
            break;
        }
        s->state = SLOT_FREE;
        J->next_write++;
    }
    J->writing = false;
    pthread_cond_broadcast(&J->cv);
}

static void rp_work(rp_job *J)
{
    dg_flrep_reader *r = NULL;
    pthread_mutex_lock(&J->mu);
    for (;;) {
        if (J->stop || J->next_write == J->nunits)
            break;
        if (!J->writing && J->slots[J->next_write % J->nslots].state == SLOT_DONE) {
            rp_write_ready(J);
            continue;
        }
        if (J->next_unit < J->nunits && J->next_unit < J->next_write + J->nslots) {
            size_t u = J->next_unit++;
            rp_slot *s = &J->slots[u % J->nslots];
            s->state = SLOT_RUNNING;
            pthread_mutex_unlock(&J->mu);
            rp_decode(J, &r, u, s);
            pthread_mutex_lock(&J->mu);
            s->state = SLOT_DONE;
            pthread_cond_broadcast(&J->cv);
            continue;
        }
        pthread_cond_wait(&J->cv, &J->mu);
    }
    pthread_mutex_unlock(&J->mu);
    dg_flrep_reader_close(r);
}

/* A helper thread: its CPU time joins the pass's (the calling thread measures its own). */
static void *rp_worker(void *arg)
{
    rp_job *J = arg;
    double c0 = dg_harness__thread_cpu_now();
    rp_work(J);
    double used = dg_harness__thread_cpu_now() - c0;
    pthread_mutex_lock(&J->mu);
    J->cpu_s += used;
    pthread_mutex_unlock(&J->mu);
    return NULL;
}

/* Consecutive chunks in units of about total / (threads * 32) decompressed bytes: enough units for
 * the threads to stay busy to the end, few enough that the extra chunk each unit decompresses at
 * its edges stays small. Returns the unit count (0 on out of memory). */
static size_t plan_units(const dg_flrep_file_info *in, unsigned threads, rp_unit **out)
{
    uint64_t total = 0;
    for (size_t k = 0; k < in->chunk_count; k++)
        total += in->chunks[k].decompressed_size;
    uint64_t target = total / ((uint64_t)threads * 32) + 1;
    rp_unit *v = malloc(in->chunk_count * sizeof *v);
    if (!v)
        return 0;
    size_t n = 0, first = 0;
    uint64_t acc = 0;
    for (size_t k = 0; k < in->chunk_count; k++) {
        if (acc == 0) {
            v[n].c0 = k;
            v[n].first = first;
            v[n].nticks = 0;
        }
        acc += in->chunks[k].decompressed_size;
        v[n].nticks += in->chunks[k].tick_count;
        first += in->chunks[k].tick_count;
        if (acc >= target || k + 1 == in->chunk_count) {
            v[n++].c1 = k + 1;
            acc = 0;
        }
    }
    *out = v;
    return n;
}

/* Runs the units on the calling thread and `helpers` more; the tokens are already taken. */
static void rp_run(rp_job *J, unsigned helpers)
{
    pthread_t tid[PAR_MAX];
    unsigned started = 0;
    for (unsigned k = 0; k < helpers; k++)
        if (pthread_create(&tid[started], NULL, rp_worker, J) == 0)
            started++;
    dg_harness__cpu_give(helpers - started);
    rp_work(J);
    join_helpers(tid, started);
}

/* The parallel pass over an open reader r (positioned at the start). Returns false when it did not
 * run (too few units or threads, out of memory): the caller replays linearly. */
static bool rp_try(dg_flrep_reader *r, const char *path, const harness__replay_opts *o, harness__stream *out,
                   size_t *redo_from, dg_status *log_st, double *helpers_s, dg_error *err)
{
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    /* a recovered index was rebuilt by a full scan: each thread's own open would scan again */
    if (o->jobs < 2 || in->recovered || in->chunk_count < 2)
        return false;
    rp_unit *units = NULL;
    size_t nunits = plan_units(in, o->jobs, &units);
    /* every run writes its ticks straight into the stream: room for all of them must be there */
    if (nunits < 2 || out->cap - out->n < units[nunits - 1].first + units[nunits - 1].nticks) {
        free(units);
        return false;
    }
    unsigned want = o->jobs - 1;
    if (want > nunits - 1)
        want = (unsigned)(nunits - 1);
    if (want > PAR_MAX)
        want = PAR_MAX;
    unsigned helpers = dg_harness__cpu_take(want);
    size_t nslots = 3 * ((size_t)helpers + 1);
    rp_slot *slots = helpers ? calloc(nslots, sizeof *slots) : NULL;
    if (!slots) {
        dg_harness__cpu_give(helpers);
        free(units);
        return false;
    }
    rp_job J = {.path = path, .fault_tick = o->fault_tick, .log = o->log, .log_entities = o->log_entities,
                .chunks = in->chunks, .units = units, .nunits = nunits, .out = out, .base = out->n,
                .slots = slots, .nslots = nslots, .redo_from = SIZE_MAX};
    pthread_mutex_init(&J.mu, NULL);
    pthread_cond_init(&J.cv, NULL);
    rp_run(&J, helpers);
    if (o->threads)
        *o->threads = 1 + helpers;
    pthread_cond_destroy(&J.cv);
    pthread_mutex_destroy(&J.mu);
    for (size_t k = 0; k < nslots; k++) {
        free(slots[k].ids);
        free(slots[k].eh);
    }
    free(slots);
    *log_st = J.log_st;
    if (J.log_st != DG_OK && err)
        *err = J.log_err;
    *redo_from = J.redo_from;
    *helpers_s = J.cpu_s;
    if (J.redo_from == SIZE_MAX) /* every run written: the ticks of every chunk */
        out->n = J.base + units[nunits - 1].first + units[nunits - 1].nticks;
    else
        out->n = J.base + J.redo_from;
    free(units);
    return true;
}

dg_status dg_harness__replay_hash_jobs(const char *path, const harness__replay_opts *o, harness__stream *out,
                                    dg_error *err)
{
    double c0 = dg_harness__thread_cpu_now(), helpers_s = 0;
    if (o->threads)
        *o->threads = 1;
    dg_flrep_reader *r = NULL;
    dg_status st = dg_flrep_reader_open_file(&r, path, NULL, err);
    if (st == DG_OK && o->fault_tick != UINT64_MAX)
        dg_flrep__reader_set_fault_double_delta(r, o->fault_tick);
    if (st == DG_OK)
        st = dg_harness__stream_reserve(out, out->n + dg_flrep_reader_info(r)->tick_count, err);
    size_t redo = 0;
    dg_status log_st = DG_OK;
    if (st == DG_OK && rp_try(r, path, o, out, &redo, &log_st, &helpers_s, err)) {
        if (log_st != DG_OK)
            st = log_st;
        else if (redo != SIZE_MAX) /* one linear pass from the start, hashing from where the threads stopped */
            st = dg_harness__replay_hash_from(r, redo, o->log, o->log_entities, out, err);
    } else if (st == DG_OK) {
        st = dg_harness__replay_hash_from(r, 0, o->log, o->log_entities, out, err);
    }
    dg_flrep_reader_close(r);
    if (o->cpu_s)
        *o->cpu_s = dg_harness__thread_cpu_now() - c0 + helpers_s;
    return st;
}
