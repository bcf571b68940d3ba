/* harness/verify.c — the three checks `detgate verify` runs on a fresh recording: record side vs
 * replay side tick by tick, seek consistency (forwards and rewinding, always at chunk edges, the
 * first and the last tick), and crash recovery (the trailer cut off, then the last chunk cut short:
 * every complete chunk must play back with identical hashes). */
#include "harness_internal.h"
#include "test_hooks.h"

#include <stdlib.h>
#include <string.h>

#define FLCK_FRAMING 36u

/* The fresh recording could not be reopened. Out of memory or an I/O error is a run that could not
 * test (-1, ERROR); the reader refusing what this build just wrote is a failure of the build (1, FAIL). */
static int fail_error(dg_report_check *c, const dg_error *err)
{
    char buf[512];
    dg_error_format(err, buf, sizeof buf);
    bool untested = err->code == DG_E_IO || err->code == DG_E_NOMEM;
    c->status = untested ? DG_REPORT_ERROR : DG_REPORT_FAIL;
    dg_report_check_set_message(c, "%s%s", untested ? "" : "the reader refused this build's own recording: ", buf);
    return untested ? -1 : 1;
}

/* ---- record side vs replay side ---------------------------------------------------------------- */

static void record_vs_replay_passed(dg_report_check *c, const harness__stream *rec, double replay_s)
{
    dg_report_check_set_message(c, "%zu tick%s, %llu entity-tick%s: record and replay hashes identical "
                                   "(replay side: read + rebuild + hash %.2f s CPU, %.1f M entity-ticks/s)",
                                rec->n, dg_report_plural_s(rec->n), (unsigned long long)rec->entity_ticks,
                                dg_report_plural_s(rec->entity_ticks), replay_s,
                                replay_s > 0 ? (double)rec->entity_ticks / replay_s / 1e6 : 0.0);
}

/* rp receives the replay side's linear playback (the seek check's reference); the caller frees it. */
static int check_record_vs_replay(dg_report_check *c, harness__source *src, const char *path,
                                  const harness__stream *rec, const harness__verify_opts *o, harness__stream *out_rp)
{
    double t0 = dg_harness__now();
    harness__stream rp = {0};
    dg_error err;
    dg_error_clear(&err);
    /* CPU time of the pass's threads, not wall time: the figure issue 4 tracks must not move with
     * the load other processes put on a shared machine; per core, whatever --jobs was. */
    double replay_s = 0;
    harness__replay_opts ro = {o->fault_tick, NULL, false, o->jobs ? o->jobs : 1, &replay_s, NULL};
    dg_status st = dg_harness__replay_hash_jobs(path, &ro, &rp, &err);
    char rerr[512] = "";
    harness__stream want = *rec;
    if (st != DG_OK) {
        /* The reader rejecting its own writer's output is a codec regression, not a missing input:
         * compare what it did rebuild, and count the tick it failed on as divergent too. */
        dg_error_format(&err, rerr, sizeof rerr);
        want.n = rp.n < rec->n ? rp.n : rec->n;
    }
    uint64_t first[64], first_raw;
    size_t nfirst = 0, want_detail = dg_harness__detail_max();
    uint64_t nd = dg_harness__compare_streams(NULL, &want, &rp, DG_REPORT_TICK_NONE, first, want_detail, &nfirst,
                                           &first_raw);
    uint64_t not_reproduced = DG_REPORT_TICK_NONE;
    char note[200] = "";
    int failed = 0;
    if (nd > 0) {
        dg_error derr;
        dg_error_clear(&derr);
        dg_status ds = dg_harness__detail_source_vs_file(c, src, path, o->fault_tick, first, nfirst, rec,
                                                      &not_reproduced, &derr);
        if (ds != DG_OK) /* the detail stopped early: still count the ticks it did not reach */
            for (size_t k = 0; k < nfirst; k++)
                if (c->n_ranges == 0 || first[k] > c->ranges[c->n_ranges - 1].last)
                    dg_report_check_add_divergent(c, first[k], 0);
        size_t detailed = nfirst; /* the call below resets nfirst */
        dg_harness__compare_streams(c, &want, &rp, first[nfirst - 1], first, 0, &nfirst, &first_raw);
        /* the charts need both sides' states over the whole divergence; say why there are none */
        dg_report_check_add_detail(c, "no spread or trajectory: the record side keeps only its hashes; its states "
                                      "are re-derived (the source run again) for the entity tables of the first %zu "
                                      "divergent tick%s only",
                                   detailed, dg_report_plural_s(detailed));
    }
    if (st != DG_OK && want.n < rec->n)
        dg_report_check_add_divergent(c, rec->v[want.n].tick, 0);
    if (not_reproduced != DG_REPORT_TICK_NONE)
        snprintf(note, sizeof note, " (the source did not reproduce its own recorded state at tick %llu when re-run "
                                    "for this diff: it is not deterministic, so record-side values are approximate)",
                 (unsigned long long)not_reproduced);
    if (nd > 0 || st != DG_OK) {
        c->status = DG_REPORT_FAIL;
        failed = 1;
        /* one count everywhere: the check's divergent ticks, the tick the reader rejected included */
        if (nd > 0)
            dg_report_check_set_message(c, "%llu of %zu tick%s differ between the record side and the replay side; "
                                           "first at tick %llu%s%s%s",
                                        (unsigned long long)c->divergent_ticks, rec->n, dg_report_plural_s(rec->n),
                                        (unsigned long long)c->first_tick, note,
                                        st != DG_OK ? "; then the reader rejected the file (that tick counted): " : "",
                                        rerr);
        else
            dg_report_check_set_message(c, "the reader rejected the recording after %zu of %zu tick%s: %s", rp.n,
                                        rec->n, dg_report_plural_s(rec->n), rerr);
    } else {
        record_vs_replay_passed(c, rec, replay_s);
    }
    *out_rp = rp;
    c->duration_s = dg_harness__now() - t0;
    return failed;
}

