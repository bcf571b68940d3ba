/* tests/codec/test_flrep2_roundtrip.c — format 2.0 (docs/FORMAT-flrep.md §12): a recording with
 * declared extra fields, chosen quanta and absent standard fields comes back exactly (every tick,
 * every field, after a seek too); the legacy schema still writes 1.0 byte for byte; the writer
 * refuses what the schema cannot carry, naming tick, entity and field; its self-check covers the
 * extras. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/flrep.h"
#include "detgate/hash.h"
#include "test_hooks.h"
#include "flrep2_fixture.h"
#include "flrep_testlib.h"

#define NB 12
#define NT 300

typedef struct rec2 {
    dg_qentity q[NT][NB];
    int64_t x[NT][NB * F2_NF];
    size_t n[NT];
} rec2;

/* Writes the fixture world through dg_flrep_writer_tick_x; bodies 9.. spawn at tick 30 and body 5
 * despawns at 200, so FULL records outside keyframes and REMOVE records occur. */
static void record2(const char *path, const dg_schema *s, uint32_t keyframe, rec2 *out)
{
    dg_flrep_header h = f2_header(s, keyframe);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_OK);
    for (uint64_t t = 0; t < NT; t++) {
        dg_entity_in e[NB];
        int64_t x[NB * F2_NF];
        size_t n = 0;
        for (size_t i = NB; i-- > 0;) {   /* given out of id order: the writer sorts, extras along */
            if ((i >= 9 && t < 30) || (i == 5 && t >= 200))
                continue;
            f2_body(i, t, &e[n], x + n * F2_NF);
            n++;
        }
        dg_status st = dg_flrep_writer_tick_x(w, t, e, x, n, NULL, 0, out->q[t], out->x[t], &err);
        if (st != DG_OK)
            fail_msg("tick %llu: %s: %s", (unsigned long long)t, err.where, err.msg);
        out->n[t] = n;
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
}

static void assert_same_schema(const dg_schema *a, const dg_schema *b)
{
    assert_int_equal(a->std_mask, b->std_mask);
    assert_true(a->pos_quantum_m == b->pos_quantum_m && a->vel_quantum_mps == b->vel_quantum_mps);
    assert_int_equal(a->field_count, b->field_count);
    for (size_t f = 0; f < a->field_count; f++) {
        const dg_field_def *x = &a->fields[f], *y = &b->fields[f];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->unit ? x->unit : "", y->unit ? y->unit : "");
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->bits, y->bits);
        assert_true(x->quantum == y->quantum);
        assert_int_equal(x->enum_count, y->enum_count);
        for (size_t k = 0; k < x->enum_count; k++)
            assert_string_equal(x->enum_names[k], y->enum_names[k]);
    }
}

static void assert_tick2(const rec2 *r, uint64_t t, const dg_flrep_tick *got)
{
    assert_int_equal(got->tick, t);
    assert_int_equal(got->ent_count, r->n[t]);
    assert_non_null(got->extras);
    for (size_t i = 0; i < r->n[t]; i++)
        assert_true(dg_qentity_equal(&got->ents[i], &r->q[t][i]));
    assert_memory_equal(got->extras, r->x[t], r->n[t] * F2_NF * sizeof(int64_t));
}

