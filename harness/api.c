/* harness/api.c — the engine-facing C API (include/detgate/harness.h): a session records what the
 * engine hands over through the same record side as `detgate verify`, keeps the inputs in a private
 * spill file so the record side can be re-derived for a diff, then runs the verify checks. */
#include "api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The spill is a process-private scratch file read back by the same process, never a format:
 * per tick u64 tick, u64 n, u64 nev, n dg_entity_in, nev (dg_event, text bytes). */
typedef struct spill_source {
    FILE *f;
    char path[512];
    dg_entity_in *ents;
    size_t cap;
    dg_event *evs;
    size_t cap_ev;
    char *text;
    size_t cap_text;
    size_t nx;       /* declared extra fields: n * nx int64 slots follow a tick's entities */
    int64_t *x;
    size_t cap_x;
} spill_source;

struct dg_harness_session {
    harness__source src; /* reads the spill back */
    spill_source sp;
    dg_harness_options opts;
    char name[DG_HASH_LOG_NAME_MAX + 1];
    char rec_path[512];
    bool temp_rec;
    dg_flrep_writer *w;
    harness__stream rec;
    dg_qentity *q;
    dg_entity_in *sorted;
    size_t cap;
    int64_t *xq;     /* the extras the writer wrote (dg_harness_tick_x), sorted like q */
    size_t cap_x;
    bool failed;
    harness__raw_logger *raw_log; /* dg_harness_repeat: this run's raw floats (dg_harness__session_keep_raw) */
    /* The session's own version 3 log: the hash log itself when opts.hash_log_raw_values (written
     * beside hash_log_path, renamed there by close), else this run's raw floats for a golden hash log
     * that has them (a temporary file); "" when neither. */
    harness__raw_logger *own_log;
    char own_log_path[4096];
    bool golden_raw; /* the golden is a hash log with each entity's raw floats (looked at once, by open) */
    /* copies of the header tables (the caller's may go away) */
    dg_flrep_header hdr;
};

dg_harness_options dg_harness_default_options(void)
{
    dg_harness_options o = {0};
    o.name = "engine";
    o.keep_inputs = true;
    o.seek_random = 32;
    return o;
}

static dg_status fit(void **p, size_t *cap, size_t n, size_t elem, dg_error *err)
{
    return dg_grow(p, cap, n, elem) ? DG_OK
                                    : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "harness session", "out of memory");
}

static int spill_next(harness__source *s, harness__frame *f, dg_error *err)
{
    spill_source *sp = s->impl;
    uint64_t h[3];
    size_t got = fread(h, sizeof h[0], 3, sp->f);
    if (got == 0 && feof(sp->f))
        return 0;
    if (got != 3 || fit((void **)&sp->ents, &sp->cap, h[1], sizeof *sp->ents, err) ||
        fit((void **)&sp->evs, &sp->cap_ev, h[2], sizeof *sp->evs, err) ||
        fread(sp->ents, sizeof *sp->ents, h[1], sp->f) != h[1] ||
        fit((void **)&sp->x, &sp->cap_x, h[1] * sp->nx + 1, sizeof *sp->x, err) ||
        fread(sp->x, sizeof *sp->x, h[1] * sp->nx, sp->f) != h[1] * sp->nx) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "spill file unreadable");
        return -1;
    }
    size_t text_total = 0;
    for (size_t i = 0; i < h[2]; i++) {
        if (fread(&sp->evs[i], sizeof sp->evs[i], 1, sp->f) != 1)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "spill file unreadable"), -1;
        text_total += sp->evs[i].text_len;
    }
    if (fit((void **)&sp->text, &sp->cap_text, text_total + 1, 1, err) != DG_OK)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < h[2]; i++) {
        size_t tl = sp->evs[i].text_len;
        if (tl && fread(sp->text + at, 1, tl, sp->f) != tl)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "spill file unreadable"), -1;
        sp->evs[i].text = tl ? sp->text + at : NULL;
        at += tl;
    }
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, h[0]);
    for (size_t i = 0; i < h[1]; i++) {
        const dg_entity_in *e = &sp->ents[i];
        dg_harness__raw_entity(&hs, e, NULL, 0);
    }
    *f = (harness__frame){.tick = h[0], .ents = sp->ents, .n = h[1], .events = sp->evs, .nev = h[2],
                          .has_raw = true, .raw = dg_hash_raw_end(&hs), .extras = sp->nx ? sp->x : NULL};
    return 1;
}

