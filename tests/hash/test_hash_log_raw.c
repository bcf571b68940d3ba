/* tests/hash/test_hash_log_raw.c — hash log version 2 (docs/STATE-HASH.md §7): entity lines that
 * also carry each entity's raw hash. Written only when asked (entity_raw), read back exactly; a log
 * without it stays version 1 byte for byte; the reader takes both; the writer refuses what cannot be
 * written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "detgate/hash.h"

static const uint32_t ids[2] = {7, 19};
static const uint64_t hashes[2] = {UINT64_C(0x79c26c03092613c6), UINT64_C(0x35e76dfa73a344b4)};
static const uint64_t raws[2] = {UINT64_C(0x00000000000000a1), UINT64_C(0xfedcba9876543210)};

/* Writes one tick (4312, two entities) to a temporary file; returns its text (caller frees). */
static char *write_log(bool entity_raw, const uint64_t *raw_hashes, dg_status *st_out)
{
    char path[] = "/tmp/dg-hashlog-raw-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dg_hash_log_header h = {.scenario = "duel", .format = "flrep", .entities = true, .raw = true,
                            .entity_raw = entity_raw};
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_open(&w, path, &h, &err), DG_OK);
    dg_hash_log_tick t = {.tick = 4312, .entity_count = 2, .state = 1, .events = 2, .raw = 3, .has_raw = true,
                          .ids = ids, .hashes = hashes, .raw_hashes = raw_hashes};
    *st_out = dg_hash_log_writer_write(w, &t, &err);
    dg_hash_log_writer_close(w, NULL);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 4096);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 4095, f);
    buf[n] = '\0';
    fclose(f);
    remove(path);
    return buf;
}

static void test_version_2_writes_and_reads_entity_raw_hashes(void **state)
{
    (void)state;
    dg_status st;
    char *text = write_log(true, raws, &st);
    assert_int_equal(st, DG_OK);
    assert_string_equal(text, "# detgate-hashlog 2 scenario=duel format=flrep entities=1 raw=1\n"
                              "0000004312 T 2 0000000000000001 0000000000000002 0000000000000003\n"
                              "0000004312 e 0000000007 79c26c03092613c6 00000000000000a1\n"
                              "0000004312 e 0000000019 35e76dfa73a344b4 fedcba9876543210\n"
                              "# end ticks=1\n");
    dg_hash_log_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_reader_open_mem(&r, text, strlen(text), "v2", &err), DG_OK);
    assert_true(dg_hash_log_reader_header(r)->entity_raw);
    dg_hash_log_tick t;
    assert_int_equal(dg_hash_log_reader_next(r, &t, &err), 1);
    assert_int_equal(t.entity_count, 2);
    assert_non_null(t.raw_hashes);
    assert_true(t.raw_hashes[0] == raws[0] && t.raw_hashes[1] == raws[1]);
    assert_true(t.hashes[0] == hashes[0] && t.hashes[1] == hashes[1]);
    assert_int_equal(dg_hash_log_reader_next(r, &t, &err), 0);
    dg_hash_log_reader_close(r);
    free(text);
}

static void test_without_entity_raw_the_log_stays_version_1(void **state)
{
    (void)state;
    dg_status st;
    char *text = write_log(false, raws, &st); /* raw_hashes given but not asked for: not written */
    assert_int_equal(st, DG_OK);
    assert_string_equal(text, "# detgate-hashlog 1 scenario=duel format=flrep entities=1 raw=1\n"
                              "0000004312 T 2 0000000000000001 0000000000000002 0000000000000003\n"
                              "0000004312 e 0000000007 79c26c03092613c6\n"
                              "0000004312 e 0000000019 35e76dfa73a344b4\n"
                              "# end ticks=1\n");
    dg_hash_log_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_reader_open_mem(&r, text, strlen(text), "v1", &err), DG_OK);
    assert_false(dg_hash_log_reader_header(r)->entity_raw);
    dg_hash_log_tick t;
    assert_int_equal(dg_hash_log_reader_next(r, &t, &err), 1);
    assert_null(t.raw_hashes);
    dg_hash_log_reader_close(r);
    free(text);
}

static void test_writer_and_reader_refuse_what_version_2_cannot_be(void **state)
{
    (void)state;
    dg_status st;
    char *text = write_log(true, NULL, &st);
    assert_int_equal(st, DG_E_USAGE); /* asked for entity raw hashes, none given */
    free(text);
    dg_hash_log_header h = {.scenario = "duel", .format = "flrep", .entities = true, .raw = false, .entity_raw = true};
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_open(&w, "/tmp/dg-never-written.log", &h, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "entity_raw needs entities and raw"));
    assert_null(w);
    /* a version 2 entity line without its raw hash: the column that is missing is named */
    static const char bad[] = "# detgate-hashlog 2 scenario=duel format=flrep entities=1 raw=1\n"
                              "0000004312 T 1 0000000000000001 0000000000000002 0000000000000003\n"
                              "0000004312 e 0000000007 79c26c03092613c6\n"
                              "# end ticks=1\n";
    dg_hash_log_reader *r = NULL;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_reader_open_mem(&r, bad, strlen(bad), "bad", &err), DG_OK);
    dg_hash_log_tick t;
    assert_int_equal(dg_hash_log_reader_next(r, &t, &err), -1);
    if (strcmp(err.where, "bad:3:41") != 0)
        fail_msg("where \"%s\": %s", err.where, err.msg);
    assert_non_null(strstr(err.msg, "version 2: the entity's raw hash follows"));
    dg_hash_log_reader_close(r);
}

