/* tests/hash/test_hash_log.c — the text hash log: plain and zstd round trips, the exact canonical
 * text, strict parser errors (line:column, expected vs found), and the comparer's verdicts. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "detgate/hash.h"

/* ---- helpers --------------------------------------------------------------------------------------- */

/* dg_hash_log_reader_next as a status and an end flag, for the cases that compare error codes. */
static dg_status log_next(dg_hash_log_reader *r, dg_hash_log_tick *t, bool *eof, dg_error *err)
{
    dg_error own;
    dg_error_clear(&own);
    dg_error *e = err ? err : &own;
    int got = dg_hash_log_reader_next(r, t, e);
    *eof = got == 0;
    return got < 0 ? e->code : DG_OK;
}

static char g_dir[256];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/detgate-test-hash-log-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    const char *names[] = {"a.log", "b.log", "a.log.zst", "t.log.zst"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[320];
        snprintf(p, sizeof p, "%s/%s", g_dir, names[i]);
        unlink(p);
    }
    return rmdir(g_dir);
}

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", g_dir, name); }

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* A deterministic little run: ticks 0..n-1, entities 1..k (entity 7 missing after tick 2). */
#define RUN_TICKS 40
#define RUN_ENTS 24

typedef struct run {
    dg_hash_log_tick t[RUN_TICKS];
    uint32_t ids[RUN_TICKS][RUN_ENTS];
    uint64_t hs[RUN_TICKS][RUN_ENTS];
} run;

static void make_run(run *r, uint64_t perturb_tick, uint32_t perturb_id, bool raw_only)
{
    for (uint32_t t = 0; t < RUN_TICKS; t++) {
        dg_qentity e[RUN_ENTS];
        uint32_t n = 0;
        for (uint32_t id = 1; id <= RUN_ENTS; id++) {
            if (id == 7 && t > 2)
                continue;
            dg_qentity q = {.id = id, .type_index = (uint16_t)(id % 3), .pos = {(int32_t)(id * 100 + t), -(int32_t)t, 5},
                            .vel = {1, 2, 3}, .rot = {0, 0, 0}, .rot_largest = 0, .health = 10000};
            if (!raw_only && t >= perturb_tick && id == perturb_id)
                q.pos[1] += 1;
            e[n++] = q;
        }
        dg_tick_hash th = dg_hash_tick(t, e, n, NULL, 0, r->hs[t]);
        for (uint32_t i = 0; i < n; i++)
            r->ids[t][i] = e[i].id;
        r->t[t] = (dg_hash_log_tick){.tick = t, .entity_count = n, .state = th.state, .events = th.events,
                                     .raw = 0x1000 + t + (raw_only && t >= perturb_tick ? 0x100000 : 0),
                                     .has_raw = true, .ids = r->ids[t], .hashes = r->hs[t]};
    }
}

static void write_run(const char *path, const run *r, bool entities, bool raw)
{
    dg_hash_log_header h = {.scenario = "stress-1000", .format = "flrep", .entities = entities, .raw = raw};
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_open(&w, path, &h, &err), DG_OK);
    for (int i = 0; i < RUN_TICKS; i++) {
        dg_hash_log_tick t = r->t[i];
        t.has_raw = raw;
        if (dg_hash_log_writer_write(w, &t, &err) != DG_OK)
            fail_msg("write tick %d: %s", i, err.msg);
    }
    assert_int_equal(dg_hash_log_writer_close(w, &err), DG_OK);
}