static dg_status spill_rewind(harness__source *s, dg_error *err)
{
    spill_source *sp = s->impl;
    if (!sp->f)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "harness session",
                            "inputs were not kept (keep_inputs = false): the record side cannot be re-derived");
    if (fflush(sp->f) != 0 || fseeko(sp->f, 0, SEEK_SET) != 0)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "cannot rewind: %s", strerror(errno));
    return DG_OK;
}

static void session_free(dg_harness_session *s)
{
    if (s->w)
        dg_flrep_writer_abort(s->w);
    dg_harness__raw_logger_close(s->raw_log, NULL); /* the trailer: the log is its caller's to read */
    dg_harness__raw_logger_close(s->own_log, NULL);
    if (s->own_log_path[0])
        remove(s->own_log_path);
    if (s->sp.f) {
        fclose(s->sp.f);
        remove(s->sp.path);
    }
    if (s->temp_rec)
        remove(s->rec_path);
    free(s->sp.ents);
    free(s->sp.evs);
    free(s->sp.text);
    free(s->sp.x);
    free(s->xq);
    free(s->q);
    free(s->sorted);
    dg_harness__stream_free(&s->rec);
    free(s);
}

void dg_harness_abort(dg_harness_session *s)
{
    if (s)
        session_free(s);
}

/* The session's own version 3 log, when the hash log is one or the golden hash log has raw floats. */
static dg_status own_log_open(dg_harness_session *s, dg_error *err)
{
    bool keep = s->opts.hash_log_raw_values; /* open refused it without hash_log_path */
    s->golden_raw = dg_harness__api_golden_has_raw_values(&s->opts);
    if (!keep && !s->golden_raw)
        return DG_OK;
    bool fits = keep ? dg_harness__api_log_temp_path(s->opts.hash_log_path, s->own_log_path, sizeof s->own_log_path)
                     : dg_harness__temp_path(s->own_log_path, sizeof s->own_log_path, NULL, "golden-raw", ".hashlog");
    if (!fits) {
        s->own_log_path[0] = '\0';
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, keep ? s->opts.hash_log_path : "TMPDIR",
                            "the path is too long for the hash log's temporary file");
    }
    return dg_harness__raw_logger_open(&s->own_log, s->own_log_path, s->name, !keep, err);
}

/* One tick into the version 3 logs the session keeps (none, repeat's, its own). */
static dg_status raw_logs_tick(dg_harness_session *s, uint64_t tick, const dg_entity_in *sorted, const int64_t *xq,
                               size_t nx, size_t n, const dg_event *ev, size_t nev, dg_error *err)
{
    dg_status st = DG_OK;
    if (s->raw_log)
        st = dg_harness__raw_logger_tick(s->raw_log, tick, sorted, s->q, xq, nx, n, ev, nev, err);
    if (st == DG_OK && s->own_log)
        st = dg_harness__raw_logger_tick(s->own_log, tick, sorted, s->q, xq, nx, n, ev, nev, err);
    return st;
}

dg_status dg_harness_open(dg_harness_session **out, const dg_flrep_header *hdr, const dg_harness_options *opts,
                          dg_error *err)
{
    *out = NULL;
    if (!hdr)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_open", "hdr is NULL");
    if (opts && opts->hash_log_raw_values && !opts->hash_log_path)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_open",
                            "hash_log_raw_values is set but hash_log_path is NULL: expected the log to write them to");
    dg_harness_session *s = calloc(1, sizeof *s);
    if (!s)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_open", "out of memory");
    s->opts = opts ? *opts : dg_harness_default_options();
    dg_harness__scenario_name(s->opts.name ? s->opts.name : "engine", s->name, sizeof s->name);
    if (s->opts.recording_path) {
        snprintf(s->rec_path, sizeof s->rec_path, "%s", s->opts.recording_path);
    } else {
        s->temp_rec = dg_harness__temp_path(s->rec_path, sizeof s->rec_path, NULL, "session", ".flrep");
    }
    dg_status st = dg_flrep_writer_open(&s->w, s->rec_path, hdr, NULL, err);
    if (st == DG_OK)
        st = own_log_open(s, err);
    if (st == DG_OK && s->opts.keep_inputs) {
        dg_harness__temp_path(s->sp.path, sizeof s->sp.path, NULL, "spill", ".bin");
        s->sp.f = fopen(s->sp.path, "w+b");
        if (!s->sp.f)
            st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, s->sp.path, "cannot create: %s", strerror(errno));
    }
    if (st != DG_OK) {
        s->temp_rec = false; /* nothing was renamed into place */
        session_free(s);
        return st;
    }
    s->hdr = *hdr;
    s->src.hdr = *hdr; /* only the names (roster) are read from it, while the writer owns the copies */
    snprintf(s->src.name, sizeof s->src.name, "%s", s->name);
    s->src.next = spill_next;
    s->src.rewind = spill_rewind;
    s->src.impl = &s->sp;
    s->sp.nx = hdr->schema ? hdr->schema->field_count : 0;
    *out = s;
    return DG_OK;
}