/* ---- seek consistency ------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The sample: first and last tick, both edges of every chunk (evenly thinned to the cap), and a
 * reproducible random handful. */
static size_t seek_sample(const dg_flrep_file_info *info, const harness__stream *rec,
                          const harness__verify_opts *o, uint64_t **out)
{
    size_t nch = info->chunk_count;
    size_t stride = 1;
    if (o->seek_max_edges && nch * 2 > o->seek_max_edges)
        stride = (nch * 2 + o->seek_max_edges - 1) / o->seek_max_edges;
    size_t cap = 2 + 2 * (nch / stride + 1) + o->seek_random;
    uint64_t *v = malloc(cap * sizeof *v);
    if (!v)
        return 0;
    size_t n = 0;
    v[n++] = rec->v[0].tick;
    v[n++] = rec->v[rec->n - 1].tick;
    for (size_t i = 0; i < nch; i += stride) {
        v[n++] = info->chunks[i].first_tick;
        v[n++] = info->chunks[i].last_tick;
    }
    uint64_t seed = rec->n * 0x9E3779B97F4A7C15ull ^ rec->v[0].state;
    for (size_t i = 0; i < o->seek_random && n < cap; i++)
        v[n++] = rec->v[splitmix(&seed) % rec->n].tick;
    *out = v;
    return sort_unique(v, n);
}

/* The reference is linear playback at that tick (the record side where linear playback stopped
 * short, the reader having failed). */
static bool seek_matches(dg_flrep_reader *r, const harness__stream *lin, const harness__stream *rec, uint64_t tick,
                         dg_error *err, bool *io)
{
    dg_flrep_tick t;
    *io = false;
    if (dg_flrep_reader_seek(r, tick, err) != DG_OK || dg_flrep_reader_next(r, &t, err) != 1) {
        *io = true;
        return false;
    }
    const harness__stream *ref = lin;
    size_t k = dg_harness__stream_find(lin, tick);
    if (k == SIZE_MAX) {
        ref = rec;
        k = dg_harness__stream_find(rec, tick);
    }
    if (t.tick != tick || k == SIZE_MAX)
        return false;
    dg_tick_hash h = dg_harness__hash_read_tick(&t, dg_harness__reader_fields(r), NULL);
    return h.state == ref->v[k].state && h.events == ref->v[k].events && h.entity_count == ref->v[k].count;
}