static void expect_reads_back(dg_hash_log_reader *rd, const run *r, bool entities, bool raw)
{
    const dg_hash_log_header *h = dg_hash_log_reader_header(rd);
    assert_string_equal(h->scenario, "stress-1000");
    assert_string_equal(h->format, "flrep");
    assert_int_equal(h->entities, entities);
    assert_int_equal(h->raw, raw);
    dg_error err;
    dg_error_clear(&err);
    for (int i = 0; i < RUN_TICKS; i++) {
        dg_hash_log_tick t;
        bool eof = true;
        if (log_next(rd, &t, &eof, &err) != DG_OK)
            fail_msg("tick %d: %s: %s", i, err.where, err.msg);
        assert_false(eof);
        assert_true(t.tick == r->t[i].tick);
        assert_int_equal(t.entity_count, r->t[i].entity_count);
        assert_true(t.state == r->t[i].state && t.events == r->t[i].events);
        assert_int_equal(t.has_raw, raw);
        if (raw)
            assert_true(t.raw == r->t[i].raw);
        if (entities) {
            assert_memory_equal(t.ids, r->t[i].ids, t.entity_count * sizeof *t.ids);
            assert_memory_equal(t.hashes, r->t[i].hashes, t.entity_count * sizeof *t.hashes);
        }
    }
    dg_hash_log_tick t;
    bool eof = false;
    assert_int_equal(log_next(rd, &t, &eof, &err), DG_OK);
    assert_true(eof);
}

/* ---- round trips ------------------------------------------------------------------------------------ */
static void test_round_trip_plain(void **state)
{
    (void)state;
    static run r;
    make_run(&r, 1000, 0, false);
    char p[320];
    path_of(p, sizeof p, "a.log");
    for (int mode = 0; mode < 4; mode++) {
        bool ent = mode & 1, raw = mode & 2;
        write_run(p, &r, ent, raw);
        dg_hash_log_reader *rd = NULL;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_hash_log_reader_open(&rd, p, &err), DG_OK);
        expect_reads_back(rd, &r, ent, raw);
        dg_hash_log_reader_close(rd);
    }
}

static void test_body_lines_are_in_c_sort_order(void **state)
{
    (void)state;
    /* docs/STATE-HASH.md §7 promises that the lines between header and trailer are already sorted
     * bytewise (so `comm`/`join` work): tick lines before their entity lines, ids in order. */
    static run r;
    make_run(&r, 1000, 0, false);
    char p[320];
    path_of(p, sizeof p, "a.log");
    write_run(p, &r, true, true);
    size_t len = 0;
    uint8_t *buf = slurp(p, &len);
    char *text = (char *)buf;
    text[len - 1] = '\0';
    char *prev = NULL;
    size_t lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        if (prev && strcmp(prev, line) >= 0)
            fail_msg("not sorted: \"%s\" then \"%s\"", prev, line);
        prev = line;
        lines++;
    }
    assert_true(lines > RUN_TICKS * 20);
    free(buf);
}

static void test_canonical_text(void **state)
{
    (void)state;
    /* The exact bytes of a tiny log, spelled out as docs/STATE-HASH.md §7 describes them. */
    uint32_t ids[2] = {7, 4000000000u};
    uint64_t hs[2] = {UINT64_C(0x00000000000000ff), UINT64_C(0xfedcba9876543210)};
    dg_hash_log_tick t = {.tick = 4312, .entity_count = 2, .state = UINT64_C(0x0123456789abcdef),
                          .events = 1, .raw = 0, .has_raw = false, .ids = ids, .hashes = hs};
    char p[320];
    path_of(p, sizeof p, "a.log");
    dg_hash_log_header h = {.scenario = "duel", .format = "rply", .entities = true, .raw = false};
    dg_hash_log_writer *w = NULL;
    assert_int_equal(dg_hash_log_writer_open(&w, p, &h, NULL), DG_OK);
    assert_int_equal(dg_hash_log_writer_write(w, &t, NULL), DG_OK);
    t.tick = 12345678901ull;
    t.entity_count = 0;
    assert_int_equal(dg_hash_log_writer_write(w, &t, NULL), DG_OK);
    assert_int_equal(dg_hash_log_writer_close(w, NULL), DG_OK);
    size_t len = 0;
    uint8_t *got = slurp(p, &len);
    const char *want = "# detgate-hashlog 1 scenario=duel format=rply entities=1 raw=0\n"
                       "0000004312 T 2 0123456789abcdef 0000000000000001 -\n"
                       "0000004312 e 0000000007 00000000000000ff\n"
                       "0000004312 e 4000000000 fedcba9876543210\n"
                       "12345678901 T 0 0123456789abcdef 0000000000000001 -\n"
                       "# end ticks=2\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(got, want, len);
    free(got);
}