static int cmp_in(const void *a, const void *b)
{
    uint32_t x = ((const dg_entity_in *)a)->id, y = ((const dg_entity_in *)b)->id;
    return x < y ? -1 : x > y;
}

static dg_status spill_write(spill_source *sp, uint64_t tick, const dg_entity_in *e, size_t n, const dg_event *ev,
                             size_t nev, dg_error *err)
{
    uint64_t h[3] = {tick, n, nev};
    bool ok = fwrite(h, sizeof h[0], 3, sp->f) == 3 && fwrite(e, sizeof *e, n, sp->f) == n;
    for (size_t i = 0; ok && i < nev; i++)
        ok = fwrite(&ev[i], sizeof ev[i], 1, sp->f) == 1;
    for (size_t i = 0; ok && i < nev; i++)
        ok = !ev[i].text_len || fwrite(ev[i].text, 1, ev[i].text_len, sp->f) == ev[i].text_len;
    return ok ? DG_OK : dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "spill write failed");
}

dg_status dg_harness_tick(dg_harness_session *s, uint64_t tick, const dg_entity_in *ents, size_t n,
                          const dg_event *events, size_t nev, dg_error *err)
{
    if (!s || s->failed)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_tick", "session failed or NULL");
    if (n > s->cap) {
        size_t nc = n * 2;
        dg_qentity *q = realloc(s->q, nc * sizeof *q);
        if (q)
            s->q = q;
        dg_entity_in *so = realloc(s->sorted, nc * sizeof *so);
        if (so)
            s->sorted = so;
        if (!q || !so) {
            s->failed = true;
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_tick", "out of memory");
        }
        s->cap = nc;
    }
    if (n)
        memcpy(s->sorted, ents, n * sizeof *ents);
    if (n > 1)
        qsort(s->sorted, n, sizeof *s->sorted, cmp_in);
    dg_status st = dg_flrep_writer_tick(s->w, tick, s->sorted, n, events, nev, s->q, err);
    if (st == DG_OK && s->sp.f)
        st = spill_write(&s->sp, tick, s->sorted, n, events, nev, err);
    if (st == DG_OK)
        st = raw_logs_tick(s, tick, s->sorted, NULL, 0, n, events, nev, err);
    if (st != DG_OK) {
        s->failed = true;
        return st;
    }
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    for (size_t i = 0; i < n; i++) {
        const dg_entity_in *e = &s->sorted[i];
        dg_harness__raw_entity(&hs, e, NULL, 0);
    }
    dg_tick_hash th = dg_hash_tick(tick, s->q, n, events, nev, NULL);
    harness__tickrec r = {tick, th.state, th.events, th.combined, dg_hash_raw_end(&hs), th.entity_count, true};
    if ((st = dg_harness__stream_push(&s->rec, &r, err)) != DG_OK)
        s->failed = true;
    return st;
}

/* The extras the spill keeps after a tick's entities (sorted like them). */
static dg_status spill_write_x(spill_source *sp, const int64_t *x, size_t n, dg_error *err)
{
    if (!sp->nx || !n || fwrite(x, sizeof *x, n * sp->nx, sp->f) == n * sp->nx)
        return DG_OK;
    return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, sp->path, "spill write failed");
}