static void test_declared_fields_round_trip(void **state)
{
    (void)state;
    static rec2 r;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = f2_schema();
    record2(path, &s, 60, &r);
    dg_flrep_reader *rd = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_file(&rd, path, NULL, &err), DG_OK);
    const dg_flrep_header *h = dg_flrep_reader_header(rd);
    assert_int_equal(h->major, 2);
    assert_int_equal(h->minor, 0);
    assert_true(h->planet_radius_m == 0.0);
    assert_non_null(h->schema);
    assert_same_schema(&s, h->schema);
    assert_int_equal(h->type_count, 0);
    assert_int_equal(h->faction_count, 0);
    dg_flrep_tick tk;
    for (uint64_t t = 0; t < NT; t++) {
        assert_int_equal(dg_flrep_reader_next(rd, &tk, &err), 1);
        assert_tick2(&r, t, &tk);
        for (size_t i = 0; i < tk.ent_count; i++) {   /* absent standard fields read back as 0 */
            assert_int_equal(tk.ents[i].health, 0);
            assert_int_equal(tk.ents[i].type_index, 0);
            assert_int_equal(tk.ents[i].faction_index, 0);
        }
    }
    assert_int_equal(dg_flrep_reader_next(rd, &tk, &err), 0);
    /* seeking rolls the extras forward with the rest of the state, from the keyframe or going on
     * from the reader's position (61 -> 70 -> 119, 200 -> 201, 45 -> 50: ahead in the same chunk) */
    const uint64_t targets[] = {0, 59, 61, 70, 119, 133, 200, 201, 299, 45, 50};
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
        assert_int_equal(dg_flrep_reader_seek(rd, targets[k], &err), DG_OK);
        assert_int_equal(dg_flrep_reader_next(rd, &tk, &err), 1);
        assert_tick2(&r, targets[k], &tk);
    }
    dg_flrep_reader_close(rd);
    /* the chosen quanta are the values' meaning: 1/1024 m, angular velocity at 1/4096 rad/s */
    dg_entity_in e;
    int64_t x[F2_NF];
    f2_body(2, 17, &e, x);
    assert_int_equal(r.q[17][2].pos[1], (int32_t)llround(e.pos[1] * 1024.0));
    assert_int_equal(r.x[17][2 * F2_NF + F2_ANGVEL], x[F2_ANGVEL]);
    remove(path);
}

/* The same world with the legacy schema through the 2.0 entry points is format 1.0, byte for byte
 * what dg_flrep_writer_tick writes without a schema. */
static void test_legacy_schema_writes_1_0_bytes(void **state)
{
    (void)state;
    char pa[256], pb[256];
    tl_temp_path(pa, sizeof pa, ".flrep");
    tl_temp_path(pb, sizeof pb, ".flrep");
    dg_flrep_header ha = tl_header(60, 60), hb = ha;
    hb.schema = dg_schema_legacy();
    dg_flrep_writer *wa = NULL, *wb = NULL;
    assert_int_equal(dg_flrep_writer_open(&wa, pa, &ha, NULL, NULL), DG_OK);
    assert_int_equal(dg_flrep_writer_open(&wb, pb, &hb, NULL, NULL), DG_OK);
    for (uint64_t t = 0; t < 150; t++) {
        dg_entity_in e[6];
        int64_t x[6 * F2_NF];
        for (size_t i = 0; i < 6; i++) {
            f2_body(i, t, &e[i], x + i * F2_NF);
            e[i].health = 0.5;
            e[i].type_index = (uint16_t)(i % 2);
            e[i].faction_index = (uint16_t)(i % 2);
        }
        dg_error err;
        dg_error_clear(&err);
        if (dg_flrep_writer_tick(wa, t, e, 6, NULL, 0, NULL, &err) != DG_OK)
            fail_msg("%s: %s", err.where, err.msg);
        assert_int_equal(dg_flrep_writer_tick_x(wb, t, e, NULL, 6, NULL, 0, NULL, NULL, NULL), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(wa, NULL), DG_OK);
    assert_int_equal(dg_flrep_writer_close(wb, NULL), DG_OK);
    size_t la, lb;
    uint8_t *a = tl_slurp(pa, &la), *b = tl_slurp(pb, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    assert_int_equal(a[4], 1);   /* formatMajor 1 */
    dg_flrep_reader *rd = NULL;
    assert_int_equal(dg_flrep_reader_open_mem(&rd, a, la, NULL, NULL), DG_OK);
    assert_true(dg_schema_is_legacy(dg_flrep_reader_header(rd)->schema));
    dg_flrep_tick tk;
    assert_int_equal(dg_flrep_reader_next(rd, &tk, NULL), 1);
    assert_null(tk.extras);
    dg_flrep_reader_close(rd);
    free(a);
    free(b);
    remove(pa);
    remove(pb);
}

/* Every extreme value of every type, and jumps that force the raw forms and FULL records. */
static void test_extreme_values_round_trip(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 30);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_OK);
    static const int64_t lo[F2_NF] = {-(INT64_C(1) << 53), 0, 0, 0, 0, -2048};
    static const int64_t hi[F2_NF] = {INT64_C(1) << 53, -1, 1, 3, 0xFFFFFF, 2047};
    dg_qentity want[50][2];
    int64_t wx[50][2 * F2_NF];
    for (uint64_t t = 0; t < 50; t++) {
        for (size_t i = 0; i < 2; i++) {
            dg_qentity *q = &want[t][i];
            memset(q, 0, sizeof *q);
            q->id = (uint32_t)(7 + 1000 * i);
            bool up = ((t + i) % 2) == 0;
            q->pos[0] = up ? INT32_MAX : INT32_MIN;   /* a jump too large for a delta: FULL */
            q->vel[2] = (int32_t)(t * 1000003);
            q->rot[0] = (int16_t)(t % 2 ? 100 : -100);
            q->rot_largest = (uint8_t)(t % 4);        /* rotFull */
            q->flags = (uint16_t)t;
            for (size_t f = 0; f < F2_NF; f++)
                wx[t][i * F2_NF + f] = up ? hi[f] : lo[f];
        }
        assert_int_equal(dg_flrep_writer_tick_qx(w, t, want[t], wx[t], 2, NULL, 0, &err), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    dg_flrep_reader *rd = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&rd, path, NULL, &err), DG_OK);
    dg_flrep_tick tk;
    for (uint64_t t = 0; t < 50; t++) {
        assert_int_equal(dg_flrep_reader_next(rd, &tk, &err), 1);
        assert_int_equal(tk.ent_count, 2);
        for (size_t i = 0; i < 2; i++)
            assert_true(dg_qentity_equal(&tk.ents[i], &want[t][i]));
        assert_memory_equal(tk.extras, wx[t], sizeof wx[t]);
    }
    dg_flrep_reader_close(rd);
    remove(path);
}

