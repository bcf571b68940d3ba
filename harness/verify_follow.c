/* harness/verify_follow.c — `detgate verify --jobs 2`'s file checks beside the recording: a thread
 * that follows the file as the writer finishes each chunk (the growing reader, docs/FORMAT-flrep.md
 * §9.2) — the recovery scan of the chunk cut in half and then whole, its playback hashed tick by
 * tick, seeks to its first and last tick both ways. What needs the finished file (its trailer and
 * index, the random seeks, the verdicts) is dg_harness__verify_file's (harness/verify.c). */
#define _GNU_SOURCE /* syscall(SYS_gettid): the follower lowers its own thread's priority */
#include "harness_internal.h"
#include "test_hooks.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#define FLCK_FRAMING 36u

typedef struct follow_notice {
    dg_flrep_chunk_info c;
    uint64_t end;
} follow_notice;

struct harness__follow {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    follow_notice *q; /* the chunks reported (under mu) */
    size_t qn, qcap;
    bool done;        /* no more will come (under mu) */
    bool off;         /* the notices cannot be followed: a rotation, no reader, no memory (under mu) */
    bool finished;    /* the thread was joined */
    size_t processed; /* the follower's own */
    dg_flrep_reader *r;
    harness__stream rp;
    uint64_t fault_tick, seek_fault_tick; /* the test hooks, on the follower's reader as on the serial checks' */
    long ktid;        /* the follower's kernel thread id once it lowered its priority, else 0 (under mu) */
    int nice0;        /* its nice value before */
    harness__follow_result res;
};

/* The first thing that was not as it must be; the follower stops checking. */
static void disagree(harness__follow *f, const char *fmt, ...)
{
    if (f->res.disagreed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->res.why, sizeof f->res.why, fmt, ap);
    va_end(ap);
    f->res.disagreed = true;
}

bool dg_harness__chunk_equal(const dg_flrep_chunk_info *a, const dg_flrep_chunk_info *b)
{
    return a->offset == b->offset && a->first_tick == b->first_tick && a->last_tick == b->last_tick &&
           a->tick_count == b->tick_count && a->compressed_size == b->compressed_size &&
           a->decompressed_size == b->decompressed_size;
}

/* The scan of chunk k: cut in half (it must wait for the rest: what a recording killed inside it
 * leaves), then whole (it must index exactly what the writer wrote). */
static bool scan_notice(harness__follow *f, size_t k, const follow_notice *n)
{
    dg_error err;
    dg_error_clear(&err);
    size_t added = 0;
    uint64_t cut = n->c.offset + FLCK_FRAMING + n->c.compressed_size / 2;
    char ebuf[500];
    if (dg_flrep_reader_refresh(f->r, cut, &added, &err) != DG_OK) {
        dg_error_format(&err, ebuf, sizeof ebuf);
        disagree(f, "the growing recording cut inside chunk %zu (first %llu bytes): the scan failed: %s", k,
                 (unsigned long long)cut, ebuf);
        return false;
    }
    const dg_flrep_file_info *in = dg_flrep_reader_info(f->r);
    if (added != 0 || in->chunk_count != k || in->recovery_stop[0] == '\0') {
        disagree(f, "the growing recording cut inside chunk %zu (first %llu bytes): the scan holds %zu chunks; "
                    "expected %zu and a scan waiting for the rest", k, (unsigned long long)cut, in->chunk_count, k);
        return false;
    }
    f->res.torn_cut = cut;
    f->res.torn_chunks = in->chunk_count;
    f->res.torn_ticks = in->tick_count;
    f->res.torn_first = in->first_tick;
    f->res.torn_last = in->last_tick;
    if (dg_flrep_reader_refresh(f->r, n->end, &added, &err) != DG_OK) {
        dg_error_format(&err, ebuf, sizeof ebuf);
        disagree(f, "the growing recording's chunk %zu (ticks %llu..%llu) did not scan: %s", k,
                 (unsigned long long)n->c.first_tick, (unsigned long long)n->c.last_tick, ebuf);
        return false;
    }
    in = dg_flrep_reader_info(f->r);
    if (added != 1 || in->chunk_count != k + 1 || !dg_harness__chunk_equal(&in->chunks[k], &n->c)) {
        disagree(f, "the growing recording's scan indexed %zu chunk%s for chunk %zu (ticks %llu..%llu at byte %llu) "
                    "the writer reported", added, dg_report_plural_s(added), k, (unsigned long long)n->c.first_tick,
                 (unsigned long long)n->c.last_tick, (unsigned long long)n->c.offset);
        return false;
    }
    return true;
}