dg_status dg_harness_tick_x(dg_harness_session *s, uint64_t tick, const dg_entity_in *ents, const int64_t *extras,
                            size_t n, const dg_event *events, size_t nev, dg_error *err)
{
    if (!s || s->failed)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_tick_x", "session failed or NULL");
    size_t nx = s->sp.nx;
    if (nx == 0) /* no extra field declared: the plain form */
        return dg_harness_tick(s, tick, ents, n, events, nev, err);
    if (n && !extras)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_tick_x", "extras is NULL for %zu entities "
                            "of a schema with %zu extra fields", n, nx);
    dg_status st = DG_OK;
    if (n > s->cap) {
        dg_qentity *q = realloc(s->q, n * 2 * sizeof *q);
        s->q = q ? q : s->q;
        st = q ? DG_OK : DG_E_NOMEM;
        s->cap = q ? n * 2 : s->cap;
    }
    if (st == DG_OK && n * nx > s->cap_x) {
        int64_t *x = realloc(s->xq, n * nx * 2 * sizeof *x);
        s->xq = x ? x : s->xq;
        st = x ? DG_OK : DG_E_NOMEM;
        s->cap_x = x ? n * nx * 2 : s->cap_x;
    }
    if (st != DG_OK) {
        s->failed = true;
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_tick_x", "out of memory");
    }
    /* the writer sorts by id carrying the extras, and hands back what it wrote */
    st = dg_flrep_writer_tick_x(s->w, tick, ents, extras, n, events, nev, s->q, s->xq, err);
    dg_entity_in *so = NULL;
    bool logs = s->raw_log || s->own_log;
    if (st == DG_OK && (s->sp.f || logs)) { /* the spill and the logs take the inputs sorted like the written state */
        so = malloc((n ? n : 1) * sizeof *so);
        int64_t *xs = malloc((n * nx > 0 ? n * nx : 1) * sizeof *xs);
        if (!so || !xs)
            st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_tick_x", "out of memory");
        for (size_t i = 0; st == DG_OK && i < n; i++) { /* ids are distinct: place each by its sorted rank */
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->q[mid].id < ents[i].id)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            so[lo] = ents[i];
            memcpy(xs + lo * nx, extras + i * nx, nx * sizeof *xs);
        }
        if (st == DG_OK && s->sp.f)
            st = spill_write(&s->sp, tick, so, n, events, nev, err);
        if (st == DG_OK && s->sp.f)
            st = spill_write_x(&s->sp, xs, n, err);
        if (st == DG_OK)
            st = raw_logs_tick(s, tick, so, s->xq, nx, n, events, nev, err);
        free(xs);
    }
    if (st != DG_OK) {
        free(so);
        s->failed = true;
        return st;
    }
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    for (size_t i = 0; so && i < n; i++) /* the raw hash in id order, as the other sources take it */
        dg_harness__raw_entity(&hs, &so[i], NULL, 0);
    free(so);
    dg_tick_hash th = dg_hash_tick_x(tick, s->q, s->xq, nx, n, events, nev, NULL);
    harness__tickrec r = {tick, th.state, th.events, th.combined, dg_hash_raw_end(&hs), th.entity_count,
                          s->sp.f != NULL || logs};
    if ((st = dg_harness__stream_push(&s->rec, &r, err)) != DG_OK)
        s->failed = true;
    return st;
}

static void fill_result(dg_harness_result *out, const dg_report_scenario *sc, const harness__stream *rec)
{
    memset(out, 0, sizeof *out);
    out->ticks = rec ? rec->n : sc->ticks;
    out->entity_ticks = rec ? rec->entity_ticks : sc->entity_ticks;
    out->first_divergent_tick = DG_REPORT_TICK_NONE;
    out->first_raw_tick = DG_REPORT_TICK_NONE;
    for (uint32_t i = 0; sc && i < sc->n_checks; i++) {
        const dg_report_check *c = sc->checks[i];
        out->failed_checks += c->status == DG_REPORT_FAIL;
        out->error_checks += c->status == DG_REPORT_ERROR;
        if (c->first_tick < out->first_divergent_tick)
            out->first_divergent_tick = c->first_tick;
        if (c->first_raw_tick < out->first_raw_tick)
            out->first_raw_tick = c->first_raw_tick;
    }
    if (sc)
        dg_harness__api_first_entity(out, sc);
}

void dg_harness__api_result(dg_harness_result *out, const dg_report_scenario *sc)
{
    fill_result(out, sc, NULL);
}

dg_status dg_harness_close(dg_harness_session *s, dg_report *report, dg_harness_result *out, dg_error *err)
{
    return dg_harness__session_finish(s, report, out, NULL, NULL, err);
}