/* A schema without rotation: the reader's rotation is the identity. */
static void test_absent_rotation_is_identity(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = {DG_STD_POS, 0.001, 0.001, NULL, 0};
    dg_flrep_header h = f2_header(&s, 30);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, NULL), DG_OK);
    for (uint64_t t = 0; t < 40; t++) {
        dg_entity_in e[3];
        int64_t x[3 * F2_NF];
        for (size_t i = 0; i < 3; i++)
            f2_body(i, t, &e[i], x + i * F2_NF);
        dg_qentity q[3];
        assert_int_equal(dg_flrep_writer_tick(w, t, e, 3, NULL, 0, q, NULL), DG_OK);
        assert_int_equal(q[1].vel[1], 0);
        assert_int_equal(q[1].flags, 0);
    }
    assert_int_equal(dg_flrep_writer_close(w, NULL), DG_OK);
    dg_flrep_reader *rd = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&rd, path, NULL, NULL), DG_OK);
    dg_flrep_tick tk;
    for (uint64_t t = 0; t < 40; t++) {
        assert_int_equal(dg_flrep_reader_next(rd, &tk, NULL), 1);
        assert_null(tk.extras);
        dg_entity_in e;
        int64_t x[F2_NF];
        f2_body(2, t, &e, x);
        assert_int_equal(tk.ents[2].pos[1], (int32_t)llround(e.pos[1] * 1000.0));
        assert_int_equal(tk.ents[2].rot_largest, 0);
        assert_int_equal(tk.ents[2].rot[0] | tk.ents[2].rot[1] | tk.ents[2].rot[2], 0);
        assert_int_equal(tk.ents[2].vel[1], 0);
    }
    dg_flrep_reader_close(rd);
    remove(path);
}

/* Quanta far apart (1/2^20 m, 1 m/s: predNum 2^20): one tick of motion at a large velocity is beyond
 * the multiply's range (the divide path), and a residual beyond a SEG code's makes the writer write
 * FULL records for live entities instead; the round trip stays exact. */
