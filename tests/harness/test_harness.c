/* tests/harness/test_harness.c — the harness room's own checks: every injected break from sim_stub
 * is caught (a bit flip at tick T is reported at exactly T, entity and field), a replay-side codec
 * fault is caught at the tick it starts, the engine C API and the state-stream sources round-trip,
 * and bad state streams fail with a located error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detgate/harness.h"
#include "harness/harness_internal.h"

/* ---- fixtures ----------------------------------------------------------------------------------- */

static const char *src_dir(void)
{
    const char *d = getenv("DETGATE_SOURCE_DIR");
    return d ? d : ".";
}

static void tmp_path(char *buf, size_t cap, const char *stem, const char *suffix)
{
    assert_true(dg_harness__temp_path(buf, cap, NULL, stem, suffix));
}

/* A copy of a bundled scenario, with its duration replaced when one is given (so a test runs a
 * prefix of it; only for scenarios with no scripted item past the new end). */
static void short_scenario(const char *name, const char *duration, char *out, size_t cap)
{
    char in[1024];
    snprintf(in, sizeof in, "%s/corpus/scenarios/%s.scn", src_dir(), name);
    FILE *f = fopen(in, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *d = strstr(text, "duration=");
    assert_non_null(d);
    if (!duration) {
        tmp_path(out, cap, name, ".scn");
        FILE *o = fopen(out, "wb");
        assert_non_null(o);
        fputs(text, o);
        fclose(o);
        return;
    }
    char *end = d + 9;
    while (*end && *end != ' ' && *end != '\n')
        end++;
    tmp_path(out, cap, name, ".scn");
    FILE *o = fopen(out, "wb");
    assert_non_null(o);
    fprintf(o, "%.*sduration=%s%s", (int)(d - text), text, duration, end);
    fclose(o);
}

static void record_scn(const char *scn, const char *inject, const char *path, harness__stream *out)
{
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_scenario(&src, scn, inject, 0, &err), DG_OK);
    assert_int_equal(dg_harness__record(src, path, NULL, out, &err), DG_OK);
    dg_harness__source_free(src);
}

static dg_report *new_report(void)
{
    dg_error err;
    dg_error_clear(&err);
    dg_report *r = dg_report_new("test", "test", NULL, &err);
    assert_non_null(r);
    return r;
}

static bool entity_has_field(const dg_report_entity *e, const char *field)
{
    for (uint32_t i = 0; i < e->n_fields; i++)
        if (strcmp(e->fields[i].name, field) == 0)
            return true;
    return false;
}

/* ---- injected breaks ------------------------------------------------------------------------------ */

typedef struct flip_case {
    const char *field, *bit, *reported;
} flip_case;

static void test_bitflip_reported_at_tick_entity_field(void **state)
{
    (void)state;
    /* Mantissa bits large enough to cross a quantum; health's exponent bit halves 1.0; a flags bit. */
    static const flip_case cases[] = {
        {"pos.x", "45", "pos.x"}, {"pos.z", "44", "pos.z"}, {"vel.y", "47", "vel.y"},
        {"rot.w", "45", "rot"},   {"health", "52", "health"}, {"flags", "5", "flags"},
    };
    char scn[512], good[512], bad[512];
    short_scenario("dogfight-40", NULL, scn, sizeof scn);
    tmp_path(good, sizeof good, "good", ".flrep");
    harness__stream gs = {0};
    record_scn(scn, NULL, good, &gs);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char inj[128];
        const uint64_t tick = 300 + 17 * k;
        const uint32_t id = (uint32_t)(7 + k);
        snprintf(inj, sizeof inj, "bitflip:tick=%llu,entity=%u,field=%s,bit=%s", (unsigned long long)tick, id,
                 cases[k].field, cases[k].bit);
        tmp_path(bad, sizeof bad, "bad", ".flrep");
        harness__stream bs = {0};
        record_scn(scn, inj, bad, &bs);

        dg_report *rep = new_report();
        dg_report_scenario *sc = dg_report_add_scenario(rep, "flip", "flrep");
        dg_report_check *c = dg_report_add_check(sc, "golden", DG_REPORT_PASS);
        dg_error err;
        dg_error_clear(&err);
        uint64_t nd = dg_harness__compare_files(c, sc, good, bad, &err);
        assert_true(nd > 0 && nd != UINT64_MAX);
        assert_int_equal(c->first_tick, tick);
        assert_true(c->n_ticks >= 1);
        const dg_report_tick *t = c->ticks[0];
        assert_int_equal(t->tick, tick);
        /* exactly the flipped entity changed at T, nothing added or lost */
        assert_int_equal(t->changed, 1);
        assert_int_equal(t->added + t->lost, 0);
        assert_int_equal(t->entities[0].id, id);
        assert_int_equal(t->entities[0].kind, DG_REPORT_ENTITY_CHANGED);
        assert_true(entity_has_field(&t->entities[0], cases[k].reported));

        /* the record-side streams agree; raw floats first differ at T as well (flags are an integer
         * field: the raw hash covers the floats only, docs/STATE-HASH.md §6) */
        uint64_t first[1], first_raw;
        size_t nf;
        assert_true(dg_harness__compare_streams(NULL, &gs, &bs, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw) > 0);
        assert_int_equal(first[0], tick);
        assert_int_equal(first_raw, strcmp(cases[k].field, "flags") ? tick : DG_REPORT_TICK_NONE);
        dg_report_free(rep);
        dg_harness__stream_free(&bs);
        remove(bad);
    }
    dg_harness__stream_free(&gs);
    remove(good);
    remove(scn);
}