dg_status dg_harness__session_finish(dg_harness_session *s, dg_report *report, dg_harness_result *out,
                                     harness__stream *keep_rec, harness__raw_first *golden_rf, dg_error *err)
{
    if (!s)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_close", "session is NULL");
    if (s->failed) {
        session_free(s);
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_close", "a tick failed earlier");
    }
    dg_flrep_writer *w = s->w;
    s->w = NULL;
    dg_status st = dg_flrep_writer_close(w, err);
    if (st == DG_OK && s->rec.n == 0)
        st = dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_close", "no tick was recorded");
    harness__raw_logger *own_log = s->own_log; /* complete (its trailer) before the golden reads it */
    s->own_log = NULL;
    dg_status lst = dg_harness__raw_logger_close(own_log, st == DG_OK ? err : NULL);
    if (st == DG_OK)
        st = lst;
    if (st != DG_OK) {
        session_free(s);
        return st;
    }
    dg_report *own = NULL;
    if (!report)
        report = own = dg_report_new("verify", HARNESS_VERSION_NUMBER, NULL, err);
    dg_report_scenario *sc = report ? dg_report_add_scenario(report, s->name, "flrep") : NULL;
    if (!sc) {
        dg_report_free(own);
        session_free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_close", "out of memory");
    }
    sc->ticks = s->rec.n;
    sc->entity_ticks = s->rec.entity_ticks;
    harness__verify_opts vo = {.fault_tick = UINT64_MAX, .seek_fault_tick = UINT64_MAX,
                               .seek_random = s->opts.seek_random ? s->opts.seek_random : 32,
                               .skip_recovery = s->opts.skip_recovery};
    dg_harness__verify_file(sc, &s->src, s->rec_path, &s->rec, &vo);
    harness__raw_first rf = {0};
    const char *v3 = s->own_log_path[0] ? s->own_log_path : NULL;
    st = dg_harness__api_golden_and_log(sc, s->name, s->rec_path, &s->rec, &s->opts, s->golden_raw ? v3 : NULL,
                                        s->opts.hash_log_raw_values ? v3 : NULL, &rf, err);
    if (out) {
        fill_result(out, sc, &s->rec);
        dg_harness__api_raw_first(out, &rf);
    }
    if (golden_rf)
        *golden_rf = rf;
    if (st == DG_OK && s->opts.hash_log_raw_values)
        s->own_log_path[0] = '\0'; /* renamed into place: the hash log, no longer a temp to remove */
    if (keep_rec) {
        *keep_rec = s->rec;
        s->rec = (harness__stream){0};
    }
    dg_report_free(own);
    session_free(s);
    return st;
}

dg_status dg_harness__session_keep_raw(dg_harness_session *s, const char *path, dg_error *err)
{
    return dg_harness__raw_logger_open(&s->raw_log, path, s->name, true, err);
}

dg_status dg_harness__session_end(dg_harness_session *s, harness__stream *rec, char *path, size_t cap, dg_error *err)
{
    if (s->failed) {
        session_free(s);
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_repeat", "a tick failed earlier");
    }
    dg_flrep_writer *w = s->w;
    s->w = NULL;
    dg_status st = dg_flrep_writer_close(w, err);
    if (st == DG_OK && s->rec.n == 0)
        st = dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_harness_repeat", "the run recorded no tick");
    if (st == DG_OK) {
        snprintf(path, cap, "%s", s->rec_path);
        *rec = s->rec;
        s->rec = (harness__stream){0};
        s->temp_rec = false; /* the caller's now */
    }
    session_free(s);
    return st;
}

dg_status dg_harness_diff_files(const char *a, const char *b, const char *name, dg_report *report,
                                dg_harness_result *out, dg_error *err)
{
    dg_report *own = NULL;
    if (!report)
        report = own = dg_report_new("diff", HARNESS_VERSION_NUMBER, NULL, err);
    dg_report_scenario *sc = report ? dg_report_add_scenario(report, name ? name : "diff", "flrep") : NULL;
    dg_report_check *c = sc ? dg_report_add_check(sc, "diff", DG_REPORT_PASS) : NULL;
    if (!c) {
        dg_report_free(own);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_diff_files", "out of memory");
    }
    uint64_t nd = dg_harness__compare_files(c, sc, a, b, err);
    dg_status st = DG_OK;
    if (nd == UINT64_MAX) {
        char buf[512];
        dg_error_format(err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        st = err->code;
    } else if (nd > 0) {
        c->status = DG_REPORT_FAIL;
        dg_report_check_set_message(c, "%llu tick%s differ%s; first at tick %llu", (unsigned long long)c->divergent_ticks,
                                    dg_report_plural_s(c->divergent_ticks), c->divergent_ticks == 1 ? "s" : "",
                                    (unsigned long long)c->first_tick);
    } else {
        dg_report_check_set_message(c, "%llu tick%s, identical", (unsigned long long)sc->ticks,
                                    dg_report_plural_s(sc->ticks));
    }
    if (out)
        fill_result(out, sc, NULL);
    dg_report_free(own);
    return st;
}