static void test_quanta_far_apart_round_trip(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = {DG_STD_POS | DG_STD_VEL, 1.0 / 1048576, 1.0, NULL, 0};
    dg_flrep_header h = f2_header(&s, 30);
    h.tick_rate_hz = 1;
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_OK);
    dg_qentity want[40][2];
    for (uint64_t t = 0; t < 40; t++) {
        for (size_t i = 0; i < 2; i++) {
            dg_qentity *q = &want[t][i];
            memset(q, 0, sizeof *q);
            q->id = (uint32_t)(i + 1);
            q->vel[0] = i ? (int32_t)(INT32_MAX - t) : (int32_t)(t * 3);   /* 2^31 m/s: a = 2^51 */
            q->pos[0] = i ? (int32_t)(t % 2 ? INT32_MIN : INT32_MAX) : (int32_t)(t * t * 3 * 1048576 / 2 % 1000000);
        }
        assert_int_equal(dg_flrep_writer_tick_qx(w, t, want[t], NULL, 2, NULL, 0, &err), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    dg_flrep_reader *rd = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&rd, path, NULL, &err), DG_OK);
    dg_flrep_tick tk;
    for (uint64_t t = 0; t < 40; t++) {
        assert_int_equal(dg_flrep_reader_next(rd, &tk, &err), 1);
        for (size_t i = 0; i < 2; i++)
            assert_true(dg_qentity_equal(&tk.ents[i], &want[t][i]));
    }
    dg_flrep_reader_close(rd);
    remove(path);
}

static void expect_tick_refused(dg_flrep_writer *w, uint64_t t, const dg_qentity *q, const int64_t *x,
                                const char *needle)
{
    dg_error err;
    dg_error_clear(&err);
    assert_int_not_equal(dg_flrep_writer_tick_qx(w, t, q, x, 1, NULL, 0, &err), DG_OK);
    if (!strstr(err.msg, needle))
        fail_msg("expected \"%s\" in \"%s\"", needle, err.msg);
}

static void test_writer_refuses_what_the_schema_cannot_carry(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 30);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, NULL), DG_OK);
    dg_qentity q;
    memset(&q, 0, sizeof q);
    q.id = 4;
    int64_t x[F2_NF] = {0, 0, 0, 0, 0, 0};
    q.health = 5000;
    expect_tick_refused(w, 0, &q, x, "entity 4: expected health = 0 (the schema has no such field)");
    q.health = 0;
    q.type_index = 1;
    expect_tick_refused(w, 0, &q, x, "type_index = 0");
    q.type_index = 0;
    x[F2_AMMO] = 2048;
    expect_tick_refused(w, 0, &q, x, "field \"ammo\": expected a value in -2048..2047");
    x[F2_AMMO] = 0;
    x[F2_KIND] = 4;
    expect_tick_refused(w, 0, &q, x, "field \"body.kind\": expected an enum index in 0..3");
    x[F2_KIND] = 0;
    x[F2_TAG] = 0x1000000;
    expect_tick_refused(w, 0, &q, x, "field \"tag\"");
    x[F2_TAG] = 0;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_tick_q(w, 0, &q, 1, NULL, 0, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "6 extra fields"));
    assert_int_equal(dg_flrep_writer_tick_qx(w, 0, &q, x, 1, NULL, 0, NULL), DG_OK);
    dg_flrep_writer_abort(w);
    /* a schema dg_schema_check refuses is refused at open */
    dg_field_def bad[2] = {f2_fields[0], f2_fields[0]};
    dg_schema sb = {DG_STD_POS, 1.0, 1.0, bad, 2};
    dg_flrep_header hb = f2_header(&sb, 30);
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &hb, NULL, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "distinct field names"));
    remove(path);
}

/* A tick in id order goes through the schema quantizer's batch (codec/quant_internal.h), one out
 * of order through dg_quant_entity_schema entity by entity: the same quanta and extras in the
 * caller's arrays, the same file byte for byte, and on a tick with two refused entities the same
 * error, naming the lower id. */
static void write_fixture_ticks(dg_flrep_writer *w, bool reversed, dg_qentity q[NB], int64_t x[NB * F2_NF],
                                uint64_t t)
{
    dg_entity_in e[NB];
    int64_t in_x[NB * F2_NF];
    for (size_t k = 0; k < NB; k++) {
        size_t i = reversed ? NB - 1 - k : k;
        f2_body(i, t, &e[k], in_x + k * F2_NF);
    }
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_tick_x(w, t, e, in_x, NB, NULL, 0, q, x, &err) != DG_OK)
        fail_msg("tick %llu (%s): %s: %s", (unsigned long long)t, reversed ? "reversed" : "in id order", err.where,
                 err.msg);
}