static void test_round_trip_zstd(void **state)
{
    (void)state;
    static run r;
    make_run(&r, 1000, 0, false);
    char pz[320], pp[320];
    path_of(pz, sizeof pz, "a.log.zst");
    path_of(pp, sizeof pp, "a.log");
    write_run(pz, &r, true, true);
    write_run(pp, &r, true, true);
    size_t zlen = 0, plen = 0;
    uint8_t *z = slurp(pz, &zlen);
    uint8_t *plain = slurp(pp, &plen);
    /* It really is zstd (magic), smaller, and decodes to exactly the plain log's bytes. */
    assert_true(zlen >= 4 && z[0] == 0x28 && z[1] == 0xB5 && z[2] == 0x2F && z[3] == 0xFD);
    assert_true(zlen < plen);
    uint8_t *dec = malloc(plen + 16);
    size_t dlen = ZSTD_decompress(dec, plen + 16, z, zlen);
    assert_false(ZSTD_isError(dlen));
    assert_int_equal(dlen, plen);
    assert_memory_equal(dec, plain, plen);

    /* Read back from file (sniffed, not by name) and from memory. */
    dg_hash_log_reader *rd = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_reader_open(&rd, pz, &err), DG_OK);
    expect_reads_back(rd, &r, true, true);
    dg_hash_log_reader_close(rd);
    assert_int_equal(dg_hash_log_reader_open_mem(&rd, z, zlen, "mem.zst", &err), DG_OK);
    expect_reads_back(rd, &r, true, true);
    dg_hash_log_reader_close(rd);
    FILE *fp = fopen(pz, "rb"); /* from a stream the reader does not own (stdin-like) */
    assert_non_null(fp);
    assert_int_equal(dg_hash_log_reader_open_fp(&rd, fp, "-", &err), DG_OK);
    expect_reads_back(rd, &r, true, true);
    dg_hash_log_reader_close(rd);
    assert_int_equal(fgetc(fp), EOF); /* still open: the reader consumed it but did not close it */
    fclose(fp);

    /* Truncated compressed stream: an error, not a silent short log. */
    size_t ticks_read = 0;
    dg_status st = dg_hash_log_reader_open_mem(&rd, z, zlen - 9, "cut.zst", &err);
    if (st == DG_OK) {
        bool eof = false;
        dg_hash_log_tick t;
        while ((st = log_next(rd, &t, &eof, &err)) == DG_OK && !eof)
            ticks_read++;
        dg_hash_log_reader_close(rd);
    }
    assert_int_not_equal(st, DG_OK);
    assert_true(st == DG_E_TRUNCATED || st == DG_E_COMPRESS);
    free(z);
    free(plain);
    free(dec);
}

/* ---- strict parser ------------------------------------------------------------------------------------ */
#define HDR "# detgate-hashlog 1 scenario=s format=f entities=1 raw=0\n"
#define T1 "0000000001 T 1 0123456789abcdef 0000000000000001 -\n"
#define E1 "0000000001 e 0000000005 00000000000000aa\n"
#define END1 "# end ticks=1\n"

typedef struct bad_case {
    const char *text;
    dg_status code;
    const char *where; /* "name:line:col" */
    const char *msg;   /* substring of the message */
} bad_case;