/* Diffs the world after a seek against linear playback at the same ticks (A = linear, B = seek). */
static void seek_detail(dg_report_check *c, const char *path, const harness__verify_opts *o, const uint64_t *bad,
                        size_t n)
{
    dg_flrep_reader *lin = NULL, *sk = NULL;
    dg_error scratch_err; /* the detail is best effort: the check has already failed */
    dg_error_clear(&scratch_err);
    if (dg_flrep_reader_open_file(&lin, path, NULL, &scratch_err) != DG_OK ||
        dg_flrep_reader_open_file(&sk, path, NULL, &scratch_err) != DG_OK) {
        dg_flrep_reader_close(lin);
        return;
    }
    if (o->fault_tick != UINT64_MAX) {
        dg_flrep__reader_set_fault_double_delta(lin, o->fault_tick);
        dg_flrep__reader_set_fault_double_delta(sk, o->fault_tick);
    }
    if (o->seek_fault_tick != UINT64_MAX) /* the seeking side only: linear playback never seeks */
        dg_flrep__reader_set_fault_seek_drop_delta(sk, o->seek_fault_tick);
    const dg_flrep_header *names = dg_flrep_reader_header(lin);
    dg_flrep_tick a, b;
    int ra = 1;
    for (size_t k = 0; k < n; k++) {
        while ((ra = dg_flrep_reader_next(lin, &a, &scratch_err)) == 1 && a.tick < bad[k]) {
        }
        int rb = dg_flrep_reader_seek(sk, bad[k], &scratch_err) == DG_OK ? dg_flrep_reader_next(sk, &b, &scratch_err) : -1;
        bool ha = ra == 1 && a.tick == bad[k], hb = rb == 1 && b.tick == bad[k];
        harness__xworld wa = {ha ? a.ents : NULL, ha ? a.extras : NULL, ha ? a.ent_count : 0, names->schema},
                        wb = {hb ? b.ents : NULL, hb ? b.extras : NULL, hb ? b.ent_count : 0, names->schema};
        const dg_schema *xs = dg_harness__common_schema(names, names);
        dg_report_check_add_divergent(c, bad[k], dg_harness__count_diff_x(wa, wb, xs));
        dg_report_tick *rt = dg_report_add_tick(c, bad[k]);
        if (rt)
            dg_harness__diff_worlds_x(rt, wa, wb, xs, names);
        if (ra != 1)
            break;
    }
    dg_flrep_reader_close(lin);
    dg_flrep_reader_close(sk);
}

static void seek_passed(dg_report_check *c, size_t ns, size_t random, size_t seeks)
{
    dg_report_check_set_message(c, "%zu tick%s sampled (chunk edges, first, last, %zu random), %zu seek%s "
                                   "forwards and backwards: all equal to linear playback",
                                ns, dg_report_plural_s(ns), random, seeks, dg_report_plural_s(seeks));
}

static int check_seek(dg_report_check *c, const char *path, const harness__stream *rec,
                      const harness__stream *lin, const harness__verify_opts *o)
{
    double t0 = dg_harness__now();
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK)
        return fail_error(c, &err);
    if (o->fault_tick != UINT64_MAX)
        dg_flrep__reader_set_fault_double_delta(r, o->fault_tick);
    if (o->seek_fault_tick != UINT64_MAX)
        dg_flrep__reader_set_fault_seek_drop_delta(r, o->seek_fault_tick);
    uint64_t *sample = NULL;
    size_t ns = seek_sample(dg_flrep_reader_info(r), rec, o, &sample);
    uint64_t *bad = malloc((ns ? ns : 1) * 2 * sizeof *bad);
    size_t nbad = 0, seeks = 0;
    bool io_failed = false;
    for (int pass = 0; pass < 2 && bad; pass++) {
        /* Pass 0 walks forwards, pass 1 rewinds: both directions must land on the same state. */
        for (size_t i = 0; i < ns; i++) {
            uint64_t tick = sample[pass == 0 ? i : ns - 1 - i];
            bool io;
            seeks++;
            if (!seek_matches(r, lin, rec, tick, &err, &io)) {
                bad[nbad++] = tick;
                io_failed |= io;
            }
        }
    }
    dg_flrep_reader_close(r);
    nbad = bad ? sort_unique(bad, nbad) : 0;
    int failed = 0;
    if (!bad || !sample) {
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "out of memory");
        failed = -1;
    } else if (nbad > 0) {
        c->status = DG_REPORT_FAIL;
        failed = 1;
        seek_detail(c, path, o, bad, nbad);
        for (size_t k = 0; k < nbad; k++) /* the detail stops where linear playback does: count the rest */
            if (c->n_ranges == 0 || bad[k] > c->ranges[c->n_ranges - 1].last)
                dg_report_check_add_divergent(c, bad[k], 0);
        char ebuf[400] = "";
        if (io_failed)
            dg_error_format(&err, ebuf, sizeof ebuf);
        dg_report_check_set_message(c, "%zu of %zu sampled tick%s give%s a different state after a seek than in "
                                       "linear playback; first at tick %llu%s%s",
                                    nbad, ns, dg_report_plural_s(ns), nbad == 1 ? "s" : "", (unsigned long long)bad[0],
                                    io_failed ? "; seek failed: " : "", ebuf);
    } else {
        seek_passed(c, ns, o->seek_random, seeks);
    }
    free(sample);
    free(bad);
    c->duration_s = dg_harness__now() - t0;
    return failed;
}

/* ---- crash recovery ------------------------------------------------------------------------------ */

/* "the cut copy ..." instead of the removed temporary's path, so the line names what was tested. */
static void recovery_error(const dg_error *err, const char *tmp, char *buf, size_t cap)
{
    dg_error e = *err;
    size_t n = strlen(tmp);
    if (n && strncmp(e.where, tmp, n) == 0) {
        char rest[sizeof e.where];
        snprintf(rest, sizeof rest, "%s", e.where + n);
        snprintf(e.where, sizeof e.where, "the cut copy%.*s", (int)(sizeof e.where - sizeof "the cut copy"), rest);
    }
    dg_error_format(&e, buf, cap);
}

