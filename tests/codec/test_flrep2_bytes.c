/* tests/codec/test_flrep2_bytes.c — format 2.0 files built bit by bit from docs/FORMAT-flrep.md §12
 * alone (flrep_handfile.h's byte writer, zstd call and XXH3 checks; flrep_handbits.h's bit packer):
 * the reader rebuilds exactly what the page says they hold (the prediction with chosen quanta, both
 * forms of a changed extra field), and refuses every hostile schema section and every record whose
 * extra values break their bounds with an error naming section or record, entity and field,
 * delivering nothing of the bad tick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/flrep.h"
#include "flrep_handfile.h"

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* The schema of these files (§12.2): position, velocity and flags (stdMask 0x4C), quanta 1/1024,
 * predNum 1 / predDen 1; fields spin (float, 1/4096 rad/s), seed (uint 64), awake (bool), kind
 * (enum a, b, c: W = 2). Parts a test spoils are parameters. */
typedef struct h2_schema {
    uint8_t mask;
    double pos_q;
    uint8_t field_count;       /* written */
    const char *name1;         /* field 1's name */
    uint8_t type0;             /* field 0's type */
    double quantum0;
    uint16_t kind_names;       /* 3 */
    bool omit;                 /* no schema section at all */
} h2_schema;

static h2_schema h2_default(void)
{
    h2_schema s = {0x4C, 1.0 / 1024, 4, "seed", 3, 1.0 / 4096, 3, false};
    return s;
}

static void h2_schema_payload(hf_bytes *p, const h2_schema *s)
{
    hf_u8(p, s->mask);
    hf_u64(p, f64_bits(s->pos_q));
    hf_u64(p, f64_bits(1.0 / 1024));
    hf_u32(p, 1);
    hf_u32(p, 1);
    hf_u8(p, s->field_count);
    hf_str(p, "spin"); hf_str(p, "rad/s"); hf_u8(p, s->type0); hf_u8(p, 0); hf_u64(p, f64_bits(s->quantum0)); hf_u16(p, 0);
    hf_str(p, s->name1); hf_str(p, ""); hf_u8(p, 2); hf_u8(p, 64); hf_u64(p, 0); hf_u16(p, 0);
    hf_str(p, "awake"); hf_str(p, ""); hf_u8(p, 4); hf_u8(p, 0); hf_u64(p, 0); hf_u16(p, 0);
    hf_str(p, "kind"); hf_str(p, ""); hf_u8(p, 5); hf_u8(p, 0); hf_u64(p, 0); hf_u16(p, s->kind_names);
    static const char *const names[] = {"a", "b", "c", "d", "e"};
    for (uint16_t k = 0; k < s->kind_names && k < 5; k++)
        hf_str(p, names[k]);
}

/* §3, §12.1: prefix with major 2, a header body with planetRadiusM 0, the schema section, the end. */
static void h2_preamble(hf_bytes *o, const h2_schema *s)
{
    hf_raw(o, "FLRP", 4);
    hf_u16(o, 2);
    hf_u16(o, 0);
    hf_str(o, "hand 2.0");
    hf_bytes body = {0};
    hf_u32(&body, 60);
    hf_u64(&body, f64_bits(0.0));
    hf_u64(&body, 7);
    hf_str(&body, "");
    hf_u32(&body, 0);
    hf_u32(&body, 60);
    hf_u32(o, (uint32_t)body.n);
    hf_raw(o, body.b, body.n);
    hf_free(&body);
    if (!s->omit) {
        hf_bytes p = {0};
        h2_schema_payload(&p, s);
        hf_u16(o, 5);
        hf_u32(o, (uint32_t)p.n);
        hf_raw(o, p.b, p.n);
        hf_free(&p);
    }
    hf_u16(o, 0);
    hf_u32(o, 0);
}

/* A FULL record (§12.3) of the schema above: flags, position and velocity as SEG, then each extra
 * field as form + value — spin raw s(55), seed raw u(64), awake SEG, kind SEG (both forms). */