/* Version 3: the raw values' bit patterns after the entity raw hash, named by the header's values=;
 * the bits spelled as 16 hex digits are the doubles' IEEE-754 patterns (derived here by memcpy). */
static void test_version_3_carries_the_raw_values(void **state)
{
    (void)state;
    const double v[4] = {1.0, -0.0, 0.1, 2.5}; /* entity 7: x, y; entity 19: x, y */
    uint64_t bits[4];
    memcpy(bits, v, sizeof bits);
    char path[] = "/tmp/dg-hashlog-v3-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dg_hash_log_header h = {.scenario = "duel", .format = "flrep", .entities = true, .raw = true, .entity_raw = true,
                            .n_values = 2, .values = "pos.x,pos.y"};
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_open(&w, path, &h, &err), DG_OK);
    dg_hash_log_tick t = {.tick = 4312, .entity_count = 2, .state = 1, .events = 2, .raw = 3, .has_raw = true,
                          .ids = ids, .hashes = hashes, .raw_hashes = raws, .raw_bits = bits};
    assert_int_equal(dg_hash_log_writer_write(w, &t, &err), DG_OK);
    assert_int_equal(dg_hash_log_writer_close(w, &err), DG_OK);
    char want[1024], hx[4][17];
    for (int i = 0; i < 4; i++)
        dg_hash_hex(bits[i], hx[i]);
    snprintf(want, sizeof want,
             "# detgate-hashlog 3 scenario=duel format=flrep entities=1 raw=1 values=pos.x,pos.y\n"
             "0000004312 T 2 0000000000000001 0000000000000002 0000000000000003\n"
             "0000004312 e 0000000007 79c26c03092613c6 00000000000000a1 %s %s\n"
             "0000004312 e 0000000019 35e76dfa73a344b4 fedcba9876543210 %s %s\n"
             "# end ticks=1\n", hx[0], hx[1], hx[2], hx[3]);
    assert_string_equal(hx[0], "3ff0000000000000"); /* 1.0, as IEEE-754 says */
    assert_string_equal(hx[1], "8000000000000000"); /* -0.0 keeps its sign */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char text[1024] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    remove(path);
    assert_string_equal(text, want);
    dg_hash_log_reader *r = NULL;
    assert_int_equal(dg_hash_log_reader_open_mem(&r, text, strlen(text), "v3", &err), DG_OK);
    assert_int_equal(dg_hash_log_reader_header(r)->n_values, 2);
    assert_string_equal(dg_hash_log_reader_header(r)->values, "pos.x,pos.y");
    dg_hash_log_tick rt;
    assert_int_equal(dg_hash_log_reader_next(r, &rt, &err), 1);
    assert_non_null(rt.raw_bits);
    assert_memory_equal(rt.raw_bits, bits, sizeof bits);
    assert_true(rt.raw_hashes[1] == raws[1]);
    dg_hash_log_reader_close(r);
    /* one value short on an entity line: the missing column is named */
    char bad[1024];
    snprintf(bad, sizeof bad,
             "# detgate-hashlog 3 scenario=duel format=flrep entities=1 raw=1 values=pos.x,pos.y\n"
             "0000004312 T 1 0000000000000001 0000000000000002 0000000000000003\n"
             "0000004312 e 0000000007 79c26c03092613c6 00000000000000a1 %s\n"
             "# end ticks=1\n", hx[0]);
    assert_int_equal(dg_hash_log_reader_open_mem(&r, bad, strlen(bad), "bad", &err), DG_OK);
    assert_int_equal(dg_hash_log_reader_next(r, &rt, &err), -1);
    assert_non_null(strstr(err.msg, "version 3: the header's values= count of raw values follow"));
    dg_hash_log_reader_close(r);
    /* a values= list that is not one, and raw values without entity raw hashes: refused */
    static const char badh[] = "# detgate-hashlog 3 scenario=duel format=flrep entities=1 raw=1 values=pos.x,,y\n";
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_reader_open_mem(&r, badh, strlen(badh), "badh", &err), DG_E_SYNTAX);
    if (!strstr(err.msg, "names of 1..64 characters"))
        fail_msg("%s: %s", err.where, err.msg);
    h.entity_raw = false;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_log_writer_open(&w, "/tmp/dg-never-written.log", &h, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "need entity_raw"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_2_writes_and_reads_entity_raw_hashes),
        cmocka_unit_test(test_without_entity_raw_the_log_stays_version_1),
        cmocka_unit_test(test_writer_and_reader_refuse_what_version_2_cannot_be),
        cmocka_unit_test(test_version_3_carries_the_raw_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