/* "ticks 0..1199 (1200 ticks)" or "no tick". */
static void tick_span(char *buf, size_t cap, uint64_t n, uint64_t first, uint64_t last)
{
    if (n == 0)
        snprintf(buf, cap, "no tick");
    else
        snprintf(buf, cap, "ticks %llu..%llu (%llu tick%s)", (unsigned long long)first, (unsigned long long)last,
                 (unsigned long long)n, n == 1 ? "" : "s");
}

static void recovery_case_passed(char *msg, size_t cap, const char *label, uint64_t cut, const dg_flrep_file_info *idx,
                                 uint64_t from, size_t played)
{
    char span[80];
    tick_span(span, sizeof span, idx->tick_count, idx->first_tick, idx->last_tick);
    snprintf(msg, cap, "%s (first %llu bytes): index rebuilt with %s; playback from tick %llu identical (%zu tick%s)",
             label, (unsigned long long)cut, span, (unsigned long long)from, played, played == 1 ? "" : "s");
}

/* Plays a truncated copy from `from` to its end and checks it yields exactly `want` from that tick on;
 * its recovered index must cover exactly want's ticks. msg gets one line: the case's label, what was
 * cut, and what came of it. */
static int recovery_case(dg_report_check *c, const char *path, uint64_t cut, const harness__stream *want,
                         uint64_t from, const char *label, char *msg, size_t cap)
{
    char tmp[512];
    dg_error err;
    dg_error_clear(&err);
    if (!dg_harness__temp_path(tmp, sizeof tmp, NULL, "recovery", ".flrep")) {
        snprintf(msg, cap, "%s: the temp folder's path is too long for a recovery copy", label);
        return -1;
    }
    if (dg_harness__copy_prefix(path, tmp, cut, &err) != DG_OK) {
        remove(tmp); /* a copy cut short by a full disk is still a file */
        char ebuf[400];
        dg_error_format(&err, ebuf, sizeof ebuf);
        snprintf(msg, cap, "%s: could not make the cut copy (the first %llu bytes): %s", label,
                 (unsigned long long)cut, ebuf);
        return -1;
    }
    harness__stream got = {0};
    dg_flrep_reader *r = NULL;
    bool opened = false, recovered = false, index_ok = false;
    dg_flrep_file_info idx = {0};
    dg_status st = dg_flrep_reader_open_file(&r, tmp, NULL, &err);
    if (st == DG_OK) {
        const dg_flrep_file_info *in = dg_flrep_reader_info(r);
        opened = true;
        idx = *in;
        recovered = in->recovered;
        index_ok = want->n > 0 && in->tick_count == want->n && in->last_tick == want->v[want->n - 1].tick;
        st = dg_flrep_reader_seek(r, from, &err);
    }
    dg_flrep_tick t;
    int rc = 0;
    while (st == DG_OK && (rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        dg_tick_hash th = dg_harness__hash_read_tick(&t, dg_harness__reader_fields(r), NULL);
        harness__tickrec rec = {t.tick, th.state, th.events, th.combined, 0, th.entity_count, false};
        st = dg_harness__stream_push(&got, &rec, &err);
    }
    if (st == DG_OK && rc < 0)
        st = err.code;
    dg_flrep_reader_close(r);
    remove(tmp);
    harness__stream tail = *want;
    size_t k = dg_harness__stream_find(want, from);
    tail.v += k == SIZE_MAX ? 0 : k;
    tail.n -= k == SIZE_MAX ? 0 : k;
    int failed = 1;
    uint64_t first[1], first_raw;
    size_t nfirst = 0;
    char ebuf[400], span_got[80], span_want[80];
    tick_span(span_got, sizeof span_got, idx.tick_count, idx.first_tick, idx.last_tick);
    tick_span(span_want, sizeof span_want, want->n, want->n ? want->v[0].tick : 0, want->n ? want->v[want->n - 1].tick : 0);
    /* the first thing that went wrong, in the order a reader does them: open, index, playback */
    if (!opened) {
        recovery_error(&err, tmp, ebuf, sizeof ebuf);
        snprintf(msg, cap, "%s (first %llu bytes): the reader refused the copy: %s", label, (unsigned long long)cut,
                 ebuf);
    } else if (!recovered) {
        snprintf(msg, cap, "%s (first %llu bytes): the reader took the copy as complete; expected it to find no "
                           "trailer and rebuild the index", label, (unsigned long long)cut);
    } else if (!index_ok) {
        snprintf(msg, cap, "%s (first %llu bytes): the rebuilt index holds %s; expected %s, the complete chunks",
                 label, (unsigned long long)cut, span_got, span_want);
    } else if (st != DG_OK) {
        recovery_error(&err, tmp, ebuf, sizeof ebuf);
        snprintf(msg, cap, "%s (first %llu bytes): playback from tick %llu stopped after %zu of %zu ticks: %s", label,
                 (unsigned long long)cut, (unsigned long long)from, got.n, tail.n, ebuf);
    } else if (dg_harness__compare_streams(NULL, &tail, &got, DG_REPORT_TICK_NONE, first, 1, &nfirst, &first_raw) > 0) {
        dg_harness__compare_streams(c, &tail, &got, DG_REPORT_TICK_NONE, first, 0, &nfirst, &first_raw);
        snprintf(msg, cap, "%s (first %llu bytes): playback from tick %llu differs from the recording at tick %llu "
                           "(%zu ticks played, %zu expected)",
                 label, (unsigned long long)cut, (unsigned long long)from, (unsigned long long)first[0], got.n, tail.n);
    } else {
        failed = 0;
        recovery_case_passed(msg, cap, label, cut, &idx, from, got.n);
    }
    dg_harness__stream_free(&got);
    return failed;
}

static int recovery_verdict(dg_report_check *c, int f1, int f2, const char *m1, const char *m2, size_t nch,
                            bool ran2);

static const char *const label1 = "trailer cut off", *const label2 = "last chunk cut short";

static int check_recovery(dg_report_check *c, const char *path, const harness__stream *rec)
{
    double t0 = dg_harness__now();
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK)
        return fail_error(c, &err);
    const dg_flrep_file_info *info = dg_flrep_reader_info(r);
    size_t nch = info->chunk_count;
    char m1[700], m2[700];
    int f1 = 0, f2 = 0;
    bool ran2 = false;
    if (nch == 0) {
        snprintf(m1, sizeof m1, "%s: not run: the recording holds no chunk", label1);
        snprintf(m2, sizeof m2, "%s: not run: the recording holds no chunk", label2);
    } else {
        const dg_flrep_chunk_info *last = &info->chunks[nch - 1];
        uint64_t end = last->offset + FLCK_FRAMING + last->compressed_size;
        /* every chunk, played in full: the trailer is the only thing missing */
        f1 = recovery_case(c, path, end, rec, rec->v[0].tick, label1, m1, sizeof m1);
        if (nch < 2) {
            snprintf(m2, sizeof m2, "%s: not run: the recording has one chunk", label2);
        } else if (f1 != 0) {
            snprintf(m2, sizeof m2, "%s: not run: the first case failed", label2);
        } else {
            harness__stream prefix = *rec;
            uint64_t keep_last = info->chunks[nch - 2].last_tick;
            while (prefix.n > 0 && prefix.v[prefix.n - 1].tick > keep_last)
                prefix.n--;
            /* the same bytes for every earlier chunk: the index and the last complete chunk are what
             * this case can get wrong, so only that chunk is played again */
            f2 = recovery_case(c, path, last->offset + FLCK_FRAMING + last->compressed_size / 2, &prefix,
                               info->chunks[nch - 2].first_tick, label2, m2, sizeof m2);
            ran2 = true;
        }
    }
    dg_flrep_reader_close(r);
    int failed = recovery_verdict(c, f1, f2, m1, m2, nch, ran2);
    c->duration_s = dg_harness__now() - t0;
    return failed;
}