static const bad_case k_bad[] = {
    {"", DG_E_MAGIC, "bad", "found end of input (empty log)"},
    {"detgate-hashlog 1\n", DG_E_MAGIC, "bad:1:1", "expected \"# detgate-hashlog \" (not a detgate hash log), found \"detgate-hashlog\""},
    {"# detgate-hashlog 4 scenario=s format=f entities=1 raw=0\n", DG_E_VERSION, "bad:1:19", "expected format version 1, 2 or 3, found \"4\""},
    {"# detgate-hashlog 2 scenario=s format=f entities=1 raw=0\n", DG_E_SYNTAX, "bad:1:56", "expected entities=1 raw=1 (versions 2 and 3"},
    {"# detgate-hashlog 1 scenario= format=f entities=1 raw=0\n", DG_E_SYNTAX, "bad:1:30", "a name of 1..64"},
    {"# detgate-hashlog 1 scenario=s format=f entities=2 raw=0\n", DG_E_SYNTAX, "bad:1:50", "expected 0 or 1, found \"2\""},
    {"# detgate-hashlog 1 scenario=s format=f entities=1 raw=0 x\n", DG_E_SYNTAX, "bad:1:57", "expected end of line"},
    {HDR "0000000001 T 1 0123456789ABCDEF 0000000000000001 -\n" E1 END1, DG_E_SYNTAX, "bad:2:16", "16 lowercase hex digits (state hash), found \"0123456789ABCDEF\""},
    {HDR "1 T 1 0123456789abcdef 0000000000000001 -\n" E1 END1, DG_E_SYNTAX, "bad:2:1", "a tick of at least 10 digits"},
    {HDR "00000000001 T 1 0123456789abcdef 0000000000000001 -\n" E1 END1, DG_E_SYNTAX, "bad:2:1", "a tick of at least 10 digits"},
    {HDR "0000000001 T 01 0123456789abcdef 0000000000000001 -\n" E1 END1, DG_E_SYNTAX, "bad:2:14", "an entity count"},
    {HDR "0000000001 T 1 0123456789abcdef 0000000000000001 0000000000000002\n" E1 END1, DG_E_SYNTAX, "bad:2:50", "'-' (no raw hash"},
    {HDR "0000000001 X 1 0123456789abcdef 0000000000000001 -\n" E1 END1, DG_E_SYNTAX, "bad:2:11", "\" T \""},
    {HDR T1 "0000000002 e 0000000005 00000000000000aa\n" END1, DG_E_SYNTAX, "bad:3:1", "expected tick 0000000001"},
    {HDR T1 "0000000001 e 0000000000 00000000000000aa\n" END1, DG_E_SYNTAX, "bad:3:14", "an entity id > 0"},
    {HDR T1 "0000000001 e 5 00000000000000aa\n" END1, DG_E_SYNTAX, "bad:3:14", "an entity id of 10 digits"},
    {HDR T1 E1, DG_E_TRUNCATED, "bad:4:1", "input ended"},
    {HDR T1, DG_E_TRUNCATED, "bad:3:1", "an entity line (input ended)"},
    {HDR T1 E1 "# end ticks=2\n", DG_E_SYNTAX, "bad:4:13", "expected ticks=1"},
    {HDR T1 E1 "# end ticks=1", DG_E_SYNTAX, "bad:4:14", "expected '\\n'"},
    {HDR T1 E1 END1 "junk\n", DG_E_SYNTAX, "bad:5:1", "end of input after the trailer"},
    {HDR T1 E1 "0000000001 T 0 0123456789abcdef 0000000000000001 -\n" END1, DG_E_SYNTAX, "bad:4:1", "a tick > 1"},
    {HDR T1 E1 "# comment\n", DG_E_SYNTAX, "bad:4:1", "the trailer"},
    {HDR "0000000001 T 1 0123456789abcdef 0000000000000001 -\r\n" E1 END1, DG_E_SYNTAX, "bad:2:51", "found \"\\x0d\""},
    {HDR T1 E1 "0000000002 T 0 0123456789abcdef 0000000000000001 -                                                                                                                                                                                                                                                \n" END1, DG_E_SYNTAX, "bad:4:257", "at most 256 bytes"},
    {HDR "0000000001 T 4294967296 0123456789abcdef 0000000000000001 -\n", DG_E_SYNTAX, "bad:2:14", "an entity count"},
};