/* A break is caught when the quantized state diverges, or at least the raw floats (sub-quantum). */
static void assert_injection_caught(const char *scenario, const char *duration, const char *inject)
{
    char scn[512], a[512], b[512];
    short_scenario(scenario, duration, scn, sizeof scn);
    tmp_path(a, sizeof a, "a", ".flrep");
    tmp_path(b, sizeof b, "b", ".flrep");
    harness__stream sa = {0}, sb = {0};
    record_scn(scn, NULL, a, &sa);
    record_scn(scn, inject, b, &sb);
    uint64_t first[1], first_raw;
    size_t nf;
    uint64_t nd = dg_harness__compare_streams(NULL, &sa, &sb, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    if (nd == 0 && first_raw == DG_REPORT_TICK_NONE)
        fail_msg("injection '%s' on %s was not caught", inject, scenario);
    /* and the normal build is reproducible: a second normal run is identical, raw floats included */
    harness__stream sc = {0};
    record_scn(scn, NULL, b, &sc);
    assert_int_equal(dg_harness__compare_streams(NULL, &sa, &sc, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw), 0);
    assert_int_equal(first_raw, DG_REPORT_TICK_NONE);
    dg_harness__stream_free(&sa);
    dg_harness__stream_free(&sb);
    dg_harness__stream_free(&sc);
    remove(a);
    remove(b);
    remove(scn);
}

static void test_fma_caught(void **state)
{
    (void)state;
    assert_injection_caught("dogfight-40", NULL, "fma");
}

static void test_libm_trig_caught(void **state)
{
    (void)state;
    assert_injection_caught("dogfight-40", NULL, "libm-trig");
}

static void test_pointer_order_caught(void **state)
{
    (void)state;
    assert_injection_caught("events", "60s", "pointer-order");
}

static void test_clock_seed_caught(void **state)
{
    (void)state;
    assert_injection_caught("stress-1000", "1s", "clock-seed");
}

static void test_racy_threads_caught(void **state)
{
    (void)state;
    assert_injection_caught("dogfight-40", NULL, "racy-threads");
}

/* ---- replay-side codec fault ---------------------------------------------------------------------- */

static const dg_report_check *find_check(const dg_report_scenario *sc, const char *name)
{
    for (uint32_t i = 0; i < sc->n_checks; i++)
        if (strcmp(sc->checks[i]->name, name) == 0)
            return sc->checks[i];
    return NULL;
}

static void verify_with_faults(uint64_t fault, uint64_t seek_fault, const char *inject, dg_report **out_rep,
                               dg_report_scenario **out_sc, int *failed)
{
    char scn[512], path[512];
    short_scenario("dogfight-40", NULL, scn, sizeof scn);
    tmp_path(path, sizeof path, "verify", ".flrep");
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_scenario(&src, scn, inject, 0, &err), DG_OK);
    harness__stream rec = {0};
    assert_int_equal(dg_harness__record(src, path, NULL, &rec, &err), DG_OK);
    dg_report *rep = new_report();
    dg_report_scenario *sc = dg_report_add_scenario(rep, "dogfight-40", "flrep");
    harness__verify_opts vo = {.fault_tick = fault, .seek_fault_tick = seek_fault, .seek_random = 8};
    *failed = dg_harness__verify_file(sc, src, path, &rec, &vo);
    dg_harness__stream_free(&rec);
    dg_harness__source_free(src);
    remove(path);
    remove(scn);
    *out_rep = rep;
    *out_sc = sc;
}