/* The check's status and lines from its two cases' (f: 0 held, 1 failed, -1 could not run). */
static int recovery_verdict(dg_report_check *c, int f1, int f2, const char *m1, const char *m2, size_t nch, bool ran2)
{
    int failed = (f1 < 0 || f2 < 0) ? -1 : (f1 || f2);
    c->status = failed < 0 ? DG_REPORT_ERROR : failed ? DG_REPORT_FAIL : DG_REPORT_PASS;
    /* one line per case in the details; the message says which failed, or that both held */
    dg_report_check_add_detail(c, "%s", m1);
    dg_report_check_add_detail(c, "%s", m2);
    if (failed < 0)
        dg_report_check_set_message(c, "%s", f1 < 0 ? m1 : m2);
    else if (failed)
        dg_report_check_set_message(c, "%s failed (each case on its own line below)", f1 ? label1 : label2);
    else if (nch == 0)
        dg_report_check_set_message(c, "no chunk to cut: nothing to recover");
    else
        dg_report_check_set_message(c, "%s%s: every complete chunk recovered and played back identically", label1,
                                    ran2 ? " and last chunk cut short" : "");
    return failed;
}

/* ---- the checks of a recording followed as it was written ----------------------------------------- */

/* What the follower did beside the recording (harness/verify_follow.c) and what is left to do on the
 * finished file: its trailer must index exactly the chunks the growing file's scan found; the seek
 * sample's ticks that are no chunk edge (the follower seeked those) are seeked on it both ways. The
 * verdicts and lines are the serial checks' (the same helpers): a pass is only ever reported when
 * every part held; anything else returns FOLLOW_SERIAL, and the checks run on the finished file as
 * with --jobs 1, which say what failed and where. *why: a disagreement the serial checks must
 * confirm (empty when there is none). */