static void test_parser_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
        const bad_case *bc = &k_bad[i];
        dg_error err;
        dg_error_clear(&err);
        dg_hash_log_reader *rd = NULL;
        dg_status st = dg_hash_log_reader_open_mem(&rd, bc->text, strlen(bc->text), "bad", &err);
        bool eof = false;
        dg_hash_log_tick t;
        while (st == DG_OK && !eof)
            st = log_next(rd, &t, &eof, &err);
        dg_hash_log_reader_close(rd);
        if (st != bc->code || strcmp(err.where, bc->where) != 0 || !strstr(err.msg, bc->msg)) {
            print_error("case %zu: got %d at %s: %s; want %d at %s containing %s\n", i, st, err.where,
                        err.msg, bc->code, bc->where, bc->msg);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    /* Sanity: the good pieces parse. */
    const char *good = HDR T1 E1 END1;
    dg_hash_log_reader *rd = NULL;
    assert_int_equal(dg_hash_log_reader_open_mem(&rd, good, strlen(good), "good", NULL), DG_OK);
    dg_hash_log_tick t;
    bool eof = false;
    assert_int_equal(log_next(rd, &t, &eof, NULL), DG_OK);
    assert_false(eof);
    assert_int_equal(t.ids[0], 5);
    assert_true(t.hashes[0] == 0xaa);
    assert_int_equal(log_next(rd, &t, &eof, NULL), DG_OK);
    assert_true(eof);
    dg_hash_log_reader_close(rd);
}

static void test_error_offset_is_byte_of_the_column(void **state)
{
    (void)state;
    const char *text = HDR "0000000001 T 1 0123456789abcdef 000000000000000g -\n";
    dg_error err;
    dg_error_clear(&err);
    dg_hash_log_reader *rd = NULL;
    assert_int_equal(dg_hash_log_reader_open_mem(&rd, text, strlen(text), "x", &err), DG_OK);
    dg_hash_log_tick t;
    bool eof;
    assert_int_equal(log_next(rd, &t, &eof, &err), DG_E_SYNTAX);
    assert_string_equal(err.where, "x:2:33");
    assert_true(err.offset == strlen(HDR) + 32);
    /* The reader stays failed. */
    assert_int_equal(log_next(rd, &t, &eof, NULL), DG_E_STATE);
    dg_hash_log_reader_close(rd);
}

static void test_writer_rejects_bad_input(void **state)
{
    (void)state;
    char p[320];
    path_of(p, sizeof p, "b.log");
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_hash_log_header bad = {.scenario = "has space", .format = "f"};
    assert_int_equal(dg_hash_log_writer_open(&w, p, &bad, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "scenario"));
    dg_hash_log_header h = {.scenario = "s", .format = "f", .entities = true, .raw = false};
    assert_int_equal(dg_hash_log_writer_open(&w, p, &h, NULL), DG_OK);
    uint32_t ids[2] = {5, 5};
    uint64_t hs[2] = {1, 2};
    dg_hash_log_tick t = {.tick = 3, .entity_count = 2, .ids = ids, .hashes = hs};
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_write(w, &t, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "expected id > 5"));
    ids[1] = 6;
    assert_int_equal(dg_hash_log_writer_write(w, &t, NULL), DG_OK);
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_write(w, &t, &err), DG_E_USAGE); /* same tick again */
    assert_non_null(strstr(err.msg, "expected a tick > 3"));
    t.tick = 4;
    t.has_raw = true;
    assert_int_equal(dg_hash_log_writer_write(w, &t, NULL), DG_E_USAGE); /* header says raw=0 */
    assert_int_equal(dg_hash_log_writer_close(w, NULL), DG_OK);
    /* What was accepted is a valid one-tick log. */
    dg_hash_log_reader *rd = NULL;
    assert_int_equal(dg_hash_log_reader_open(&rd, p, NULL), DG_OK);
    bool eof = false;
    assert_int_equal(log_next(rd, &t, &eof, NULL), DG_OK);
    assert_true(!eof && t.tick == 3);
    assert_int_equal(log_next(rd, &t, &eof, NULL), DG_OK);
    assert_true(eof);
    dg_hash_log_reader_close(rd);
}