static void test_in_id_order_and_out_of_it_the_writer_quantizes_alike(void **state)
{
    (void)state;
    char pa[256], pb[256];
    tl_temp_path(pa, sizeof pa, ".flrep");
    tl_temp_path(pb, sizeof pb, ".flrep");
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 30);
    dg_flrep_writer *wa = NULL, *wb = NULL;
    assert_int_equal(dg_flrep_writer_open(&wa, pa, &h, NULL, NULL), DG_OK);
    assert_int_equal(dg_flrep_writer_open(&wb, pb, &h, NULL, NULL), DG_OK);
    for (uint64_t t = 0; t < 90; t++) {
        dg_qentity qa[NB], qb[NB];
        int64_t xa[NB * F2_NF], xb[NB * F2_NF];
        write_fixture_ticks(wa, false, qa, xa, t);
        write_fixture_ticks(wb, true, qb, xb, t);
        assert_memory_equal(qa, qb, sizeof qa);
        assert_memory_equal(xa, xb, sizeof xa);
    }
    /* two bad entities, ids 4 and 10 (index 3 in one group of eight, 9 in the next four) */
    dg_entity_in e[NB], r[NB];
    int64_t x[NB * F2_NF], rx[NB * F2_NF];
    for (size_t i = 0; i < NB; i++)
        f2_body(i, 90, &e[i], x + i * F2_NF);
    e[3].vel[2] = (double)NAN;
    memset(e[9].rot, 0, sizeof e[9].rot);
    for (size_t i = 0; i < NB; i++) {
        r[i] = e[NB - 1 - i];
        memcpy(rx + i * F2_NF, x + (NB - 1 - i) * F2_NF, sizeof x[0] * F2_NF);
    }
    dg_error ea, eb;
    dg_error_clear(&ea);
    dg_error_clear(&eb);
    assert_int_equal(dg_flrep_writer_tick_x(wa, 90, e, x, NB, NULL, 0, NULL, NULL, &ea), DG_E_RANGE);
    assert_int_equal(dg_flrep_writer_tick_x(wb, 90, r, rx, NB, NULL, 0, NULL, NULL, &eb), DG_E_RANGE);
    assert_string_equal(ea.where, "entity 4");
    assert_string_equal(ea.where, eb.where);
    assert_string_equal(ea.msg, eb.msg);
    assert_non_null(strstr(ea.msg, "vel[2]"));
    assert_int_equal(dg_flrep_writer_close(wa, NULL), DG_OK);
    assert_int_equal(dg_flrep_writer_close(wb, NULL), DG_OK);
    size_t la, lb;
    uint8_t *ba = tl_slurp(pa, &la), *bb = tl_slurp(pb, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
    remove(pa);
    remove(pb);
}

/* The self-check rebuilds every DELTA with the decoder's arithmetic, extras included: the fault
 * hook (a delta applied twice) makes the writer refuse the tick. */
static void test_self_check_covers_the_2_0_records(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 60);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, NULL), DG_OK);
    dg_flrep__writer_set_fault_self_check(w, 5);
    dg_status st = DG_OK;
    dg_error err;
    dg_error_clear(&err);
    uint64_t t = 0;
    for (; t < 20 && st == DG_OK; t++) {
        dg_entity_in e[4];
        int64_t x[4 * F2_NF];
        for (size_t i = 0; i < 4; i++)
            f2_body(i, t, &e[i], x + i * F2_NF);
        st = dg_flrep_writer_tick_x(w, t, e, x, 4, NULL, 0, NULL, NULL, &err);
    }
    assert_int_equal(st, DG_E_STATE);
    assert_int_equal(t, 6);
    assert_non_null(strstr(err.msg, "does not reproduce"));
    dg_flrep_writer_abort(w);
}

/* Writes 80 ticks of 4 bodies, with extra field `field` (or, for field < 0, flags) of entity 3 one
 * quantum off at tick 37 only; returns the tick hashes read back. */