#define FOLLOW_SERIAL (-2)

static bool same_index(const dg_flrep_file_info *a, const dg_flrep_file_info *b)
{
    if (a->chunk_count != b->chunk_count)
        return false;
    for (size_t k = 0; k < a->chunk_count; k++)
        if (!dg_harness__chunk_equal(&a->chunks[k], &b->chunks[k]))
            return false;
    return true;
}

/* The sample's ticks (seek_sample's, sorted) the follower did not seek: those that are no chunk's
 * first or last tick when it seeked every edge. */
static size_t seeks_left(const dg_flrep_file_info *fi, const uint64_t *sample, size_t ns, bool edges, uint64_t *out)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < ns; i++) {
        while (edges && k < fi->chunk_count && fi->chunks[k].last_tick < sample[i])
            k++;
        bool edge = edges && k < fi->chunk_count &&
                    (fi->chunks[k].first_tick == sample[i] || fi->chunks[k].last_tick == sample[i]);
        if (!edge)
            out[n++] = sample[i];
    }
    return n;
}

/* The finished file's seeks, one direction each (pass 0 forwards, 1 rewinding), each on its own
 * reader when there are two: after the recording both cores are free, and these seeks are most of
 * what verify still does then. The reference is the record side: the follower's playback, still
 * being finished beside them, must equal it tick for tick before anything passes, so a seek equal
 * to the record side is equal to linear playback. bad[pass]: the first tick whose landing differed,
 * UINT64_MAX if none. */
typedef struct seek_passes {
    dg_flrep_reader *r[2]; /* r[1] == NULL: one reader, the passes one after the other on r[0] */
    const harness__stream *rec;
    const uint64_t *ticks;
    size_t n;
    uint64_t bad[2];
} seek_passes;

static void seek_pass_run(seek_passes *p, size_t pass)
{
    dg_flrep_reader *r = p->r[p->r[1] ? pass : 0];
    dg_error err;
    dg_error_clear(&err);
    p->bad[pass] = UINT64_MAX;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t tick = p->ticks[pass == 0 ? i : p->n - 1 - i];
        bool io;
        if (!seek_matches(r, p->rec, p->rec, tick, &err, &io)) {
            p->bad[pass] = tick;
            return;
        }
    }
}

/* The sample's ticks left for the finished file (*ns: the whole sample) and the readers for them;
 * false when there is no memory (the serial checks then run). A second reader is an optimisation:
 * without one both passes share fin. */
static bool seek_passes_open(seek_passes *p, dg_flrep_reader *fin, const char *path, const harness__stream *rec,
                             const harness__verify_opts *o, size_t *ns)
{
    uint64_t *sample = NULL;
    *ns = seek_sample(dg_flrep_reader_info(fin), rec, o, &sample);
    uint64_t *left = sample ? malloc((*ns ? *ns : 1) * sizeof *left) : NULL;
    *p = (seek_passes){{fin, NULL}, rec, left, 0, {UINT64_MAX, UINT64_MAX}};
    if (!left) {
        free(sample);
        return false;
    }
    p->n = seeks_left(dg_flrep_reader_info(fin), sample, *ns, dg_harness__follow_edges(o->follow), left);
    free(sample);
    if (o->jobs < 2 || p->n < 2 || dg_flrep_reader_open_file(&p->r[1], path, NULL, NULL) != DG_OK)
        p->r[1] = NULL;
    for (int k = 0; k < 2 && o->seek_fault_tick != UINT64_MAX; k++)
        if (p->r[k])
            dg_flrep__reader_set_fault_seek_drop_delta(p->r[k], o->seek_fault_tick);
    return true;
}

static void seek_passes_close(seek_passes *p)
{
    dg_flrep_reader_close(p->r[1]);
    free((void *)p->ticks);
}

/* 1 when every seek landed, else FOLLOW_SERIAL with *why. */
static int seek_passes_verdict(const seek_passes *p, char *why, size_t cap)
{
    uint64_t bad = p->bad[0] != UINT64_MAX ? p->bad[0] : p->bad[1];
    if (bad == UINT64_MAX)
        return 1;
    snprintf(why, cap, "a seek to tick %llu of the finished recording differs from the record side",
             (unsigned long long)bad);
    return FOLLOW_SERIAL;
}