static void h2_full(bits *w, uint64_t gap, uint16_t flags, int32_t px, int32_t vx, int64_t spin, uint64_t seed,
                    unsigned awake, unsigned kind)
{
    beg(w, gap);
    bput(w, 1, 2);
    bput(w, flags, 16);
    bseg(w, px); bseg(w, -200); bseg(w, 0);
    bseg(w, vx); bseg(w, 0); bseg(w, 0);
    bput(w, 1, 1); bput(w, (uint64_t)spin & ((UINT64_C(1) << 55) - 1), 55);
    bput(w, 1, 1); bput(w, seed, 64);
    bput(w, 0, 1); bseg(w, awake);
    bput(w, 0, 1); bseg(w, kind);
}

/* The file of the worked example: tick 0 FULL entity 5; tick 1 DELTA with pres 1, flags and two
 * extras changed (spin by SEG +5, awake raw 0); tick 2 DELTA by prediction alone and entity 9
 * spawned. `spoil` replaces tick 1's record block (NULL: the good one). */
static void h2_file(hf_bytes *f, const h2_schema *s, const bits *spoil)
{
    hf_bytes content = {0};
    bits w = {{0}, 0};
    h2_full(&w, 4, 3, 100, 61440, -7, UINT64_C(0xfedcba9876543210), 1, 2);
    hf_tick(&content, 0, 1, 1, 0, &w);
    memset(&w, 0, sizeof w);
    beg(&w, 4);
    bput(&w, 0, 2);                          /* DELTA */
    bput(&w, 1 | 4 | 8, 4);                  /* motion, no rotFull, attrs, extras */
    bseg(&w, 0); bseg(&w, 0); bseg(&w, 0);   /* vres */
    bseg(&w, 1); bseg(&w, 0); bseg(&w, 0);   /* pres */
    bput(&w, 8, 4);                          /* attrs mask: flags */
    bput(&w, 7, 16);
    bput(&w, 1 | 4, 4);                      /* changed: spin, awake */
    bput(&w, 0, 1); bseg(&w, 5);             /* spin: form 0, d = +5 */
    bput(&w, 1, 1); bput(&w, 0, 1);          /* awake: form 1, raw 0 */
    hf_tick(&content, 1, 0, 1, 0, spoil ? spoil : &w);
    memset(&w, 0, sizeof w);
    beg(&w, 4);
    bput(&w, 0, 2);
    bput(&w, 0, 4);                          /* no residual: the prediction alone */
    h2_full(&w, 3, 0, 0, 0, 0, 42, 0, 0);    /* entity 9 */
    hf_tick(&content, 2, 0, 2, 0, &w);
    h2_preamble(f, s);
    hf_chunk c = hf_append_chunk(f, &content, 0, 2, 3);
    hf_trailer(f, &c, 1);
    hf_free(&content);
}

static void test_reader_rebuilds_what_the_page_says(void **state)
{
    (void)state;
    hf_bytes f = {0};
    h2_schema s = h2_default();
    h2_file(&f, &s, NULL);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err) != DG_OK)
        fail_msg("%s at %llu: %s", err.where, (unsigned long long)err.offset, err.msg);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_int_equal(h->major, 2);
    assert_int_equal(h->schema->std_mask, 0x4C);
    assert_int_equal(h->schema->field_count, 4);
    assert_string_equal(h->schema->fields[3].enum_names[2], "c");
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.ents[0].id, 5);
    assert_int_equal(t.ents[0].flags, 3);
    assert_int_equal(t.extras[0], -7);
    assert_true((uint64_t)t.extras[1] == UINT64_C(0xfedcba9876543210));
    assert_int_equal(t.extras[2], 1);
    assert_int_equal(t.extras[3], 2);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    /* §12.4: pos' = 100 + rdiv(1 x 61440, 1 x 60) + 1 = 1125 */
    assert_int_equal(t.ents[0].pos[0], 1125);
    assert_int_equal(t.ents[0].pos[1], -200);
    assert_int_equal(t.ents[0].vel[0], 61440);
    assert_int_equal(t.ents[0].flags, 7);
    assert_int_equal(t.extras[0], -2);
    assert_int_equal(t.extras[2], 0);
    assert_int_equal(t.extras[3], 2);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.ent_count, 2);
    assert_int_equal(t.ents[0].pos[0], 2149);
    assert_int_equal(t.ents[1].id, 9);
    assert_int_equal(t.extras[4 + 1], 42);
    assert_int_equal(t.extras[0], -2);   /* unchanged extras stay */
    dg_flrep_reader_close(r);
    hf_free(&f);
}