static void record_hashes(int field, bool spoil, uint64_t hashes[80], uint64_t ent3[80])
{
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 30);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, NULL), DG_OK);
    for (uint64_t t = 0; t < 80; t++) {
        dg_entity_in e[4];
        int64_t x[4 * F2_NF];
        for (size_t i = 0; i < 4; i++)
            f2_body(i, t, &e[i], x + i * F2_NF);
        if (spoil && t == 37) {
            if (field < 0)
                e[2].flags ^= 4;
            else if (field == F2_KIND)
                x[2 * F2_NF + field] = (x[2 * F2_NF + field] + 1) % 4;
            else if (field == F2_AMMO)
                x[2 * F2_NF + field] -= 1;
            else
                x[2 * F2_NF + field] ^= 1;
        }
        assert_int_equal(dg_flrep_writer_tick_x(w, t, e, x, 4, NULL, 0, NULL, NULL, NULL), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, NULL), DG_OK);
    dg_flrep_reader *rd = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&rd, path, NULL, NULL), DG_OK);
    dg_flrep_tick tk;
    for (uint64_t t = 0; t < 80; t++) {
        assert_int_equal(dg_flrep_reader_next(rd, &tk, NULL), 1);
        uint64_t eh[4];
        hashes[t] = dg_hash_tick_x(tk.tick, tk.ents, tk.extras, F2_NF, tk.ent_count, tk.events, tk.event_count, eh).combined;
        ent3[t] = eh[2];
    }
    dg_flrep_reader_close(rd);
    remove(path);
}

static void test_each_field_change_is_caught_at_its_tick(void **state)
{
    (void)state;
    uint64_t base[80], base3[80];
    record_hashes(0, false, base, base3);
    for (int f = -1; f < F2_NF; f++) {
        uint64_t h[80], h3[80];
        record_hashes(f, true, h, h3);
        for (uint64_t t = 0; t < 80; t++) {
            if (t == 37) {
                assert_true(h[t] != base[t]);
                assert_true(h3[t] != base3[t]);   /* entity 3's hash names it */
            } else {
                assert_true(h[t] == base[t]);
            }
        }
    }
}

/* The self-check compares the extra fields too: in a world where only an extra field changes (a
 * counter, +3 a tick; the bodies never move), the hooked self-check — each record applied twice —
 * catches the counter at +6 at the hooked tick. Without the extras in the comparison nothing would
 * differ and the tick would be written. */
static void test_self_check_compares_the_extras(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    static const dg_field_def counter[1] = {{"counter", "", DG_FIELD_INT, 32, 0, NULL, 0}};
    dg_schema s = {DG_STD_POS, 1.0 / 1024, 1.0 / 1024, counter, 1};
    dg_flrep_header h = f2_header(&s, 60);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, NULL), DG_OK);
    dg_flrep__writer_set_fault_self_check(w, 7);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = DG_OK;
    uint64_t t = 0;
    for (; t < 20 && st == DG_OK; t++) {
        dg_qentity q[3];
        int64_t x[3];
        memset(q, 0, sizeof q);
        for (size_t i = 0; i < 3; i++) {
            q[i].id = (uint32_t)(i + 1);
            q[i].pos[0] = (int32_t)(i * 1000);
            x[i] = (int64_t)(t * 3 + i);
        }
        st = dg_flrep_writer_tick_qx(w, t, q, x, 3, NULL, 0, &err);
    }
    assert_int_equal(st, DG_E_STATE);
    assert_int_equal(t - 1, 7);
    dg_flrep_writer_abort(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declared_fields_round_trip),
        cmocka_unit_test(test_in_id_order_and_out_of_it_the_writer_quantizes_alike),
        cmocka_unit_test(test_legacy_schema_writes_1_0_bytes),
        cmocka_unit_test(test_extreme_values_round_trip),
        cmocka_unit_test(test_absent_rotation_is_identity),
        cmocka_unit_test(test_quanta_far_apart_round_trip),
        cmocka_unit_test(test_writer_refuses_what_the_schema_cannot_carry),
        cmocka_unit_test(test_self_check_covers_the_2_0_records),
        cmocka_unit_test(test_each_field_change_is_caught_at_its_tick),
        cmocka_unit_test(test_self_check_compares_the_extras),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
