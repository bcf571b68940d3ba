/* tests/codec/test_flrep_roundtrip.c — random worlds with spawns, despawns and events over thousands
 * of ticks: the state read back equals the quantized state the writer handed back, entity by
 * entity, field by field, every tick; and what it handed back is the quantizer's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flrep_testlib.h"

static void read_back_equal(const char *path, const tl_session *s, bool from_memory)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    size_t len = 0;
    uint8_t *buf = NULL;
    if (from_memory) {
        buf = tl_slurp(path, &len);
        assert_int_equal(dg_flrep_reader_open_mem(&r, buf, len, NULL, &err), DG_OK);
    } else if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK) {
        fail_msg("open: %s: %s", err.where, err.msg);
    }
    const dg_flrep_file_info *info = dg_flrep_reader_info(r);
    assert_false(info->recovered);
    assert_int_equal(info->tick_count, s->count);
    assert_int_equal(info->first_tick, s->ticks[0].tick);
    assert_int_equal(info->last_tick, s->ticks[s->count - 1].tick);
    dg_flrep_tick t;
    for (size_t i = 0; i < s->count; i++) {
        int rc = dg_flrep_reader_next(r, &t, &err);
        if (rc != 1)
            fail_msg("tick %zu: rc %d: %s: %s", i, rc, err.where, err.msg);
        tl_assert_tick_equal(&s->ticks[i], &t);
    }
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 0);
    dg_flrep_reader_close(r);
    free(buf);
}

static void roundtrip(const tl_params *p)
{
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_session s;
    tl_record(path, p, &s);
    read_back_equal(path, &s, false);
    read_back_equal(path, &s, true);
    tl_session_free(&s);
    remove(path);
}

static void test_roundtrip_churn_events(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        tl_params p = {.seed = seed, .ticks = 3000, .entities = 40, .churn = true, .events = true};
        roundtrip(&p);
    }
}

static void test_roundtrip_odd_rate_gaps_short_keyframes(void **state)
{
    (void)state;
    tl_params p = {.seed = 77, .ticks = 2000, .entities = 25, .churn = true, .events = true,
                   .keyframe = 15, .tick_rate = 7, .tick_step = 2};
    roundtrip(&p);
    tl_params q = {.seed = 78, .ticks = 1200, .entities = 10, .churn = true, .keyframe = 3600, .tick_rate = 15};
    roundtrip(&q);
}

static void test_roundtrip_empty_world_ticks(void **state)
{
    (void)state;
    tl_params p = {.seed = 5, .ticks = 300, .entities = 0, .churn = false, .events = true};
    roundtrip(&p);
}

/* A writer on a fresh temp file with the tests' header; the caller closes it and removes path. */
static dg_flrep_writer *open_temp_writer(char *path, size_t cap, uint32_t rate, uint32_t keyframe, dg_error *err)
{
    tl_temp_path(path, cap, ".flrep");
    dg_flrep_header h = tl_header(rate, keyframe);
    dg_flrep_writer *w = NULL;
    dg_error_clear(err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, err), DG_OK);
    return w;
}

static void test_handed_back_state_is_the_quantizer_output(void **state)
{
    (void)state;
    char path[256];
    dg_error err;
    dg_flrep_writer *w = open_temp_writer(path, sizeof path, 60, 0, &err);
    dg_entity_in in[2] = {
        {.id = 9, .type_index = 0, .faction_index = 1, .pos = {1.0 / 128, -3.3, 6.4e6}, .vel = {250.015625, 0, -1},
         .rot = {0.1, 0.2, -0.9, 0.3}, .health = 0.5, .flags = 3},
        {.id = 4, .type_index = 7, .faction_index = 5, .pos = {-20e6, 20e6, 0}, .rot = {-1, 0, 0, 0}, .health = 2}};
    dg_qentity q[2], want;
    assert_int_equal(dg_flrep_writer_tick(w, 1, in, 2, NULL, 0, q, &err), DG_OK);
    assert_int_equal(q[0].id, 4); /* sorted by id */
    assert_int_equal(dg_quant_entity(&in[1], &want, &err), DG_OK);
    assert_true(dg_qentity_equal(&q[0], &want));
    assert_int_equal(dg_quant_entity(&in[0], &want, &err), DG_OK);
    assert_true(dg_qentity_equal(&q[1], &want));
    /* the quantization rules of FORMAT-flrep.md §6.1, checked by hand */
    assert_int_equal(q[1].pos[0], 1);          /* 1/128 m = 0.5 quantum rounds away from zero */
    assert_int_equal(q[1].vel[0], 8001);       /* 250.015625 * 32 = 8000.5 rounds away from zero */
    assert_int_equal(q[0].pos[0], -20000000 * 64);
    assert_int_equal(q[0].health, 10000);      /* clamped */
    assert_int_equal(q[0].rot_largest, 0);     /* w = -1 negated to +1 */
    assert_int_equal(q[0].rot[0], 0);
    assert_int_equal(q[1].rot_largest, 2);     /* |y| largest; y negative so the quaternion is negated */
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    remove(path);
}