static void expect_open_refused(const h2_schema *s, dg_status code, const char *needle)
{
    hf_bytes f = {0};
    h2_file(&f, s, NULL);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), code);
    assert_null(r);
    char line[640];
    dg_error_format(&err, line, sizeof line);
    if (!strstr(line, needle))
        fail_msg("expected \"%s\" in \"%s\"", needle, line);
    hf_free(&f);
}

static void test_hostile_schema_sections(void **state)
{
    (void)state;
    h2_schema s = h2_default();
    s.name1 = "spin";
    expect_open_refused(&s, DG_E_MALFORMED, "section 0x0005 (entity schema) at byte");
    expect_open_refused(&s, DG_E_MALFORMED, "schema field 1 (\"spin\"): expected distinct field names");
    s = h2_default();
    s.type0 = 9;
    expect_open_refused(&s, DG_E_MALFORMED, "schema field 0 (\"spin\"): expected a type int, uint, float");
    s = h2_default();
    s.quantum0 = 0.0;
    expect_open_refused(&s, DG_E_MALFORMED, "float field's quantum finite and > 0");
    s.quantum0 = NAN;
    expect_open_refused(&s, DG_E_MALFORMED, "float field's quantum finite and > 0");
    s.quantum0 = INFINITY;
    expect_open_refused(&s, DG_E_MALFORMED, "float field's quantum finite and > 0");
    s = h2_default();
    s.pos_q = -1.0;
    expect_open_refused(&s, DG_E_MALFORMED, "expected posQuantum finite and > 0, found -1");
    s = h2_default();
    s.field_count = 33;
    expect_open_refused(&s, DG_E_LIMIT, "expected fieldCount <= 32, found 33");
    s = h2_default();
    s.field_count = 5;   /* one more than the payload holds: the section is cut in field 4 */
    expect_open_refused(&s, DG_E_TRUNCATED, "section 0x0005 (entity schema)");
    s = h2_default();
    s.kind_names = 0;
    expect_open_refused(&s, DG_E_MALFORMED, "schema field 3 (\"kind\"): expected an enum of 1..256 names");
    s = h2_default();
    s.mask = 0x80 | 0x4C;
    expect_open_refused(&s, DG_E_MALFORMED, "expected stdMask bit 7 clear");
    s = h2_default();
    s.mask = 0x4C | DG_STD_TYPE;   /* type in the schema, no manifest */
    expect_open_refused(&s, DG_E_MALFORMED, "expected required section 0x0001 (entity-type manifest) of a format 2.0");
    s = h2_default();
    s.omit = true;
    expect_open_refused(&s, DG_E_MALFORMED, "expected required section 0x0005 (entity schema)");
}

/* Opens the file with tick 1's block replaced by `spoil`: tick 0 plays, tick 1 is refused with an
 * error holding `needle`, and the caller's view is still tick 0's. */
static void expect_tick1_refused(const bits *spoil, const char *needle)
{
    hf_bytes f = {0};
    h2_schema s = h2_default();
    h2_file(&f, &s, spoil);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), DG_OK);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    const int64_t *x0 = t.extras;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    char line[640];
    dg_error_format(&err, line, sizeof line);
    if (!strstr(line, needle) || !strstr(line, "tick 1"))
        fail_msg("expected \"%s\" at tick 1 in \"%s\"", needle, line);
    assert_int_equal(x0[0], -7);   /* no partial state: the last good tick's values */
    assert_int_equal(x0[2], 1);
    dg_flrep_reader_close(r);
    hf_free(&f);
}

