/* tests/harness/test_api_gate.c — the gate through the public C API only (include/detgate/harness.h):
 * a session's hash log (read back and each tick's state hash derived again from the quantizer and
 * dg_hash_tick), the golden compare against a .flrep (tick, entity, field) and a hash log (tick),
 * dg_harness_repeat (N equal runs pass; a run that differs on purpose is named with its tick, entity
 * and field), bad usage, and nothing left behind by a failed run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detgate/harness.h"
#include "detgate/hash.h"

static char g_dir[256]; /* the test's own folder, also TMPDIR: "nothing left behind" is checked on it */

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "%s/dg-api-gate-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir))
        return -1;
    setenv("TMPDIR", g_dir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        if (e->d_name[0] != '.')
            remove(p);
    }
    if (d)
        closedir(d);
    rmdir(g_dir);
    return 0;
}

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* The names in the folder besides keep (NULL-terminated): what a run left behind. */
static int stray_files(const char *const *keep)
{
    int n = 0;
    DIR *d = opendir(g_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        bool kept = e->d_name[0] == '.';
        for (size_t i = 0; keep && keep[i] && !kept; i++)
            kept = strcmp(e->d_name, keep[i]) == 0;
        if (!kept) {
            fprintf(stderr, "left behind: %s\n", e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

static const dg_flrep_type k_types[] = {{0, {"car", 3}, {"Car", 3}, 3, 0}};
static const dg_flrep_faction k_factions[] = {{0, {"none", 4}, {"None", 4}}};

static dg_flrep_header header(void)
{
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("api-gate-test 1");
    h.tick_rate_hz = 30;
    h.planet_radius_m = 6371000.0;
    h.keyframe_interval_ticks = 30;
    h.types = k_types;
    h.type_count = 1;
    h.factions = k_factions;
    h.faction_count = 1;
    return h;
}

#define CARS 6
#define TICKS 150

/* n cars on straight lines; from nudge_tick on, car 3 is 1 m further north (pos.y). */
static void world(uint64_t tick, dg_entity_in *e, uint64_t nudge_tick)
{
    for (size_t i = 0; i < CARS; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].id = (uint32_t)(i + 1);
        e[i].pos[0] = 10.0 * (double)e[i].id + 0.5 * (double)tick;
        e[i].pos[1] = -3.0 * (double)e[i].id + (e[i].id == 3 && tick >= nudge_tick ? 1.0 : 0.0);
        e[i].vel[0] = 15.0;
        e[i].rot[0] = 1.0;
        e[i].health = 1.0;
    }
}

/* The engine of the repeat tests: run `odd_run` nudges car 3 from tick `odd_tick`; run `fail_run`
 * fails at tick 10; run `raw_run` (every run with raw_always) moves car 3 by 1e-9 m east from tick
 * `raw_tick` (far below 1/64 m: the same quantized state, other raw floats). */
#define RAW_NUDGE 1e-9
typedef struct engine {
    unsigned odd_run, fail_run, raw_run;
    bool raw_always;
    uint64_t odd_tick, raw_tick;
    unsigned runs_seen;
} engine;

static dg_status run_engine(void *user, dg_harness_session *s, unsigned run, dg_error *err)
{
    engine *g = user;
    g->runs_seen++;
    dg_entity_in e[CARS];
    for (uint64_t t = 0; t < TICKS; t++) {
        if (run == g->fail_run && t == 10)
            return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "engine", "the solver diverged at tick 10");
        world(t, e, run == g->odd_run ? g->odd_tick : UINT64_MAX);
        if ((run == g->raw_run || g->raw_always) && t >= g->raw_tick)
            e[2].pos[0] += RAW_NUDGE;
        dg_status st = dg_harness_tick(s, t, e, CARS, NULL, 0, err);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}

/* One session, as run 1 of engine g (the repeat tests' engine), with the options given. */
static dg_status run_session_of(engine g, const dg_harness_options *o, dg_report *rep, dg_harness_result *res,
                                dg_error *err)
{
    dg_flrep_header h = header();
    dg_harness_session *s = NULL;
    dg_status st = dg_harness_open(&s, &h, o, err);
    assert_int_equal(st, DG_OK);
    assert_int_equal(run_engine(&g, s, 1, err), DG_OK);
    return dg_harness_close(s, rep, res, err);
}

/* One session: TICKS ticks of world(nudge), with the options given. */
static dg_status run_session(const dg_harness_options *o, uint64_t nudge, dg_report *rep, dg_harness_result *res,
                             dg_error *err)
{
    return run_session_of((engine){.odd_run = 1, .odd_tick = nudge}, o, rep, res, err);
}

/* bless: a session of the plain world writing the golden recording and/or hash log (NULL: not that),
 * the log with each entity's raw floats when raw_values. */
static void bless_with(const char *recording, const char *hash_log, bool raw_values)
{
    dg_error err;
    dg_error_clear(&err);
    dg_harness_options o = dg_harness_default_options();
    o.recording_path = recording;
    o.hash_log_path = hash_log;
    o.hash_log_raw_values = raw_values;
    dg_harness_result res;
    assert_int_equal(run_session(&o, UINT64_MAX, NULL, &res, &err), DG_OK);
}

static void bless(const char *recording, const char *hash_log)
{
    bless_with(recording, hash_log, false);
}

static const dg_report_check *find_check(const dg_report *rep, const char *name)
{
    const dg_report_scenario *sc = rep->scenarios[rep->n_scenarios - 1];
    for (uint32_t i = 0; i < sc->n_checks; i++)
        if (strcmp(sc->checks[i]->name, name) == 0)
            return sc->checks[i];
    return NULL;
}

/* A golden compare's options (the defaults and golden) and a fresh report; err cleared. */
static dg_report *golden_setup(const char *golden, dg_harness_options *g, dg_error *err)
{
    dg_error_clear(err);
    *g = dg_harness_default_options();
    g->golden_path = golden;
    return dg_report_new("gate", "test", NULL, err);
}

/* ---- the hash log -------------------------------------------------------------------------------- */

static void test_hash_log_holds_each_ticks_state_hash(void **state)
{
    (void)state;
    char log[512];
    path_in(log, sizeof log, "run.hashlog.zst");
    dg_harness_options o = dg_harness_default_options();
    o.name = "cars";
    o.hash_log_path = log;
    dg_error err;
    dg_error_clear(&err);
    dg_harness_result res;
    assert_int_equal(run_session(&o, UINT64_MAX, NULL, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 0);
    const char *keep[] = {"run.hashlog.zst", NULL};
    assert_int_equal(stray_files(keep), 0);
    /* read back: every tick, and its state hash derived again from the quantizer */
    dg_hash_log_reader *r = NULL;
    assert_int_equal(dg_hash_log_reader_open(&r, log, &err), DG_OK);
    assert_string_equal(dg_hash_log_reader_header(r)->scenario, "cars");
    assert_true(dg_hash_log_reader_header(r)->raw);
    uint64_t ticks = 0;
    for (;;) {
        dg_hash_log_tick t;
        int got = dg_hash_log_reader_next(r, &t, &err);
        assert_true(got >= 0);
        if (got == 0)
            break;
        dg_entity_in e[CARS];
        dg_qentity q[CARS];
        world(t.tick, e, UINT64_MAX);
        size_t done = 0;
        assert_int_equal(dg_quant_entities(e, q, CARS, &done, &err), DG_OK);
        dg_tick_hash th = dg_hash_tick(t.tick, q, CARS, NULL, 0, NULL);
        assert_int_equal(t.tick, ticks);
        assert_true(t.state == th.state);
        assert_int_equal(t.entity_count, CARS);
        assert_true(t.has_raw);
        ticks++;
    }
    dg_hash_log_reader_close(r);
    assert_int_equal(ticks, TICKS);
    remove(log);
}

/* hash_log_raw_values: a version 3 log whose tick lines are the plain log's, and whose entity lines
 * hold each car's entity hash, raw hash and raw floats, each derived again here from the world. */
static void test_hash_log_with_raw_values(void **state)
{
    (void)state;
    char plain[512], full[512];
    path_in(plain, sizeof plain, "plain.hashlog");
    path_in(full, sizeof full, "full.hashlog.zst");
    bless(NULL, plain);
    bless_with(NULL, full, true);
    const char *keep[] = {"plain.hashlog", "full.hashlog.zst", NULL};
    assert_int_equal(stray_files(keep), 0);
    dg_error err;
    dg_error_clear(&err);
    dg_hash_log_reader *rp = NULL, *rf = NULL;
    assert_int_equal(dg_hash_log_reader_open(&rp, plain, &err), DG_OK);
    assert_int_equal(dg_hash_log_reader_open(&rf, full, &err), DG_OK);
    const dg_hash_log_header *h = dg_hash_log_reader_header(rf);
    assert_true(h->entities && h->raw && h->entity_raw);
    assert_int_equal(h->n_values, 11);
    assert_string_equal(h->values, "pos.x,pos.y,pos.z,vel.x,vel.y,vel.z,rot.w,rot.x,rot.y,rot.z,health");
    assert_int_equal(dg_hash_log_reader_header(rp)->n_values, 0);
    uint64_t ticks = 0;
    for (;;) {
        dg_hash_log_tick a, b;
        int ga = dg_hash_log_reader_next(rp, &a, &err), gb = dg_hash_log_reader_next(rf, &b, &err);
        assert_int_equal(ga, gb);
        if (ga <= 0)
            break;
        assert_true(a.tick == b.tick && a.state == b.state && a.events == b.events && a.raw == b.raw);
        assert_int_equal(b.entity_count, CARS);
        dg_entity_in e[CARS];
        dg_qentity q[CARS];
        world(b.tick, e, UINT64_MAX);
        size_t done = 0;
        assert_int_equal(dg_quant_entities(e, q, CARS, &done, &err), DG_OK);
        for (size_t i = 0; i < CARS; i++) {
            const double f[11] = {e[i].pos[0], e[i].pos[1], e[i].pos[2], e[i].vel[0], e[i].vel[1], e[i].vel[2],
                                  e[i].rot[0], e[i].rot[1], e[i].rot[2], e[i].rot[3], e[i].health};
            dg_hash_stream hs;
            dg_hash_raw_begin(&hs, b.tick);
            dg_hash_raw_entity(&hs, e[i].id, f, 11);
            assert_int_equal(b.ids[i], e[i].id);
            assert_true(b.hashes[i] == dg_hash_entity(&q[i]));
            assert_true(b.raw_hashes[i] == dg_hash_raw_end(&hs));
            assert_memory_equal(&b.raw_bits[i * 11], f, sizeof f); /* bit for bit */
        }
        ticks++;
    }
    dg_hash_log_reader_close(rp);
    dg_hash_log_reader_close(rf);
    assert_int_equal(ticks, TICKS);
    remove(plain);
    remove(full);
}

/* hash_log_raw_values without a hash log would do nothing: a usage error, no file. With one, a
 * repeat's later runs (which keep no log) still run, and run 1's log is the version 3 one. */
static void test_hash_log_raw_values_needs_a_log(void **state)
{
    (void)state;
    dg_harness_options o = dg_harness_default_options();
    o.hash_log_raw_values = true;
    dg_flrep_header h = header();
    dg_harness_session *s = (dg_harness_session *)&o; /* must come back NULL */
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_open(&s, &h, &o, &err), DG_E_USAGE);
    assert_null(s);
    assert_non_null(strstr(err.msg, "hash_log_path is NULL"));
    assert_int_equal(stray_files(NULL), 0);

    char log[512];
    path_in(log, sizeof log, "repeat.hashlog");
    o.hash_log_path = log;
    engine g = {.odd_run = 0};
    dg_harness_result res;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_repeat(&h, &o, 3, run_engine, &g, NULL, &res, &err), DG_OK);
    assert_int_equal(g.runs_seen, 3);
    assert_int_equal(res.failed_checks + res.error_checks, 0);
    dg_hash_log_reader *r = NULL;
    assert_int_equal(dg_hash_log_reader_open(&r, log, &err), DG_OK);
    assert_true(dg_hash_log_reader_header(r)->entity_raw);
    dg_hash_log_reader_close(r);
    const char *keep[] = {"repeat.hashlog", NULL};
    assert_int_equal(stray_files(keep), 0);
    remove(log);
}

static void test_hash_log_not_half_written(void **state)
{
    (void)state;
    char log[512];
    path_in(log, sizeof log, "never.hashlog");
    dg_harness_options o = dg_harness_default_options();
    o.hash_log_path = log;
    dg_flrep_header h = header();
    dg_harness_session *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_open(&s, &h, &o, &err), DG_OK);
    dg_entity_in e[CARS];
    world(0, e, UINT64_MAX);
    assert_int_equal(dg_harness_tick(s, 0, e, CARS, NULL, 0, &err), DG_OK);
    dg_harness_abort(s); /* an engine that gives up: no log, no temp */
    assert_int_equal(stray_files(NULL), 0);
    /* a log in a folder that does not exist: finish says so, and leaves nothing */
    path_in(log, sizeof log, "no-such-folder/run.hashlog");
    o.hash_log_path = log;
    dg_harness_result res;
    dg_error_clear(&err);
    assert_int_not_equal(run_session(&o, UINT64_MAX, NULL, &res, &err), DG_OK);
    assert_non_null(strstr(err.where, "no-such-folder"));
    assert_int_equal(stray_files(NULL), 0);
    /* with the raw floats the log is written as the ticks come: abandoned, its temp goes too; in a
     * folder that does not exist, the session does not open */
    path_in(log, sizeof log, "never.hashlog.zst");
    o.hash_log_path = log;
    o.hash_log_raw_values = true;
    s = NULL;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_open(&s, &h, &o, &err), DG_OK);
    assert_int_equal(dg_harness_tick(s, 0, e, CARS, NULL, 0, &err), DG_OK);
    dg_harness_abort(s);
    assert_int_equal(stray_files(NULL), 0);
    path_in(log, sizeof log, "no-such-folder/run.hashlog");
    dg_error_clear(&err);
    s = NULL;
    assert_int_not_equal(dg_harness_open(&s, &h, &o, &err), DG_OK);
    assert_null(s);
    assert_non_null(strstr(err.where, "no-such-folder"));
    assert_int_equal(stray_files(NULL), 0);
}