/* What is left once the recording is finished, as tasks for the thread budget: the follower's
 * chunks still waiting (task 0), the rewinding seeks (1) and the forward ones (2, the cheaper: a
 * seek ahead in the reader's chunk goes on from where it stands). Two threads take them in turn,
 * so a follower that fell behind on a loaded machine no longer makes the seeks wait for it. */
typedef struct followed_tail {
    harness__follow *follow;
    const harness__follow_result *fr;
    seek_passes p;
} followed_tail;

static void followed_tail_task(void *arg, size_t i)
{
    followed_tail *t = arg;
    if (i == 0) {
        t->fr = dg_harness__follow_finish(t->follow);
    } else if (t->p.r[1]) {
        seek_pass_run(&t->p, i == 1 ? 1 : 0);
    } else if (i == 1) { /* one reader: both passes in turn on it */
        seek_pass_run(&t->p, 0);
        if (t->p.bad[0] == UINT64_MAX)
            seek_pass_run(&t->p, 1);
    }
}

/* The recovery check's two cases as the follower ran them on the growing file: every chunk scanned
 * without a trailer and played (case 1), the last chunk cut in half (case 2). */
static int followed_recovery(dg_report_check *c, const harness__follow_result *fr, const dg_flrep_file_info *fi,
                             const harness__stream *rec, char *why, size_t cap)
{
    const dg_flrep_file_info *gi = dg_flrep_reader_info(fr->r);
    size_t nch = fi->chunk_count;
    const dg_flrep_chunk_info *last = &fi->chunks[nch - 1];
    uint64_t end = last->offset + FLCK_FRAMING + last->compressed_size;
    if (gi->tick_count != rec->n || gi->last_tick != rec->v[rec->n - 1].tick) {
        snprintf(why, cap, "the scan of the growing recording indexed %llu ticks; the recording has %zu",
                 (unsigned long long)gi->tick_count, rec->n);
        return FOLLOW_SERIAL;
    }
    char m1[700], m2[700];
    recovery_case_passed(m1, sizeof m1, label1, end, gi, rec->v[0].tick, fr->rp->n);
    if (nch < 2) {
        snprintf(m2, sizeof m2, "%s: not run: the recording has one chunk", label2);
        return recovery_verdict(c, 0, 0, m1, m2, nch, false);
    }
    const dg_flrep_chunk_info *before = &fi->chunks[nch - 2];
    uint64_t ticks_before = gi->tick_count - last->tick_count;
    if (fr->torn_cut != last->offset + FLCK_FRAMING + last->compressed_size / 2 || fr->torn_chunks != nch - 1 ||
        fr->torn_ticks != ticks_before || fr->torn_last != before->last_tick) {
        snprintf(why, cap, "the growing recording cut inside its last chunk: the scan held %zu chunks (ticks to %llu); "
                           "expected %zu (to %llu)", fr->torn_chunks, (unsigned long long)fr->torn_last, nch - 1,
                 (unsigned long long)before->last_tick);
        return FOLLOW_SERIAL;
    }
    dg_flrep_file_info torn = {.tick_count = fr->torn_ticks, .first_tick = fr->torn_first, .last_tick = fr->torn_last};
    recovery_case_passed(m2, sizeof m2, label2, fr->torn_cut, &torn, before->first_tick, before->tick_count);
    return recovery_verdict(c, 0, 0, m1, m2, nch, true);
}