/* A DELTA head of entity 5 without motion and with the given flags (4 attrs, 8 extras). */
static void delta_head(bits *w, unsigned flags)
{
    memset(w, 0, sizeof *w);
    beg(w, 4);
    bput(w, 0, 2);
    bput(w, flags, 4);
}

static void test_records_whose_extras_break_bounds(void **state)
{
    (void)state;
    bits w;
    /* a FULL record (replacing entity 5) with kind 3 of an enum of 3 names */
    memset(&w, 0, sizeof w);
    h2_full(&w, 4, 0, 0, 0, 0, 0, 0, 3);
    expect_tick1_refused(&w, "field \"kind\": expected an enum index in 0..2, found 3");
    /* a FULL record with a float beyond 2^53 quanta */
    memset(&w, 0, sizeof w);
    h2_full(&w, 4, 0, 0, 0, (INT64_C(1) << 53) + 1, 0, 0, 0);
    expect_tick1_refused(&w, "field \"spin\": expected a float's quanta within +-2^53");
    /* a FULL record whose position leaves i32 */
    memset(&w, 0, sizeof w);
    beg(&w, 4);
    bput(&w, 1, 2);
    bput(&w, 0, 16);
    bseg(&w, INT64_C(1) << 31);
    for (int i = 0; i < 5; i++)
        bseg(&w, 0);
    for (int f = 0; f < 4; f++) {
        bput(&w, 0, 1);
        bseg(&w, 0);
    }
    expect_tick1_refused(&w, "a FULL record's positions and velocities within the i32 range");
    /* awake 1 + SEG change 1 = 2: not a bool */
    delta_head(&w, 8);
    bput(&w, 4, 4);
    bput(&w, 0, 1);
    bseg(&w, 1);
    expect_tick1_refused(&w, "record 0 of 1 (entity 5): expected field \"awake\" to hold a value of its type");
    /* kind 2 + SEG change -3 = -1 */
    delta_head(&w, 8);
    bput(&w, 8, 4);
    bput(&w, 0, 1);
    bseg(&w, -3);
    expect_tick1_refused(&w, "expected field \"kind\"");
    /* the health bit of the attrs mask: the schema has no health */
    delta_head(&w, 4);
    bput(&w, 4, 4);
    bput(&w, 100, 16);
    expect_tick1_refused(&w, "an attrs mask with bits only for fields the schema has");
    /* extras = 1 with an empty changed mask */
    delta_head(&w, 8);
    bput(&w, 0, 4);
    expect_tick1_refused(&w, "a non-zero changed mask after extras = 1, found 0");
    /* rotFull without rotation in the schema */
    delta_head(&w, 1 | 2);
    expect_tick1_refused(&w, "rotFull = 0 (rotFull needs motion = 1 and rotation in the schema)");
    /* the block ends inside the raw value of seed */
    delta_head(&w, 8);
    bput(&w, 2, 4);
    bput(&w, 1, 1);
    bput(&w, 0xffff, 16);
    expect_tick1_refused(&w, "a complete DELTA record, found the record block exhausted");
}

/* A schema without position, velocity or rotation (stdMask 0x40: flags and the four extras, a state
 * machine's record): tick 0 FULL records of entities 5..16 (flags, then the extras as h2_full writes
 * them), tick 1 a DELTA of each, changing spin by +5 — the record of entity 10 with the DELTA head
 * flags `head10` instead (8: the same). Twelve records, so the fast path's copy for "any other set"
 * of standard fields (fast2_run_any with no motion field, which stops in a block's last 8 bytes) has
 * records to take: extras alone are taken, and a motion bit, which such a schema cannot have, is
 * refused with the general path's message (test_flrep2_paths.c reads these files both ways). */