/* ---- comparer -------------------------------------------------------------------------------------- */
static dg_hash_log_cmp compare_runs(const run *a, const run *b, bool zstd_b)
{
    char pa[320], pb[320];
    path_of(pa, sizeof pa, "a.log");
    path_of(pb, sizeof pb, zstd_b ? "t.log.zst" : "b.log");
    write_run(pa, a, true, true);
    write_run(pb, b, true, true);
    dg_hash_log_reader *ra = NULL, *rb = NULL;
    assert_int_equal(dg_hash_log_reader_open(&ra, pa, NULL), DG_OK);
    assert_int_equal(dg_hash_log_reader_open(&rb, pb, NULL), DG_OK);
    dg_hash_log_cmp cmp;
    dg_error err;
    dg_error_clear(&err);
    if (dg_hash_log_compare(ra, rb, &cmp, &err) != DG_OK)
        fail_msg("compare: %s", err.msg);
    dg_hash_log_reader_close(ra);
    dg_hash_log_reader_close(rb);
    return cmp;
}

static void test_compare_same_subquantum_diverged(void **state)
{
    (void)state;
    static run a, b;
    make_run(&a, 1000, 0, false);
    make_run(&b, 1000, 0, false);
    dg_hash_log_cmp c = compare_runs(&a, &b, true); /* plain vs zstd: same content */
    assert_int_equal(c.verdict, DG_HASH_SAME);
    assert_true(c.ticks_a == RUN_TICKS && c.ticks_b == RUN_TICKS && c.ticks_differing == 0);

    make_run(&b, 12, 0, true); /* raw hashes differ from tick 12, quantized state never */
    c = compare_runs(&a, &b, false);
    assert_int_equal(c.verdict, DG_HASH_SUBQUANTUM);
    assert_true(c.first_subquantum_tick == 12);
    assert_true(c.ticks_subquantum == RUN_TICKS - 12);
    char line[256];
    dg_hash_log_cmp_summary(&c, line, sizeof line);
    assert_string_equal(line, "sub-quantum: quantized state and events equal on all 40 ticks; "
                              "raw floats differ below a quantum from tick 12 (28 ticks)");

    make_run(&b, 20, 19, false); /* entity 19 moves one quantum from tick 20 */
    c = compare_runs(&a, &b, false);
    assert_int_equal(c.verdict, DG_HASH_DIVERGED);
    assert_true(c.first_tick == 20);
    assert_true(c.first_state && !c.first_events && !c.first_count);
    assert_true(c.ticks_differing == RUN_TICKS - 20);
    assert_true(c.entities_known);
    assert_int_equal(c.n_ids, 1);
    assert_int_equal(c.ids[0], 19);
    assert_int_equal(c.id_kinds[0], DG_HASH_DIFF_CHANGED);
    assert_int_equal(c.entity_counts.changed, 1);
    assert_int_equal(c.entity_counts.same, RUN_ENTS - 2); /* entity 7 is gone by tick 20 */
    dg_hash_log_cmp_summary(&c, line, sizeof line);
    assert_string_equal(line, "diverged at tick 20 (state differs): entities changed 19; 20 of 40 ticks differ");
    dg_hash_log_cmp_summary(&c, line, 12);
    assert_string_equal(line, "diverged at");
}