/* The writer refuses a quantized state it could not write faithfully — each rule on its own, at
 * the first, a middle and the last entity — names the entity, and stays usable: the same tick
 * without the fault is then accepted. */
static void test_writer_refuses_invalid_states(void **state)
{
    (void)state;
    char path[256];
    dg_error err;
    dg_flrep_writer *w = open_temp_writer(path, sizeof path, 60, 0, &err);
    enum { NE = 5 };
    dg_qentity good[NE];
    for (int i = 0; i < NE; i++) {
        dg_entity_in in = {.id = (uint32_t)(10 + 3 * i), .type_index = 7, .faction_index = 5, .rot = {1, 0, 0, 0},
                           .health = 0.5};
        assert_int_equal(dg_quant_entity(&in, &good[i], &err), DG_OK);
    }
    static const struct {
        const char *fault;
        dg_status st;
    } faults[] = {{"id 0", DG_E_USAGE},        {"id repeated", DG_E_USAGE}, {"type 3", DG_E_RANGE},
                  {"faction 2", DG_E_RANGE},   {"health", DG_E_RANGE},      {"rot -32768", DG_E_RANGE},
                  {"rot not unit", DG_E_RANGE}, {"largest 4", DG_E_RANGE},   {"pad", DG_E_RANGE}};
    uint64_t tick = 1;
    for (size_t f = 0; f < sizeof faults / sizeof faults[0]; f++)
        for (int at = 0; at < NE; at += 2) {
            dg_qentity q[NE];
            memcpy(q, good, sizeof q);
            dg_qentity *e = &q[at];
            switch (f) {
            case 0: e->id = 0; break;
            case 1: e->id = at ? q[at - 1].id : q[1].id; break;
            case 2: e->type_index = 3; break;
            case 3: e->faction_index = 2; break;
            case 4: e->health = 10001; break;
            case 5: e->rot[1] = INT16_MIN; break;
            case 6: e->rot[0] = e->rot[1] = e->rot[2] = 30000; break;
            case 7: e->rot_largest = 4; break;
            default: e->pad_ = 1; break;
            }
            dg_error_clear(&err);
            dg_status st = dg_flrep_writer_tick_q(w, tick, q, NE, NULL, 0, &err);
            if (st != faults[f].st)
                fail_msg("%s at entity %d: expected status %d, found %d (%s)", faults[f].fault, at, faults[f].st, st,
                         err.msg);
            assert_int_equal(dg_flrep_writer_tick_q(w, tick, good, NE, NULL, 0, &err), DG_OK);
            tick++;
        }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    remove(path);
}

/* dg_flrep_writer_tick checks the same rules on its quantizer's output (all but the state rules
 * the quantizer keeps by construction): a repeated id, a type or faction outside the tables, each
 * at every place, refused with the entity named; the same tick without the fault then accepted. */