#define STILL_N 12
static void still_file(hf_bytes *f, unsigned head10)
{
    h2_schema s = h2_default();
    s.mask = 0x40;
    hf_bytes content = {0};
    bits w;
    memset(&w, 0, sizeof w);
    for (int k = 0; k < STILL_N; k++) {
        beg(&w, k ? 0 : 4);
        bput(&w, 1, 2);
        bput(&w, 3, 16);
        bput(&w, 1, 1); bput(&w, (uint64_t)-7 & ((UINT64_C(1) << 55) - 1), 55);
        bput(&w, 1, 1); bput(&w, 42, 64);
        bput(&w, 0, 1); bseg(&w, 1);
        bput(&w, 0, 1); bseg(&w, 2);
    }
    hf_tick(&content, 0, 1, STILL_N, 0, &w);
    memset(&w, 0, sizeof w);
    for (int k = 0; k < STILL_N; k++) {
        beg(&w, k ? 0 : 4);
        bput(&w, 0, 2);                       /* DELTA */
        bput(&w, k == 5 ? head10 : 8, 4);     /* motion, rotFull, attrs, extras */
        bput(&w, 1, 4);                       /* changed: spin */
        bput(&w, 0, 1); bseg(&w, 5);
    }
    hf_tick(&content, 1, 0, STILL_N, 0, &w);
    h2_preamble(f, &s);
    hf_chunk c = hf_append_chunk(f, &content, 0, 1, 2);
    hf_trailer(f, &c, 1);
    hf_free(&content);
}

/* Tick 1 of still_file(head10): 1 with t filled, or -1 with the error in line. */
static int still_tick1(unsigned head10, dg_flrep_tick *t, char *line, size_t cap, hf_bytes *f, dg_flrep_reader **r)
{
    still_file(f, head10);
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(r, f->b, f->n, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_header(*r)->schema->std_mask, 0x40);
    assert_int_equal(dg_flrep_reader_next(*r, t, &err), 1);
    assert_int_equal(t->ent_count, STILL_N);
    int rc = dg_flrep_reader_next(*r, t, &err);
    dg_error_format(&err, line, cap);
    return rc;
}

static void test_a_schema_without_motion_fields(void **state)
{
    (void)state;
    hf_bytes f = {0};
    dg_flrep_reader *r = NULL;
    dg_flrep_tick t;
    char line[640];
    /* extras only (motion 0): spin -7 + 5, the rest kept; no position or velocity to move */
    if (still_tick1(8, &t, line, sizeof line, &f, &r) != 1)
        fail_msg("extras-only DELTAs refused: %s", line);
    assert_int_equal(t.ent_count, STILL_N);
    for (int k = 0; k < STILL_N; k++) {
        assert_int_equal(t.ents[k].id, 5 + k);
        assert_int_equal(t.ents[k].flags, 3);
        assert_int_equal(t.ents[k].pos[0], 0);
        assert_int_equal(t.extras[k * 4], -2);
        assert_int_equal(t.extras[k * 4 + 1], 42);
    }
    dg_flrep_reader_close(r);
    hf_free(&f);
    /* a motion bit on entity 10's record, with extras: refused and named, nothing of tick 1 delivered */
    memset(&f, 0, sizeof f);
    assert_int_equal(still_tick1(1 | 8, &t, line, sizeof line, &f, &r), -1);
    if (!strstr(line, "motion = 0 (the schema has no position, velocity or rotation), found motion = 1") ||
        !strstr(line, "tick 1") || !strstr(line, "entity 10"))
        fail_msg("%s", line);
    assert_int_equal(t.ent_count, STILL_N); /* the view is still tick 0's */
    assert_int_equal(t.extras[0], -7);
    dg_flrep_reader_close(r);
    hf_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_rebuilds_what_the_page_says),
        cmocka_unit_test(test_hostile_schema_sections),
        cmocka_unit_test(test_records_whose_extras_break_bounds),
        cmocka_unit_test(test_a_schema_without_motion_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