static void verify_with_fault(uint64_t fault, const char *inject, dg_report **out_rep, dg_report_scenario **out_sc,
                              int *failed)
{
    verify_with_faults(fault, UINT64_MAX, inject, out_rep, out_sc, failed);
}

static void test_verify_clean_run_passes(void **state)
{
    (void)state;
    dg_report *rep;
    dg_report_scenario *sc;
    int failed;
    verify_with_fault(UINT64_MAX, NULL, &rep, &sc, &failed);
    assert_int_equal(failed, 0);
    assert_int_equal(sc->n_checks, 3);
    for (uint32_t i = 0; i < sc->n_checks; i++)
        assert_int_equal(sc->checks[i]->status, DG_REPORT_PASS);
    dg_report_free(rep);
}

static void test_replay_fault_caught_at_its_tick(void **state)
{
    (void)state;
    /* 130 is a delta tick (keyframes every 120 in dogfight-40): its deltas are applied twice */
    dg_report *rep;
    dg_report_scenario *sc;
    int failed;
    verify_with_fault(130, NULL, &rep, &sc, &failed);
    assert_true(failed >= 1);
    const dg_report_check *c = find_check(sc, "record-vs-replay");
    assert_non_null(c);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_int_equal(c->first_tick, 130);
    assert_true(c->n_ticks >= 1);
    assert_int_equal(c->ticks[0]->tick, 130);
    assert_true(c->ticks[0]->changed >= 1);
    assert_null(strstr(c->message, "did not reproduce")); /* a deterministic source re-derives exactly */
    dg_report_free(rep);
}

static void test_seek_fault_caught_by_seek_check_only(void **state)
{
    (void)state;
    /* 239 is the last tick of the second chunk (keyframes every 120): a chunk edge, always sampled.
     * A seek there drops tick 238's delta; linear playback never seeks, so only `seek` fails. */
    dg_report *rep;
    dg_report_scenario *sc;
    int failed;
    verify_with_faults(UINT64_MAX, 239, NULL, &rep, &sc, &failed);
    assert_int_equal(failed, 1);
    const dg_report_check *lin = find_check(sc, "record-vs-replay"), *rec = find_check(sc, "recovery");
    const dg_report_check *c = find_check(sc, "seek");
    assert_non_null(lin);
    assert_non_null(rec);
    assert_non_null(c);
    assert_int_equal(lin->status, DG_REPORT_PASS);
    assert_int_equal(rec->status, DG_REPORT_PASS);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_int_equal(c->first_tick, 239);
    assert_int_equal(c->divergent_ticks, 1);
    assert_true(c->n_ticks >= 1);
    assert_int_equal(c->ticks[0]->tick, 239);
    assert_true(c->ticks[0]->changed >= 1); /* a stale world: entities changed, not lost */
    assert_non_null(strstr(c->message, "first at tick 239"));
    dg_report_free(rep);
}

static void test_nondeterministic_source_flagged_in_diff(void **state)
{
    (void)state;
    /* the record side is re-derived by re-running the source; a clock-seeded one cannot be, and says so */
    dg_report *rep;
    dg_report_scenario *sc;
    int failed;
    verify_with_fault(130, "clock-seed", &rep, &sc, &failed);
    const dg_report_check *c = find_check(sc, "record-vs-replay");
    assert_non_null(c);
    assert_int_equal(c->first_tick, 130);
    assert_non_null(strstr(c->message, "did not reproduce its own recorded state at tick 130"));
    dg_report_free(rep);
}

/* ---- the engine C API -------------------------------------------------------------------------- */