static void test_compare_missing_tick_and_entity(void **state)
{
    (void)state;
    static run a, b;
    make_run(&a, 1000, 0, false);
    make_run(&b, 1000, 0, false);
    /* b: tick 30 removed (shift later ticks down), and at tick 5 entity 3 replaced by entity 25. */
    memmove(&b.t[30], &b.t[31], sizeof b.t[0] * (RUN_TICKS - 31));
    b.t[RUN_TICKS - 1] = b.t[RUN_TICKS - 2];
    b.t[RUN_TICKS - 1].tick = 40; /* one extra tick at the end */
    for (int i = 30; i < RUN_TICKS - 1; i++) {
        b.t[i].ids = b.ids[i + 1];
        b.t[i].hashes = b.hs[i + 1];
    }
    uint32_t *ids5 = b.ids[5];
    uint64_t *hs5 = b.hs[5];
    memmove(&ids5[2], &ids5[3], sizeof *ids5 * (b.t[5].entity_count - 3));
    memmove(&hs5[2], &hs5[3], sizeof *hs5 * (b.t[5].entity_count - 3));
    ids5[b.t[5].entity_count - 1] = 25;
    hs5[b.t[5].entity_count - 1] = 0x25;
    b.t[5].state ^= 1;
    dg_hash_log_cmp c = compare_runs(&a, &b, false);
    assert_int_equal(c.verdict, DG_HASH_DIVERGED);
    assert_true(c.first_tick == 5);
    assert_int_equal(c.n_ids, 2);
    assert_int_equal(c.ids[0], 3);
    assert_int_equal(c.id_kinds[0], DG_HASH_DIFF_LOST);
    assert_int_equal(c.ids[1], 25);
    assert_int_equal(c.id_kinds[1], DG_HASH_DIFF_ADDED);
    /* Tick 5 differs, tick 30 is missing from b, tick 40 is missing from a. */
    assert_true(c.ticks_differing == 3);
    assert_true(c.ticks_a == RUN_TICKS && c.ticks_b == RUN_TICKS);
    char line[256];
    dg_hash_log_cmp_summary(&c, line, sizeof line);
    assert_string_equal(line, "diverged at tick 5 (state differs): added 25; lost 3; "
                              "3 of 40 ticks differ");
}

static void test_compare_first_is_missing_tick(void **state)
{
    (void)state;
    static run a, b;
    make_run(&a, 1000, 0, false);
    make_run(&b, 1000, 0, false);
    b.t[0].tick = 0;
    memmove(&b.t[3], &b.t[4], sizeof b.t[0] * (RUN_TICKS - 4)); /* b lacks tick 3 */
    b.t[RUN_TICKS - 1].tick = 100;
    for (int i = 3; i < RUN_TICKS - 1; i++) {
        b.t[i].ids = b.ids[i + 1];
        b.t[i].hashes = b.hs[i + 1];
    }
    dg_hash_log_cmp c = compare_runs(&a, &b, false);
    assert_int_equal(c.verdict, DG_HASH_DIVERGED);
    assert_true(c.first_tick == 3);
    assert_true(c.first_missing_b && !c.first_missing_a);
}


/* ---- hostile input ----------------------------------------------------------------------------------- */
static dg_status parse_all(const void *buf, size_t len, uint64_t *ticks)
{
    dg_hash_log_reader *rd = NULL;
    dg_error err;
    dg_error_clear(&err);
    *ticks = 0;
    dg_status st = dg_hash_log_reader_open_mem(&rd, buf, len, "m", &err);
    bool eof = false;
    dg_hash_log_tick t;
    while (st == DG_OK && !eof) {
        st = log_next(rd, &t, &eof, &err);
        if (st == DG_OK && !eof) {
            (*ticks)++;
            for (uint32_t i = 0; i < t.entity_count; i++) /* touch what the reader hands out */
                assert_true(t.ids[i] != 0);
        }
    }
    dg_hash_log_reader_close(rd);
    if (st != DG_OK)
        assert_int_equal(err.code, st); /* every failure explains itself */
    return st;
}