/* Linear playback of the chunk just scanned, every tick hashed into rp. */
static bool play_notice(harness__follow *f, size_t k, const follow_notice *n)
{
    double t0 = dg_harness__thread_cpu_now();
    size_t nx = dg_harness__reader_fields(f->r);
    dg_error err;
    dg_error_clear(&err);
    for (uint32_t i = 0; i < n->c.tick_count; i++) {
        dg_flrep_tick t;
        int rc = dg_flrep_reader_next(f->r, &t, &err);
        if (rc != 1) {
            char ebuf[500] = "it ended early";
            if (rc < 0)
                dg_error_format(&err, ebuf, sizeof ebuf);
            disagree(f, "the growing recording's chunk %zu stopped after %u of %u ticks: %s", k, i,
                     n->c.tick_count, ebuf);
            return false;
        }
        dg_tick_hash th = dg_harness__hash_read_tick(&t, nx, NULL);
        harness__tickrec rec = {t.tick, th.state, th.events, th.combined, 0, th.entity_count, false};
        if (dg_harness__stream_push(&f->rp, &rec, &err) != DG_OK) {
            f->res.followed = false; /* out of memory: the finished file's checks run instead */
            return false;
        }
    }
    f->res.replay_cpu_s += dg_harness__thread_cpu_now() - t0;
    return true;
}

/* Seeks to the chunk's last tick, its first, its first again and its last (rewinding, then
 * forwards, ending where linear playback stood); each must land on the state playback gave. */
static bool seek_notice(harness__follow *f, size_t k, const follow_notice *n)
{
    const uint64_t ticks[4] = {n->c.last_tick, n->c.first_tick, n->c.first_tick, n->c.last_tick};
    size_t nx = dg_harness__reader_fields(f->r);
    for (int i = 0; i < 4; i++) {
        const harness__tickrec *want = &f->rp.v[f->rp.n - (ticks[i] == n->c.last_tick ? 1 : n->c.tick_count)];
        dg_error err;
        dg_error_clear(&err);
        dg_flrep_tick t;
        bool io = dg_flrep_reader_seek(f->r, ticks[i], &err) != DG_OK || dg_flrep_reader_next(f->r, &t, &err) != 1;
        dg_tick_hash h = {0};
        if (!io)
            h = dg_harness__hash_read_tick(&t, nx, NULL);
        if (io || t.tick != ticks[i] || h.state != want->state || h.events != want->events ||
            h.entity_count != want->count) {
            disagree(f, "a seek to tick %llu (chunk %zu) of the growing recording gave a different state than "
                        "linear playback", (unsigned long long)ticks[i], k);
            return false;
        }
    }
    return true;
}

static void follow_notice_run(harness__follow *f, const follow_notice *n)
{
    size_t k = f->processed;
    if (!scan_notice(f, k, n) || !play_notice(f, k, n))
        return;
    if (f->res.edges)
        seek_notice(f, k, n);
}

/* Under contention the simulation's and the writer's threads come first (nice 19 for this thread
 * alone: Linux gives each thread its own nice value). */
static void lower_priority(harness__follow *f)
{
#ifdef __linux__
    long tid = syscall(SYS_gettid);
    errno = 0;
    int before = getpriority(PRIO_PROCESS, (id_t)tid);
    if (errno == 0 && setpriority(PRIO_PROCESS, (id_t)tid, 19) == 0) {
        pthread_mutex_lock(&f->mu);
        f->ktid = tid;
        f->nice0 = before;
        pthread_mutex_unlock(&f->mu);
    }
#else
    (void)f;
#endif
}