static const dg_flrep_type k_types[] = {{0, {"car", 3}, {"Car", 3}, 3, 0}};
static const dg_flrep_faction k_factions[] = {{0, {"none", 4}, {"None", 4}}};
static const dg_flrep_participant k_roster[] = {{1, 3, {"Driver", 6}}};

static dg_flrep_header api_header(void)
{
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("test-engine 1.0");
    h.tick_rate_hz = 30;
    h.planet_radius_m = 6371000.0;
    h.keyframe_interval_ticks = 30;
    h.types = k_types;
    h.type_count = 1;
    h.factions = k_factions;
    h.faction_count = 1;
    h.participants = k_roster;
    h.participant_count = 1;
    return h;
}

/* A toy engine: n cars on straight lines; `nudge_tick` moves car 3 by 1 m from that tick on. */
static void engine_world(uint64_t tick, dg_entity_in *e, size_t n, uint64_t nudge_tick)
{
    for (size_t i = 0; i < n; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].id = (uint32_t)(n - i); /* handed over in reverse id order on purpose */
        e[i].pos[0] = 10.0 * (double)e[i].id + 0.5 * (double)tick;
        e[i].pos[1] = -3.0 * (double)e[i].id;
        e[i].pos[2] = 6371000.0;
        e[i].vel[0] = 15.0;
        e[i].rot[0] = 1.0;
        e[i].health = 1.0;
        if (e[i].id == 3 && tick >= nudge_tick)
            e[i].pos[1] += 1.0;
    }
}

static void run_api(const char *path, uint64_t nudge, dg_harness_result *res, dg_report *rep)
{
    dg_flrep_header h = api_header();
    dg_harness_options o = dg_harness_default_options();
    o.recording_path = path;
    o.name = "toy";
    dg_harness_session *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_open(&s, &h, &o, &err), DG_OK);
    dg_entity_in e[8];
    for (uint64_t t = 0; t < 200; t++) {
        engine_world(t, e, 8, nudge);
        dg_event chat = {DG_EV_CHAT, t, 1, 0, 0, 0, "hi", 2};
        assert_int_equal(dg_harness_tick(s, t, e, 8, &chat, t % 50 == 0 ? 1 : 0, &err), DG_OK);
    }
    assert_int_equal(dg_harness_close(s, rep, res, &err), DG_OK);
}

static void test_api_session_verifies_and_diffs(void **state)
{
    (void)state;
    char a[512], b[512];
    tmp_path(a, sizeof a, "api-a", ".flrep");
    tmp_path(b, sizeof b, "api-b", ".flrep");
    dg_harness_result ra, rb, rd;
    dg_report *rep = new_report();
    run_api(a, UINT64_MAX, &ra, rep);
    run_api(b, 77, &rb, rep);
    assert_int_equal(ra.ticks, 200);
    assert_int_equal(ra.entity_ticks, 1600);
    assert_int_equal(ra.failed_checks, 0);
    assert_int_equal(ra.error_checks, 0);
    assert_int_equal(rb.failed_checks, 0); /* b is self-consistent, only different */
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness_diff_files(a, b, "toy", rep, &rd, &err), DG_OK);
    assert_int_equal(rd.failed_checks, 1);
    assert_int_equal(rd.first_divergent_tick, 77);
    const dg_report_check *c = rep->scenarios[2]->checks[0];
    assert_int_equal(c->ticks[0]->entities[0].id, 3);
    assert_string_equal(c->ticks[0]->entities[0].name, "Driver");
    assert_true(entity_has_field(&c->ticks[0]->entities[0], "pos.y"));
    dg_report_free(rep);
    remove(a);
    remove(b);
}