static void test_writer_tick_refuses_bad_ids_and_indices(void **state)
{
    (void)state;
    char path[256];
    dg_error err;
    dg_flrep_writer *w = open_temp_writer(path, sizeof path, 60, 0, &err);
    enum { NE = 5 };
    dg_entity_in good[NE];
    for (int i = 0; i < NE; i++)
        good[i] = (dg_entity_in){.id = (uint32_t)(10 + 3 * i), .type_index = 7, .faction_index = 5,
                                 .rot = {1, 0, 0, 0}, .health = 0.5};
    uint64_t tick = 1;
    for (int fault = 0; fault < 3; fault++)
        for (int at = 0; at < NE; at++) {
            dg_entity_in in[NE];
            memcpy(in, good, sizeof in);
            switch (fault) {
            case 0: in[at].id = in[(at + 1) % NE].id; break;
            case 1: in[at].type_index = 3; break;
            default: in[at].faction_index = 2; break;
            }
            dg_error_clear(&err);
            dg_status st = dg_flrep_writer_tick(w, tick, in, NE, NULL, 0, NULL, &err);
            assert_int_equal(st, fault == 0 ? DG_E_USAGE : DG_E_RANGE);
            char id[16];
            snprintf(id, sizeof id, "%u", in[at].id);
            if (!strstr(err.msg, id))
                fail_msg("fault %d at entity %d: expected the message to name %s, found '%s'", fault, at, id, err.msg);
            assert_int_equal(dg_flrep_writer_tick(w, tick, good, NE, NULL, 0, NULL, &err), DG_OK);
            tick++;
        }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    remove(path);
}

/* Regression (found by the round-trip fuzzer, corpus/regressions/flrep_roundtrip/
 * eg-long-zero-run-unbuffered): a residual whose Exp-Golomb code has more zeros than the decoder's
 * fast path keeps buffered was written fine and refused on reading. Jumps of every size from one
 * quantum to 2^32 quanta, in both directions, inside one chunk. */
static void test_residuals_of_every_magnitude_round_trip(void **state)
{
    (void)state;
    enum { NE = 48, NT = 80 };
    char path[256];
    dg_error err;
    dg_flrep_writer *w = open_temp_writer(path, sizeof path, 30, 3600, &err);
    static dg_qentity q[NT][NE];
    for (int k = 0; k < NT; k++) {
        for (int i = 0; i < NE; i++) {
            /* |jump| = 2^e quanta with e cycling through 0..32 at a different phase per entity, so
             * long codes land at every bit position of the record block */
            int e2 = (k * 7 + i * 3) % 33;
            int64_t mag = e2 >= 31 ? INT32_MAX : ((int64_t)1 << e2);
            dg_qentity e = {.id = (uint32_t)(i + 1), .type_index = 1, .faction_index = 1, .health = 10000};
            e.pos[1] = (int32_t)(((k + i) % 2) ? mag : -mag);
            e.pos[0] = (int32_t)(k * 1000 + i);
            e.vel[2] = (int32_t)(((k + i) % 3) ? -mag / 2 : mag / 2);
            e.rot[0] = (int16_t)(((k + i) % 2) ? 20000 : -20000);
            q[k][i] = e;
        }
        assert_int_equal(dg_flrep_writer_tick_q(w, (uint64_t)k, q[k], NE, NULL, 0, &err), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    dg_flrep_reader *r = NULL;
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK)
        fail_msg("%s: %s", err.where, err.msg);
    dg_flrep_tick t;
    for (int k = 0; k < NT; k++) {
        int rc = dg_flrep_reader_next(r, &t, &err);
        if (rc != 1)
            fail_msg("tick %d: %s: %s", k, err.where, err.msg);
        assert_int_equal(t.ent_count, NE);
        for (int i = 0; i < NE; i++)
            assert_true(dg_qentity_equal(&t.ents[i], &q[k][i]));
    }
    dg_flrep_reader_close(r);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_tick_refuses_bad_ids_and_indices),
        cmocka_unit_test(test_roundtrip_churn_events),
        cmocka_unit_test(test_roundtrip_odd_rate_gaps_short_keyframes),
        cmocka_unit_test(test_roundtrip_empty_world_ticks),
        cmocka_unit_test(test_handed_back_state_is_the_quantizer_output),
        cmocka_unit_test(test_writer_refuses_invalid_states),
        cmocka_unit_test(test_residuals_of_every_magnitude_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