static void test_mutated_logs_fail_cleanly(void **state)
{
    (void)state;
    static run r;
    make_run(&r, 1000, 0, false);
    char pp[320], pz[320];
    path_of(pp, sizeof pp, "a.log");
    path_of(pz, sizeof pz, "a.log.zst");
    write_run(pp, &r, true, true);
    write_run(pz, &r, true, true);
    size_t plen = 0, zlen = 0;
    uint8_t *plain = slurp(pp, &plen);
    uint8_t *z = slurp(pz, &zlen);
    uint64_t ticks = 0;
    assert_int_equal(parse_all(plain, plen, &ticks), DG_OK);
    assert_true(ticks == RUN_TICKS);
    /* Every truncation of the plain log is an error (the trailer is required). */
    for (size_t cut = 0; cut < plen; cut += plen / 251 + 1)
        assert_int_not_equal(parse_all(plain, cut, &ticks), DG_OK);
    /* Byte flips: must not crash or leak (ASan); most are errors. A flip inside a hash's hex digits
     * to another hex digit is a valid log with a different hash, which is fine. */
    uint64_t s = 12345;
    size_t errors = 0, trials = 0;
    for (int i = 0; i < 600; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        size_t pos = (size_t)(s >> 33) % plen;
        uint8_t old = plain[pos];
        plain[pos] = (uint8_t)(s >> 17);
        if (plain[pos] != old) {
            trials++;
            errors += parse_all(plain, plen, &ticks) != DG_OK;
        }
        plain[pos] = old;
    }
    assert_true(errors > trials / 2);
    /* Flips and cuts in the compressed form: the zstd checksum or the parser catches them. */
    for (size_t pos = 0; pos < zlen; pos += zlen / 199 + 1) {
        uint8_t old = z[pos];
        z[pos] ^= 0x5a;
        (void)parse_all(z, zlen, &ticks);
        z[pos] = old;
        assert_int_not_equal(parse_all(z, pos, &ticks), DG_OK);
    }
    free(plain);
    free(z);
}

static uint8_t *compress_with(const char *text, size_t len, int window_log, size_t *zlen)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    assert_non_null(cc);
    size_t cap = ZSTD_compressBound(len) + 64;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, window_log);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0); /* so the header declares the window */
    ZSTD_outBuffer o = {out, cap, 0};
    ZSTD_inBuffer in = {text, len, 0};
    /* continue first, then end: zstd cannot see the whole input, keeps the window it was given */
    assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_continue)));
    size_t rem = ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end);
    assert_false(ZSTD_isError(rem));
    assert_int_equal(rem, 0);
    ZSTD_freeCCtx(cc);
    *zlen = o.pos;
    return out;
}

static void test_zstd_window_cap_and_multiple_frames(void **state)
{
    (void)state;
    const char *text = HDR T1 E1 END1;
    size_t n = strlen(text), zlen = 0;
    uint64_t ticks = 0;
    /* A frame demanding a 32 MiB window is refused before any such allocation. */
    uint8_t *big = compress_with(text, n, 25, &zlen);
    dg_error err;
    dg_error_clear(&err);
    dg_hash_log_reader *rd = NULL;
    dg_status st = dg_hash_log_reader_open_mem(&rd, big, zlen, "big.zst", &err);
    assert_int_equal(st, DG_E_COMPRESS);
    assert_non_null(strstr(err.msg, "zstd"));
    free(big);
    /* The same text split over two frames (as a concatenation of .zst files) reads as one log. */
    size_t half = strlen(HDR) + 5, z1 = 0, z2 = 0;
    uint8_t *f1 = compress_with(text, half, 20, &z1);
    uint8_t *f2 = compress_with(text + half, n - half, 20, &z2);
    uint8_t *both = malloc(z1 + z2);
    memcpy(both, f1, z1);
    memcpy(both + z1, f2, z2);
    assert_int_equal(parse_all(both, z1 + z2, &ticks), DG_OK);
    assert_true(ticks == 1);
    /* ... and the first frame alone is a truncated log. */
    assert_int_not_equal(parse_all(f1, z1, &ticks), DG_OK);
    free(f1);
    free(f2);
    free(both);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_plain),
        cmocka_unit_test(test_canonical_text),
        cmocka_unit_test(test_body_lines_are_in_c_sort_order),
        cmocka_unit_test(test_round_trip_zstd),
        cmocka_unit_test(test_parser_errors),
        cmocka_unit_test(test_error_offset_is_byte_of_the_column),
        cmocka_unit_test(test_writer_rejects_bad_input),
        cmocka_unit_test(test_compare_same_subquantum_diverged),
        cmocka_unit_test(test_compare_missing_tick_and_entity),
        cmocka_unit_test(test_compare_first_is_missing_tick),
        cmocka_unit_test(test_mutated_logs_fail_cleanly),
        cmocka_unit_test(test_zstd_window_cap_and_multiple_frames),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