/* ---- the golden compare -------------------------------------------------------------------------- */

static void test_golden_compare_names_tick_entity_field(void **state)
{
    (void)state;
    char golden[512], golden_log[512];
    path_in(golden, sizeof golden, "golden.flrep");
    path_in(golden_log, sizeof golden_log, "golden.hashlog.zst");
    bless(golden, golden_log); /* the recording and its hash log */
    dg_error err;
    dg_harness_result res;
    dg_harness_options g;
    dg_report *rep = golden_setup(golden, &g, &err);
    assert_int_equal(run_session(&g, UINT64_MAX, rep, &res, &err), DG_OK); /* the same world: PASS */
    assert_int_equal(res.failed_checks, 0);
    assert_true(res.first_divergent_tick == DG_REPORT_TICK_NONE);
    assert_string_equal(res.first_divergent_check, "");
    const dg_report_check *c = find_check(rep, "golden");
    assert_non_null(c);
    assert_int_equal(c->status, DG_REPORT_PASS);
    assert_non_null(strstr(c->message, "150 ticks identical to the golden (recording)"));

    assert_int_equal(run_session(&g, 77, rep, &res, &err), DG_OK); /* car 3 moved from tick 77 */
    assert_int_equal(res.failed_checks, 1);
    assert_int_equal(res.first_divergent_tick, 77);
    assert_int_equal(res.first_divergent_entity, 3);
    assert_string_equal(res.first_divergent_field, "pos.y");
    assert_string_equal(res.first_divergent_check, "golden");
    c = find_check(rep, "golden");
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_non_null(strstr(c->message, "73 ticks differ from the golden (recording); first at tick 77"));

    /* without a report of the caller's: the session's own is freed, the result still names it all */
    memset(&res, 0xa5, sizeof res);
    assert_int_equal(run_session(&g, 77, NULL, &res, &err), DG_OK);
    assert_int_equal(res.first_divergent_tick, 77);
    assert_int_equal(res.first_divergent_entity, 3);
    assert_string_equal(res.first_divergent_field, "pos.y");
    assert_string_equal(res.first_divergent_check, "golden");

    g.golden_path = golden_log; /* a hash log golden: the tick, no states to name the entity */
    assert_int_equal(run_session(&g, 77, rep, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 1);
    assert_int_equal(res.first_divergent_tick, 77);
    assert_int_equal(res.first_divergent_entity, 0);
    assert_string_equal(res.first_divergent_field, "");
    assert_non_null(strstr(find_check(rep, "golden")->message, "from the golden (hash log); first at tick 77"));
    assert_int_equal(run_session(&g, UINT64_MAX, rep, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 0);

    char missing[512];
    path_in(missing, sizeof missing, "missing.flrep");
    g.golden_path = missing; /* a golden that is not there: the check could not run */
    assert_int_equal(run_session(&g, UINT64_MAX, rep, &res, &err), DG_OK);
    assert_int_equal(res.error_checks, 1);
    assert_int_equal(find_check(rep, "golden")->status, DG_REPORT_ERROR);
    assert_non_null(strstr(find_check(rep, "golden")->message, "cannot compare with the golden"));
    dg_report_free(rep);
    const char *keep[] = {"golden.flrep", "golden.hashlog.zst", NULL};
    assert_int_equal(stray_files(keep), 0);
    remove(golden);
    remove(golden_log);
}

/* A raw-only drift against a hash log golden: a warning, no failed check, the raw floats the golden's
 * one hash per tick covers named, and why the entity is not. */
static void test_golden_raw_drift_names_the_hashed_floats(void **state)
{
    (void)state;
    char golden_log[512];
    path_in(golden_log, sizeof golden_log, "golden.hashlog.zst");
    bless(NULL, golden_log);
    dg_error err;
    dg_harness_result res;
    dg_harness_options g;
    dg_report *rep = golden_setup(golden_log, &g, &err);
    /* car 3 moved by RAW_NUDGE from tick 40: the same quantized state, other raw floats */
    assert_int_equal(run_session_of((engine){.raw_run = 1, .raw_tick = 40}, &g, rep, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 0);
    assert_int_equal(res.first_raw_tick, 40);
    const dg_report_check *c = find_check(rep, "golden");
    assert_int_equal(c->status, DG_REPORT_WARN);
    const char *want = "raw floats differ from tick 40 (sub-quantum drift; hashed raw floats "
                       "pos.x,pos.y,pos.z,vel.x,vel.y,vel.z,rot.w,rot.x,rot.y,rot.z,health)";
    if (!strstr(c->message, want))
        fail_msg("message \"%s\" lacks \"%s\"", c->message, want);
    assert_int_equal(c->n_details, 1);
    assert_non_null(strstr(c->details[0], "keeps one raw hash per tick"));

    /* this run keeps a version 3 log of its own, the golden has none: still the hashed floats, no entity */
    char mine[512];
    path_in(mine, sizeof mine, "mine.hashlog");
    g.hash_log_path = mine;
    g.hash_log_raw_values = true;
    assert_int_equal(run_session_of((engine){.raw_run = 1, .raw_tick = 40}, &g, rep, &res, &err), DG_OK);
    assert_int_equal(res.first_raw_tick, 40);
    assert_int_equal(res.first_raw_entity, 0);
    c = find_check(rep, "golden");
    if (!strstr(c->message, want))
        fail_msg("message \"%s\" lacks \"%s\"", c->message, want);
    dg_report_free(rep);
    const char *keep[] = {"golden.hashlog.zst", "mine.hashlog", NULL};
    assert_int_equal(stray_files(keep), 0);
    remove(golden_log);
    remove(mine);
}

/* The same drift against a golden log with each entity's raw floats (hash_log_raw_values): the check
 * and the result name the entity, the field and both raw values, as `detgate gate` names them. */
static void test_golden_raw_drift_names_the_value_against_a_raw_log(void **state)
{
    (void)state;
    char golden_log[512];
    path_in(golden_log, sizeof golden_log, "golden.hashlog.zst");
    bless_with(NULL, golden_log, true);
    dg_error err;
    dg_harness_result res;
    dg_harness_options g;
    dg_report *rep = golden_setup(golden_log, &g, &err);
    assert_int_equal(run_session_of((engine){.odd_run = 0}, &g, rep, &res, &err), DG_OK); /* the same world */
    assert_int_equal(find_check(rep, "golden")->status, DG_REPORT_PASS);
    assert_true(res.first_raw_tick == DG_REPORT_TICK_NONE);
    assert_int_equal(res.first_raw_entity, 0);
    assert_int_equal(run_session_of((engine){.raw_run = 1, .raw_tick = 40}, &g, rep, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 0);
    assert_int_equal(res.first_raw_tick, 40);
    assert_int_equal(res.first_raw_entity, 3);
    assert_string_equal(res.first_raw_field, "pos.x");
    dg_entity_in e[CARS];
    world(40, e, UINT64_MAX);
    double a = e[2].pos[0], b = e[2].pos[0] + RAW_NUDGE;
    assert_memory_equal(&res.first_raw_a, &a, sizeof a); /* the golden's, bit for bit */
    assert_memory_equal(&res.first_raw_b, &b, sizeof b);
    const dg_report_check *c = find_check(rep, "golden");
    assert_int_equal(c->status, DG_REPORT_WARN);
    char want[200];
    snprintf(want, sizeof want, "raw floats differ from tick 40, first in entity 3, pos.x: raw A %.17g, B %.17g", a, b);
    if (!strstr(c->message, want))
        fail_msg("message \"%s\" lacks \"%s\"", c->message, want);
    /* a repeat whose every run drifts from that golden alike: the golden's drift is the result's */
    dg_harness_result rr;
    engine twice = {.raw_always = true, .raw_tick = 40};
    dg_flrep_header h = header();
    assert_int_equal(dg_harness_repeat(&h, &g, 2, run_engine, &twice, rep, &rr, &err), DG_OK);
    assert_int_equal(rr.first_raw_tick, 40);
    assert_int_equal(rr.first_raw_entity, 3);
    assert_string_equal(rr.first_raw_field, "pos.x");
    assert_memory_equal(&rr.first_raw_a, &a, sizeof a);
    assert_memory_equal(&rr.first_raw_b, &b, sizeof b);
    assert_int_equal(find_check(rep, "repeat")->status, DG_REPORT_PASS);
    assert_false(find_check(rep, "repeat")->sub_quantum); /* the runs agree to the bit */
    /* ... and where run 2 drifts from run 1 at the same tick, the repeat's: run 1 is its reference */
    twice = (engine){.raw_run = 1, .raw_tick = 40};
    assert_int_equal(dg_harness_repeat(&h, &g, 2, run_engine, &twice, rep, &rr, &err), DG_OK);
    assert_int_equal(rr.first_raw_entity, 3);
    assert_memory_equal(&rr.first_raw_a, &b, sizeof b);
    assert_memory_equal(&rr.first_raw_b, &a, sizeof a);
    dg_report_free(rep);
    const char *keep[] = {"golden.hashlog.zst", NULL};
    assert_int_equal(stray_files(keep), 0); /* the session's own raw log is gone */
    remove(golden_log);
}

/* ---- repeat runs --------------------------------------------------------------------------------- */

static void test_repeat_equal_runs_pass(void **state)
{
    (void)state;
    dg_flrep_header h = header();
    engine g = {.odd_run = 0};
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = dg_report_new("verify", "test", NULL, &err);
    dg_harness_result res;
    assert_int_equal(dg_harness_repeat(&h, NULL, 4, run_engine, &g, rep, &res, &err), DG_OK);
    assert_int_equal(g.runs_seen, 4);
    assert_int_equal(res.failed_checks, 0);
    assert_int_equal(res.error_checks, 0);
    assert_int_equal(res.ticks, TICKS);
    const dg_report_check *c = find_check(rep, "repeat");
    assert_non_null(c);
    assert_int_equal(c->status, DG_REPORT_PASS);
    assert_string_equal(c->message, "4 runs, 150 ticks each: every run recorded the same state");
    assert_non_null(find_check(rep, "record-vs-replay")); /* run 1 had the verify checks */
    dg_report_free(rep);
    assert_int_equal(stray_files(NULL), 0);
}

static void test_repeat_names_the_run_that_differs(void **state)
{
    (void)state;
    dg_flrep_header h = header();
    engine g = {.odd_run = 3, .odd_tick = 120};
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = dg_report_new("verify", "test", NULL, &err);
    dg_harness_result res;
    assert_int_equal(dg_harness_repeat(&h, NULL, 5, run_engine, &g, rep, &res, &err), DG_OK);
    assert_int_equal(g.runs_seen, 3); /* stops at the first run that differs */
    assert_int_equal(res.failed_checks, 1);
    assert_int_equal(res.first_divergent_tick, 120);
    assert_int_equal(res.first_divergent_entity, 3);
    assert_string_equal(res.first_divergent_field, "pos.y");
    assert_string_equal(res.first_divergent_check, "repeat");
    const dg_report_check *c = find_check(rep, "repeat");
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_non_null(strstr(c->message, "run 3 recorded another state than run 1: 30 ticks differ; first at tick 120"));
    dg_report_free(rep);
    assert_int_equal(stray_files(NULL), 0);
}

/* A run-to-run drift below the quantum: no check fails, and the result and the repeat check name the
 * tick, the entity, the field and both raw values exactly as the engine handed them over. */
static void test_repeat_names_a_raw_drift_down_to_the_value(void **state)
{
    (void)state;
    dg_flrep_header h = header();
    engine g = {.raw_run = 2, .raw_tick = 40};
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = dg_report_new("verify", "test", NULL, &err);
    dg_harness_result res;
    assert_int_equal(dg_harness_repeat(&h, NULL, 3, run_engine, &g, rep, &res, &err), DG_OK);
    assert_int_equal(res.failed_checks, 0);
    assert_true(res.first_divergent_tick == DG_REPORT_TICK_NONE);
    assert_int_equal(res.first_raw_tick, 40);
    assert_int_equal(res.first_raw_entity, 3);
    assert_string_equal(res.first_raw_field, "pos.x");
    dg_entity_in e[CARS];
    world(40, e, UINT64_MAX);
    double a = e[2].pos[0], b = e[2].pos[0] + RAW_NUDGE;
    assert_memory_equal(&res.first_raw_a, &a, sizeof a); /* bit for bit */
    assert_memory_equal(&res.first_raw_b, &b, sizeof b);
    const dg_report_check *c = find_check(rep, "repeat");
    assert_int_equal(c->status, DG_REPORT_PASS);
    assert_true(c->sub_quantum);
    char want[200];
    snprintf(want, sizeof want, "raw floats differ from tick 40, first in entity 3, pos.x: raw A %.17g, B %.17g", a, b);
    if (!strstr(c->message, want))
        fail_msg("message \"%s\" lacks \"%s\"", c->message, want);
    dg_report_free(rep);
    assert_int_equal(stray_files(NULL), 0); /* the runs' raw logs are gone */
}

static void test_repeat_errors(void **state)
{
    (void)state;
    dg_flrep_header h = header();
    engine g = {.fail_run = 2};
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_repeat(&h, NULL, 1, run_engine, &g, NULL, NULL, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "2..1000 runs"));
    dg_error_clear(&err);
    assert_int_equal(dg_harness_repeat(&h, NULL, 3, NULL, &g, NULL, NULL, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "no run function"));
    /* run 2 fails: its error comes back, the check says which run, nothing is left behind */
    dg_error_clear(&err);
    dg_report *rep = dg_report_new("verify", "test", NULL, &err);
    dg_harness_result res;
    assert_int_equal(dg_harness_repeat(&h, NULL, 3, run_engine, &g, rep, &res, &err), DG_E_STATE);
    assert_non_null(strstr(err.msg, "the solver diverged at tick 10"));
    const dg_report_check *c = find_check(rep, "repeat");
    assert_int_equal(c->status, DG_REPORT_ERROR);
    assert_non_null(strstr(c->message, "run 2 of 3 could not record"));
    assert_int_equal(res.error_checks, 1);
    dg_report_free(rep);
    assert_int_equal(stray_files(NULL), 0);
    /* run 1 fails: no scenario */
    g = (engine){.fail_run = 1};
    dg_error_clear(&err);
    rep = dg_report_new("verify", "test", NULL, &err);
    assert_int_equal(dg_harness_repeat(&h, NULL, 2, run_engine, &g, rep, NULL, &err), DG_E_STATE);
    assert_int_equal(rep->n_scenarios, 0);
    dg_report_free(rep);
    assert_int_equal(stray_files(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_log_holds_each_ticks_state_hash),
        cmocka_unit_test(test_hash_log_with_raw_values),
        cmocka_unit_test(test_hash_log_raw_values_needs_a_log),
        cmocka_unit_test(test_hash_log_not_half_written),
        cmocka_unit_test(test_golden_compare_names_tick_entity_field),
        cmocka_unit_test(test_golden_raw_drift_names_the_hashed_floats),
        cmocka_unit_test(test_golden_raw_drift_names_the_value_against_a_raw_log),
        cmocka_unit_test(test_repeat_equal_runs_pass),
        cmocka_unit_test(test_repeat_names_the_run_that_differs),
        cmocka_unit_test(test_repeat_names_a_raw_drift_down_to_the_value),
        cmocka_unit_test(test_repeat_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