/* The three checks (two with --no-recovery) from the follower's work, or FOLLOW_SERIAL. */
static int verify_followed(dg_report_check *const *c, size_t nchecks, const char *path, const harness__stream *rec,
                           const harness__verify_opts *o, char *why, size_t cap)
{
    double t0 = dg_harness__now();
    followed_tail t = {o->follow, NULL, {{NULL, NULL}, rec, NULL, 0, {UINT64_MAX, UINT64_MAX}}};
    dg_flrep_reader *fin = NULL;
    size_t ns = 0;
    /* the finished file is complete: its seeks can run while the follower's last chunks are done */
    bool seeks = dg_flrep_reader_open_file(&fin, path, NULL, NULL) == DG_OK &&
                 seek_passes_open(&t.p, fin, path, rec, o, &ns);
    if (seeks)
        dg_harness__run_parallel(followed_tail_task, &t, 3);
    else
        t.fr = dg_harness__follow_finish(o->follow);
    const harness__follow_result *fr = t.fr;
    int rc = 0;
    if (fr->disagreed)
        snprintf(why, cap, "%s", fr->why);
    if (!fr->followed || fr->disagreed || !seeks) {
        rc = FOLLOW_SERIAL;
    } else {
        const dg_flrep_file_info *fi = dg_flrep_reader_info(fin);
        uint64_t first[1], first_raw;
        size_t nfirst = 0;
        if (fi->recovered || !same_index(fi, dg_flrep_reader_info(fr->r))) {
            snprintf(why, cap, "the finished recording's %s does not index the %zu chunks the writer reported and "
                               "the growing file's scan found", fi->recovered ? "trailer was rejected: it" : "trailer",
                     dg_flrep_reader_info(fr->r)->chunk_count);
            rc = FOLLOW_SERIAL;
        } else if (fr->rp->n != rec->n ||
                   dg_harness__compare_streams(NULL, rec, fr->rp, DG_REPORT_TICK_NONE, first, 1, &nfirst, &first_raw) >
                       0) {
            snprintf(why, cap, "the growing recording's playback differs from the record side (%zu of %zu ticks "
                               "played)", fr->rp->n, rec->n);
            rc = FOLLOW_SERIAL;
        } else {
            rc = seek_passes_verdict(&t.p, why, cap);
        }
        if (rc == 1 && nchecks == 3)
            rc = followed_recovery(c[2], fr, fi, rec, why, cap);
    }
    if (seeks)
        seek_passes_close(&t.p);
    dg_flrep_reader_close(fin);
    if (rc == FOLLOW_SERIAL)
        return rc;
    record_vs_replay_passed(c[0], rec, fr->replay_cpu_s);
    seek_passed(c[1], ns, o->seek_random, 2 * ns);
    c[0]->duration_s = c[1]->duration_s = dg_harness__now() - t0;
    if (nchecks == 3)
        c[2]->duration_s = c[0]->duration_s;
    return 0;
}

/* ---- running the checks ---------------------------------------------------------------------------- */

/* The checks of one recording, each into its own report check. Task 0 is record-vs-replay then
 * seek (the seek check compares with linear playback); task 1 is recovery, which reads only the
 * finished file and the record side: the two run at once when the thread budget spares one. */
typedef struct verify_run {
    dg_report_scenario *sc;
    harness__source *src;
    const char *path;
    const harness__stream *rec;
    const harness__verify_opts *o;
    uint32_t first;  /* index in sc of the record-vs-replay check; seek and recovery follow */
    int failed[3];
} verify_run;

static void verify_task(void *arg, size_t i)
{
    verify_run *v = arg;
    dg_report_check *const *c = &v->sc->checks[v->first];
    if (i == 1) {
        v->failed[2] = check_recovery(c[2], v->path, v->rec);
        return;
    }
    harness__stream lin = {0};
    v->failed[0] = check_record_vs_replay(c[0], v->src, v->path, v->rec, v->o, &lin);
    v->failed[1] = check_seek(c[1], v->path, v->rec, &lin, v->o);
    dg_harness__stream_free(&lin);
}

int dg_harness__verify_file(dg_report_scenario *sc, harness__source *src, const char *path,
                         const harness__stream *rec, const harness__verify_opts *o)
{
    /* every check is added before any runs, so a task finds its checks by index */
    static const char *const names[3] = {"record-vs-replay", "seek", "recovery"};
    size_t nchecks = o->skip_recovery ? 2 : 3;
    verify_run v = {sc, src, path, rec, o, sc->n_checks, {0, 0, 0}};
    for (size_t i = 0; i < nchecks; i++)
        if (!dg_report_add_check(sc, names[i], DG_REPORT_PASS))
            return -1;
    char why[800] = "";
    if (o->follow) {
        int fr = verify_followed(&sc->checks[v.first], nchecks, path, rec, o, why, sizeof why);
        /* which way the checks went (the tests see the followed path is taken, and why not) */
        if (getenv("DETGATE_DEBUG_VERIFY"))
            fprintf(stderr, "verify-debug: %s: %s%s%s\n", sc->name,
                    fr == 0 ? "checked beside the recording" : "checks on the finished file", why[0] ? ": " : "",
                    why);
        if (fr == 0)
            return 0;
    }
    dg_harness__run_parallel(verify_task, &v, nchecks == 3 && o->jobs > 1 ? 2 : 1);
    if (nchecks == 3 && o->jobs <= 1)
        verify_task(&v, 1);
    int a = v.failed[0], b = v.failed[1], c = v.failed[2];
    if (a < 0 || b < 0 || c < 0)
        return -1;
    if (why[0] && a + b + c == 0) {
        /* the follower found what the finished file's checks did not: the growing file's reading is broken */
        dg_report_check *rc = sc->checks[v.first + nchecks - 1];
        rc->status = DG_REPORT_FAIL;
        dg_report_check_set_message(rc, "the checks that followed the recording as it was written failed, those of "
                                        "the finished file held: %s", why);
        return 1;
    }
    return a + b + c;
}