/* ---- state streams ------------------------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void record_states(const char *path, harness__stream *out)
{
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_states(&src, path, 0, &err), DG_OK);
    char rec[512];
    tmp_path(rec, sizeof rec, "states", ".flrep");
    assert_int_equal(dg_harness__record(src, rec, NULL, out, &err), DG_OK);
    dg_report *rep = new_report();
    dg_report_scenario *sc = dg_report_add_scenario(rep, "states", "flrep");
    harness__verify_opts vo = {.fault_tick = UINT64_MAX, .seek_fault_tick = UINT64_MAX, .seek_random = 4};
    assert_int_equal(dg_harness__verify_file(sc, src, rec, out, &vo), 0);
    dg_report_free(rep);
    dg_harness__source_free(src);
    remove(rec);
}

static void test_states_csv_and_jsonl_agree(void **state)
{
    (void)state;
    char csv[512], jsl[512];
    tmp_path(csv, sizeof csv, "st", ".csv");
    tmp_path(jsl, sizeof jsl, "st", ".jsonl");
    FILE *c = fopen(csv, "wb"), *j = fopen(jsl, "wb");
    assert_non_null(c);
    assert_non_null(j);
    fputs("# a comment line\ntick,id,type,faction,px,py,pz,vx,vy,vz,qw,qx,qy,qz,health,flags\n", c);
    fputs("{\"detgate_states\":1,\"scenario\":\"toy\",\"tick_rate_hz\":60}\n", j);
    for (int t = 0; t < 100; t++) {
        fprintf(j, "{\"tick\":%d,\"entities\":[", t);
        for (int id = 3; id >= 1; id--) { /* any order within a tick */
            double x = 100.0 * id + 0.25 * t, z = 6371000.0 + id;
            fprintf(c, "%d,%d,%d,0,%.17g,0,%.17g,15,0,0,1,0,0,0,0.75,%d\n", t, id, id % 2, x, z, id);
            fprintf(j, "%s{\"id\":%d,\"type\":%d,\"pos\":[%.17g,0,%.17g],\"vel\":[15,0,0],\"health\":0.75,"
                       "\"flags\":%d}",
                    id == 3 ? "" : ",", id, id % 2, x, z, id);
        }
        fputs("]}\n", j);
    }
    fclose(c);
    fclose(j);
    harness__stream sc = {0}, sj = {0};
    record_states(csv, &sc);
    record_states(jsl, &sj);
    assert_int_equal(sc.n, 100);
    assert_int_equal(sc.entity_ticks, 300);
    uint64_t first[1], first_raw;
    size_t nf;
    assert_int_equal(dg_harness__compare_streams(NULL, &sc, &sj, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw), 0);
    assert_int_equal(first_raw, DG_REPORT_TICK_NONE);
    dg_harness__stream_free(&sc);
    dg_harness__stream_free(&sj);
    remove(csv);
    remove(jsl);
}

static void assert_states_error(const char *suffix, const char *text, const char *where_has, const char *msg_has)
{
    char p[512];
    tmp_path(p, sizeof p, "bad", suffix);
    write_text(p, text);
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    /* the stream is read once: a bad line fails the open (the header, the prologue) or the read */
    if (dg_harness__source_states(&src, p, 0, &err) == DG_OK) {
        harness__frame f;
        int rc;
        while ((rc = src->next(src, &f, &err)) == 1) {
        }
        assert_int_equal(rc, -1);
        dg_harness__source_free(src);
    } else {
        assert_null(src);
    }
    if (!strstr(err.where, where_has) || !strstr(err.msg, msg_has))
        fail_msg("expected where~'%s' msg~'%s', got where='%s' msg='%s'", where_has, msg_has, err.where, err.msg);
    remove(p);
}

static void test_states_bad_input_located(void **state)
{
    (void)state;
    const char *hdr = "tick,id,px,py,pz\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%s0,1,0,0,0\n0,1,5,0,0\n", hdr);
    assert_states_error(".csv", buf, ":3:", "appears twice");
    snprintf(buf, sizeof buf, "%s1,1,0,0,0\n0,1,0,0,0\n", hdr);
    assert_states_error(".csv", buf, ":3:", "ticks must increase");
    snprintf(buf, sizeof buf, "%s0,1,zero,0,0\n", hdr);
    assert_states_error(".csv", buf, ":2:5", "expected a number");
    assert_states_error(".csv", "tick,id,px,py,pz,bogus\n", ":1:", "found \"bogus\"");
    assert_states_error(".csv", "tick,id,px,py\n0,1,0,0\n", ":1:", "required column \"pz\"");
    assert_states_error(".jsonl", "{\"tick\":0,\"entities\":[{\"id\":1,\"pos\":[1,2]}]}\n", ":1:", "array of 3");
    assert_states_error(".jsonl", "{\"tick\":0,\"entities\":[{\"id\":1,\"pos\":[1,2,3]}]}\n{\"tick\":\n", ":2:",
                        "invalid JSON");
    assert_states_error(".jsonl", "{\"tick\":0,\"events\":[{\"kind\":\"boom\"}]}\n", ":1:", "kind");
}