/* Once the recording is finished nothing is left to yield to, and verify waits for the chunk the
 * follower is in: its nice value goes back (a loaded machine's nice-19 thread took ~20 ms for the
 * last one). Best effort: raising a priority again needs RLIMIT_NICE or CAP_SYS_NICE; without
 * either the chunk finishes at nice 19, as before. Under mu. */
static void restore_priority(harness__follow *f)
{
#ifdef __linux__
    if (f->ktid)
        (void)setpriority(PRIO_PROCESS, (id_t)f->ktid, f->nice0);
#else
    (void)f;
#endif
}

/* Until the recording is finished: once it is, the caller (at its own priority) takes the chunks
 * still waiting (dg_harness__follow_finish), so a loaded machine's nice-19 thread never makes verify
 * wait for it longer than one chunk. */
static void *follow_main(void *arg)
{
    harness__follow *f = arg;
    lower_priority(f);
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (f->processed == f->qn && !f->done)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->done)
            break;
        follow_notice n = f->q[f->processed];
        bool run = !f->off;
        pthread_mutex_unlock(&f->mu);
        if (run && f->res.followed && !f->res.disagreed)
            follow_notice_run(f, &n);
        pthread_mutex_lock(&f->mu);
        f->processed++;
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

harness__follow *dg_harness__follow_start(unsigned jobs, uint64_t fault_tick, uint64_t seek_fault_tick, bool edges)
{
    if (jobs <= 1)
        return NULL;
    harness__follow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fault_tick = fault_tick;
    f->seek_fault_tick = seek_fault_tick;
    f->res.edges = edges;
    f->res.followed = true;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    if (pthread_create(&f->tid, NULL, follow_main, f) != 0) {
        pthread_cond_destroy(&f->cv);
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    return f;
}

/* On the writer's thread. The first chunk opens the reader here, not on the follower's thread:
 * the file's temporary name is only sure to exist until the writer's next call (close renames it). */
void dg_harness__follow_chunk(void *user, const dg_flrep_chunk_done *d)
{
    harness__follow *f = user;
    pthread_mutex_lock(&f->mu);
    if (d->file_index != 0) /* a rotating series: not verify's recordings */
        f->off = true;
    if (!f->off && !f->r) {
        /* a header that does not parse is the finished file's checks' to report, as with --jobs 1 */
        if (dg_flrep_reader_open_growing(&f->r, d->path, NULL, NULL) != DG_OK) {
            f->off = true;
        } else {
            if (f->fault_tick != UINT64_MAX)
                dg_flrep__reader_set_fault_double_delta(f->r, f->fault_tick);
            if (f->seek_fault_tick != UINT64_MAX)
                dg_flrep__reader_set_fault_seek_drop_delta(f->r, f->seek_fault_tick);
        }
        f->res.r = f->r;
    }
    if (!f->off && dg_grow((void **)&f->q, &f->qcap, f->qn + 1, sizeof *f->q))
        f->q[f->qn++] = (follow_notice){*d->chunk, d->end};
    else
        f->off = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

const harness__follow_result *dg_harness__follow_finish(harness__follow *f)
{
    if (!f->finished) {
        pthread_mutex_lock(&f->mu);
        f->done = true;
        restore_priority(f);
        pthread_cond_signal(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->tid, NULL);
        f->finished = true;
        /* the writer is done too: nothing else touches the queue now */
        for (; f->processed < f->qn; f->processed++)
            if (!f->off && f->res.followed && !f->res.disagreed)
                follow_notice_run(f, &f->q[f->processed]);
        f->res.rp = &f->rp;
        if (f->off || !f->r || f->qn == 0 || f->processed != f->qn)
            f->res.followed = false;
    }
    return &f->res;
}

bool dg_harness__follow_edges(const harness__follow *f)
{
    return f->res.edges;
}

void dg_harness__follow_free(harness__follow *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->off = true; /* a recording that failed, or checks that are done: nothing more to follow */
    pthread_mutex_unlock(&f->mu);
    dg_harness__follow_finish(f);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    dg_flrep_reader_close(f->r);
    dg_harness__stream_free(&f->rp);
    free(f->q);
    free(f);
}