/* Hostile streams: byte-level mutations of a valid CSV and JSONL stream either open (and then record
 * or fail with an error) or fail with a located error; never a crash (ASan/UBSan builds check). */
static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void mutate_and_open(const char *seed_text, const char *suffix, uint64_t seed)
{
    static const char alphabet[] = "0123456789,.-+eE{}[]\":tickidposvelrothealthflags \n#\x00\xff";
    size_t n = strlen(seed_text);
    char *buf = malloc(n + 64);
    assert_non_null(buf);
    char path[512], rec[512];
    tmp_path(path, sizeof path, "fuzz", suffix);
    tmp_path(rec, sizeof rec, "fuzz", ".flrep");
    /* DG_FUZZ_ROUNDS raises the count for a longer local campaign; the suite runs 150 */
    int rounds = getenv("DG_FUZZ_ROUNDS") ? atoi(getenv("DG_FUZZ_ROUNDS")) : 150;
    for (int round = 0; round < rounds; round++) {
        memcpy(buf, seed_text, n);
        size_t len = n;
        int edits = 1 + (int)(mix(&seed) % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)(mix(&seed) % len);
            switch (mix(&seed) % 3) {
            case 0: buf[at] = alphabet[mix(&seed) % (sizeof alphabet - 1)]; break;
            case 1: len = at + 1; break; /* truncate */
            default:
                if (len + 1 < n + 64) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = alphabet[mix(&seed) % (sizeof alphabet - 1)];
                    len++;
                }
            }
        }
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(buf, 1, len, f);
        fclose(f);
        harness__source *src = NULL;
        dg_error err;
        dg_error_clear(&err);
        dg_status st = dg_harness__source_states(&src, path, 0, &err);
        if (st != DG_OK) {
            assert_null(src);
            assert_true(err.msg[0] != 0);
            continue;
        }
        harness__stream out = {0};
        if (dg_harness__record(src, rec, NULL, &out, &err) != DG_OK)
            assert_true(err.msg[0] != 0);
        dg_harness__stream_free(&out);
        dg_harness__source_free(src);
        remove(rec);
    }
    free(buf);
    remove(path);
}

static void test_states_hostile_input(void **state)
{
    (void)state;
    mutate_and_open("tick,id,type,faction,px,py,pz,vx,vy,vz,qw,qx,qy,qz,health,flags\n"
                    "0,1,0,0,1,2,3,0,0,0,1,0,0,0,1,0\n0,2,1,1,4,5,6,1,1,1,1,0,0,0,0.5,3\n"
                    "1,1,0,0,1.5,2,3,0,0,0,1,0,0,0,1,0\n",
                    ".csv", 0x1234);
    mutate_and_open("{\"detgate_states\":1,\"types\":[{\"index\":0,\"id\":\"a\"}]}\n"
                    "{\"tick\":0,\"entities\":[{\"id\":1,\"pos\":[1,2,3],\"rot\":[1,0,0,0]}],"
                    "\"events\":[{\"kind\":\"chat\",\"text\":\"hi\"}]}\n"
                    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1,2,4]}]}\n",
                    ".jsonl", 0x5678);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitflip_reported_at_tick_entity_field),
        cmocka_unit_test(test_fma_caught),
        cmocka_unit_test(test_libm_trig_caught),
        cmocka_unit_test(test_pointer_order_caught),
        cmocka_unit_test(test_clock_seed_caught),
        cmocka_unit_test(test_racy_threads_caught),
        cmocka_unit_test(test_verify_clean_run_passes),
        cmocka_unit_test(test_replay_fault_caught_at_its_tick),
        cmocka_unit_test(test_seek_fault_caught_by_seek_check_only),
        cmocka_unit_test(test_nondeterministic_source_flagged_in_diff),
        cmocka_unit_test(test_api_session_verifies_and_diffs),
        cmocka_unit_test(test_states_csv_and_jsonl_agree),
        cmocka_unit_test(test_states_bad_input_located),
        cmocka_unit_test(test_states_hostile_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
