/* tests/rply/test_rply_errors.c — every error rule of shared/specs/rply.md, each with the offending
 * bytes built by hand, checked for the status, the message naming what is wrong, and the offset. */
#include <stdio.h>

#include "rply_test_util.h"

/* ---- hand-written ops ---------------------------------------------------------------------- */
static void op_tick(tb *b, uint32_t t) { tb_u8(b, 0); tb_u32(b, t); }
static void op_next(tb *b) { tb_u8(b, 10); }
static void op_spawn(tb *b, unsigned id, unsigned desc, unsigned parent)
{
    tb_u8(b, 1); tb_u16(b, id); tb_u16(b, desc); tb_u16(b, parent);
}
static void op_despawn(tb *b, unsigned id) { tb_u8(b, 2); tb_u16(b, id); }
static void op_xform_yaw(tb *b, unsigned id)
{
    tb_u8(b, 3); tb_u16(b, id); tb_u8(b, 5);
    tb_f32(b, 1); tb_f32(b, 2); tb_f32(b, 3); tb_u16(b, 100);
}
static void op_xform_tilt(tb *b, unsigned id)
{
    tb_u8(b, 3); tb_u16(b, id); tb_u8(b, 3);
    tb_f32(b, 1); tb_f32(b, 2); tb_f32(b, 3); tb_u16(b, 1); tb_u16(b, 2); tb_u16(b, 3);
}

typedef struct run {
    dg_status st;
    dg_error err;
    size_t len;
} run;

static run check(const tfile *t, const tb *ops, uint32_t pv)
{
    tb f = tfile_build(t, ops);
    run r;
    r.st = rply_check_bytes(f.p, f.n, pv, &r.err);
    r.len = f.n;
    tb_free(&f);
    return r;
}

static void expect(run r, dg_status code, const char *needle)
{
    char text[600];
    dg_error_format(&r.err, text, sizeof text);
    if (r.st != code || (needle && !strstr(text, needle))) {
        fprintf(stderr, "expected status %d containing \"%s\", got %d: %s\n", code,
                needle ? needle : "", r.st, text);
        fail();
    }
    if (code != DG_OK)
        assert_true(r.err.offset == DG_OFFSET_NONE || r.err.offset <= r.len);
}

static run check_ops(const tb *ops)
{
    tfile t = tfile_default();
    return check(&t, ops, 0);
}

/* ---- header -------------------------------------------------------------------------------- */
static void header_errors(void **state)
{
    (void)state;
    tb ops = {0};
    tfile t = tfile_default();
    tb f = tfile_build(&t, &ops);
    dg_error err;
    for (size_t n = 0; n < 30; n++)
        assert_int_equal(rply_check_bytes(f.p, n, 0, &err), DG_E_TRUNCATED);
    assert_int_equal(rply_check_bytes(f.p, f.n, 0, &err), DG_OK);
    assert_int_equal(rply_check_bytes(f.p, 30, 0, &err), DG_E_TRUNCATED); /* 8 strings missing */
    assert_int_equal(rply_check_bytes(f.p, f.n - 1, 0, &err), DG_E_TRUNCATED); /* last one cut */
    tb_free(&f);

    t.nstr = 0;
    f = tfile_build(&t, &ops);
    assert_int_equal(rply_check_bytes(f.p, f.n, 0, &err), DG_OK);
    f.p[3] = 'Z';
    assert_int_equal(rply_check_bytes(f.p, f.n, 0, &err), DG_E_MAGIC);
    assert_int_equal(err.offset, 0);
    tb_free(&f);

    t.version = 2;
    run r = check(&t, &ops, 0);
    expect(r, DG_E_VERSION, "version 2");
    expect(r, DG_E_VERSION, "version 3");
    assert_int_equal(r.err.offset, 4);

    t.version = 3;
    t.tick_rate = 0;
    r = check(&t, &ops, 0);
    expect(r, DG_E_RANGE, "tickRate");
    assert_int_equal(r.err.offset, 5);

    t.tick_rate = 30;
    t.place_version = 77;
    expect(check(&t, &ops, 0), DG_OK, NULL);
    expect(check(&t, &ops, 77), DG_OK, NULL);
    r = check(&t, &ops, 78);
    expect(r, DG_E_VERSION, "placeVersion 77");
    expect(r, DG_E_VERSION, "placeVersion 78");
    assert_int_equal(r.err.offset, 6);
}

/* ---- string table, keyframe index, file end ------------------------------------------------ */
static void table_errors(void **state)
{
    (void)state;
    tb ops = {0};
    tfile t = tfile_default();
    const char *bad[] = {"ok", "\xc3\x28"}; /* invalid continuation byte */
    t.nstr = 2;
    t.strings = bad;
    run r = check(&t, &ops, 0);
    expect(r, DG_E_UTF8, "UTF-8");
    assert_int_equal(r.err.offset, 30 + 4);
    const char *overlong[] = {"\xc0\xaf"};
    t.nstr = 1;
    t.strings = overlong;
    expect(check(&t, &ops, 0), DG_E_UTF8, NULL);
    t.strings = NULL;

    /* stringCount larger than the bytes could hold: refused before allocating */
    tb raw = {0};
    tb_put(&raw, "RPLY", 4); tb_u8(&raw, 3); tb_u8(&raw, 15); tb_u32(&raw, 0); tb_f64(&raw, 0);
    tb_u32(&raw, 10); tb_u16(&raw, 65535); tb_u16(&raw, 0); tb_u32(&raw, 0);
    dg_error err;
    assert_int_equal(rply_check_bytes(raw.p, raw.n, 0, &err), DG_E_TRUNCATED);
    assert_non_null(strstr(err.msg, "stringCount 65535"));
    tb_free(&raw);

    /* opBytes says more than the file has; trailing bytes after the OpStream */
    op_tick(&ops, 1);
    t = tfile_default();
    t.op_bytes_delta = 1;
    expect(check(&t, &ops, 0), DG_E_TRUNCATED, "opBytes");
    t.op_bytes_delta = -1;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "trailing");
    t.op_bytes_delta = 0;
    expect(check(&t, &ops, 0), DG_OK, NULL);
    tb_free(&ops);
}

static void keyframe_errors(void **state)
{
    (void)state;
    tb ops = {0};
    op_tick(&ops, 0);        /* offset 0 */
    op_spawn(&ops, 1, 0, 0); /* offset 5 */
    op_xform_yaw(&ops, 1);   /* offset 12 */
    op_tick(&ops, 5);        /* offset 30 */
    op_xform_yaw(&ops, 1);   /* offset 35 */
    op_tick(&ops, 9);        /* offset 53 */
    tfile t = tfile_default();
    const uint32_t good[] = {0, 0, 5, 30, 9, 53};
    t.nkf = 3;
    t.kf = good;
    expect(check(&t, &ops, 0), DG_OK, NULL);

    const uint32_t tick_back[] = {5, 0, 5, 30};
    t.nkf = 2;
    t.kf = tick_back;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "strictly increasing");
    const uint32_t off_back[] = {0, 30, 5, 30};
    t.kf = off_back;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "strictly increasing");
    const uint32_t on_spawn[] = {0, 5};
    t.nkf = 1;
    t.kf = on_spawn;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "must land on a TICK");
    const uint32_t mid_op[] = {0, 7};
    t.kf = mid_op;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "does not land on an op");
    const uint32_t wrong_tick[] = {6, 30};
    t.kf = wrong_tick;
    expect(check(&t, &ops, 0), DG_E_MALFORMED, "TICK of another tick");
    const uint32_t past_end[] = {9, 58};
    t.kf = past_end;
    expect(check(&t, &ops, 0), DG_E_RANGE, "inside the OpStream");
    const uint32_t tick_too_big[] = {100, 0};
    t.kf = tick_too_big;
    expect(check(&t, &ops, 0), DG_E_RANGE, "tickCount");
    /* keyframeCount larger than the bytes left */
    t.nkf = 0;
    tb f = tfile_build(&t, &ops);
    f.p[24] = 0xFF;
    f.p[25] = 0xFF;
    dg_error err;
    assert_int_equal(rply_check_bytes(f.p, f.n, 0, &err), DG_E_TRUNCATED);
    tb_free(&f);
    tb_free(&ops);
}

/* ---- op stream ----------------------------------------------------------------------------- */
static void opcode_errors(void **state)
{
    (void)state;
    unsigned bad[] = {12, 13, 15, 16, 100, 255};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb ops = {0};
        op_tick(&ops, 1);
        tb_u8(&ops, bad[i]);
        tb_u32(&ops, 0);
        run r = check_ops(&ops);
        expect(r, DG_E_MALFORMED, "not an RPLY v3 op");
        assert_int_equal(r.err.offset, r.len - 5); /* the opcode's own byte */
        tb_free(&ops);
    }
    assert_null(dg_rply_op_name(12));
    assert_string_equal(dg_rply_op_name(14), "SNAPSHOT");
}

static void tick_errors(void **state)
{
    (void)state;
    tb ops = {0};
    op_tick(&ops, 3);
    op_tick(&ops, 3);
    expect(check_ops(&ops), DG_E_STATE, "does not move past");
    tb_free(&ops);
    op_tick(&ops, 3);
    op_tick(&ops, 2);
    expect(check_ops(&ops), DG_E_STATE, "TICK 2");
    tb_free(&ops);
    /* an op in implicit tick 0, then TICK 0 repeats tick 0 */
    op_spawn(&ops, 1, 0, 0);
    op_tick(&ops, 0);
    expect(check_ops(&ops), DG_E_STATE, NULL);
    tb_free(&ops);
    /* TICK 0 as the very first op is fine; TICK_NEXT then moves to 1 */
    op_tick(&ops, 0);
    op_next(&ops);
    expect(check_ops(&ops), DG_OK, NULL);
    tb_free(&ops);

    /* tick >= tickCount: TICK, TICK_NEXT, and ops of implicit tick 0 with tickCount 0 */
    op_tick(&ops, 100);
    expect(check_ops(&ops), DG_E_RANGE, "tickCount 100");
    tb_free(&ops);
    op_tick(&ops, 99);
    op_next(&ops);
    expect(check_ops(&ops), DG_E_RANGE, "tick 100");
    tb_free(&ops);
    op_spawn(&ops, 1, 0, 0);
    tfile t = tfile_default();
    t.tick_count = 0;
    expect(check(&t, &ops, 0), DG_E_RANGE, "tickCount 0");
    tb_free(&ops);
}

static void string_id_errors(void **state)
{
    (void)state;
    tb ops = {0};
    op_spawn(&ops, 1, 8, 0);
    expect(check_ops(&ops), DG_E_RANGE, "descriptor string id 8");
    tb_free(&ops);

    op_spawn(&ops, 1, 7, 0);
    tb_u8(&ops, 4); tb_u16(&ops, 1); tb_u16(&ops, 9); tb_u8(&ops, 0); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_RANGE, "property name string id 9");
    tb_free(&ops);

    for (unsigned tag = 2; tag <= 5; tag += 3) {
        op_spawn(&ops, 1, 7, 0);
        tb_u8(&ops, 4); tb_u16(&ops, 1); tb_u16(&ops, 0); tb_u8(&ops, tag); tb_u16(&ops, 8);
        expect(check_ops(&ops), DG_E_RANGE, "string id 8");
        tb_free(&ops);
    }

    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 5); tb_u16(&ops, 1); tb_u16(&ops, 50); tb_u8(&ops, 1); tb_u8(&ops, 0); tb_u16(&ops, 256);
    expect(check_ops(&ops), DG_E_RANGE, "animation string id 50");
    tb_free(&ops);

    tb_u8(&ops, 8); tb_u16(&ops, 8); tb_u16(&ops, 0);
    expect(check_ops(&ops), DG_E_RANGE, "event name");
    tb_free(&ops);
    tb_u8(&ops, 8); tb_u16(&ops, 0); tb_u16(&ops, 8);
    expect(check_ops(&ops), DG_E_RANGE, "event payload");
    tb_free(&ops);
    tb_u8(&ops, 9); tb_u16(&ops, 8); tb_u16(&ops, 0);
    expect(check_ops(&ops), DG_E_RANGE, "channel");
    tb_free(&ops);
}

static void entity_errors(void **state)
{
    (void)state;
    tb ops = {0};
    op_spawn(&ops, 0, 0, 0);
    expect(check_ops(&ops), DG_E_STATE, "id 0");
    tb_free(&ops);
    op_spawn(&ops, 4, 0, 0);
    op_spawn(&ops, 4, 0, 0);
    expect(check_ops(&ops), DG_E_STATE, "already live");
    tb_free(&ops);
    op_spawn(&ops, 4, 0, 3);
    expect(check_ops(&ops), DG_E_STATE, "parent 3");
    tb_free(&ops);
    op_spawn(&ops, 4, 0, 4);
    expect(check_ops(&ops), DG_E_STATE, "parent 4");
    tb_free(&ops);
    /* parent live: fine; despawned parent's id becomes free again */
    op_spawn(&ops, 3, 0, 0);
    op_spawn(&ops, 4, 0, 3);
    op_despawn(&ops, 3);
    op_spawn(&ops, 3, 1, 0);
    expect(check_ops(&ops), DG_OK, NULL);
    tb_free(&ops);

    /* every entity op on an id that is not live (never spawned, or despawned) */
    for (int which = 0; which < 8; which++) {
        op_spawn(&ops, 2, 0, 0);
        op_despawn(&ops, 2);
        switch (which) {
        case 0: op_despawn(&ops, 2); break;
        case 1: op_xform_yaw(&ops, 2); break;
        case 2: tb_u8(&ops, 11); tb_u8(&ops, 2); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); break;
        case 3: tb_u8(&ops, 4); tb_u16(&ops, 2); tb_u16(&ops, 0); tb_u8(&ops, 0); tb_u8(&ops, 1); break;
        case 4: tb_u8(&ops, 5); tb_u16(&ops, 2); tb_u16(&ops, 0); tb_u8(&ops, 1); tb_u8(&ops, 0); tb_u16(&ops, 256); break;
        case 5: tb_u8(&ops, 6); tb_u16(&ops, 2); tb_u8(&ops, 1); tb_u8(&ops, 0); break;
        case 6: tb_u8(&ops, 7); tb_u16(&ops, 2); tb_u8(&ops, 1); tb_u16(&ops, 0); break;
        case 7: tb_u8(&ops, 4); tb_u16(&ops, 0); tb_u16(&ops, 0); tb_u8(&ops, 0); tb_u8(&ops, 1); break;
        }
        expect(check_ops(&ops), DG_E_STATE, "is not live");
        tb_free(&ops);
    }
}

static void xform_errors(void **state)
{
    (void)state;
    unsigned bad[] = {0, 6, 7, 8, 9, 0x81};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb ops = {0};
        op_spawn(&ops, 1, 0, 0);
        tb_u8(&ops, 3); tb_u16(&ops, 1); tb_u8(&ops, bad[i]);
        for (int k = 0; k < 20; k++)
            tb_u8(&ops, 0);
        run r = check_ops(&ops);
        expect(r, DG_E_MALFORMED, "mask");
        assert_int_equal(r.err.offset, r.len - 21);
        tb_free(&ops);
    }
    /* every legal mask reads, with the right length */
    unsigned good[] = {1, 2, 3, 4, 5};
    for (size_t i = 0; i < 5; i++) {
        tb ops = {0};
        op_spawn(&ops, 1, 0, 0);
        tb_u8(&ops, 3); tb_u16(&ops, 1); tb_u8(&ops, good[i]);
        int n = ((good[i] & 1) ? 12 : 0) + ((good[i] & 2) ? 6 : 0) + ((good[i] & 4) ? 2 : 0);
        for (int k = 0; k < n; k++)
            tb_u8(&ops, 0);
        expect(check_ops(&ops), DG_OK, NULL);
        ops.n--; /* one byte short */
        expect(check_ops(&ops), DG_E_TRUNCATED, NULL);
        tb_free(&ops);
    }
}

static void xform_d_errors(void **state)
{
    (void)state;
    unsigned bad[] = {0, 3, 12, 15, 16, 0x21};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb ops = {0};
        op_spawn(&ops, 1, 0, 0);
        op_xform_yaw(&ops, 1);
        tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, bad[i]);
        for (int k = 0; k < 16; k++)
            tb_u8(&ops, 0);
        expect(check_ops(&ops), DG_E_MALFORMED, "mask");
        tb_free(&ops);
    }
    tb ops = {0};
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "before any XFORM");
    tb_free(&ops);

    op_spawn(&ops, 1, 0, 0);
    op_xform_tilt(&ops, 1);
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 4); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "yaw delta on a tilted entity");
    tb_free(&ops);

    op_spawn(&ops, 1, 0, 0);
    op_xform_yaw(&ops, 1);
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 8); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "axis-angle delta on a yaw-only entity");
    tb_free(&ops);

    /* an XFORM switching the mode moves the entity to the other delta kind */
    op_spawn(&ops, 1, 0, 0);
    op_xform_yaw(&ops, 1);
    op_xform_tilt(&ops, 1);
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 8); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_OK, NULL);
    tb_free(&ops);

    /* long id form (0xFF + u16) for ids >= 255, and a truncated long id */
    op_spawn(&ops, 300, 0, 0);
    op_xform_yaw(&ops, 300);
    tb_u8(&ops, 11); tb_u8(&ops, 0xFF); tb_u16(&ops, 300); tb_u8(&ops, 2 | 4);
    tb_u16(&ops, 1000); tb_u16(&ops, (unsigned)-1000 & 0xFFFF); tb_u16(&ops, 0); tb_u8(&ops, 0x80);
    expect(check_ops(&ops), DG_OK, NULL);
    tb_free(&ops);
    op_spawn(&ops, 300, 0, 0);
    tb_u8(&ops, 11); tb_u8(&ops, 0xFF); tb_u8(&ops, 0x2C);
    expect(check_ops(&ops), DG_E_TRUNCATED, NULL);
    tb_free(&ops);
    /* id 300 written in the short form is id 44, which is not live */
    op_spawn(&ops, 300, 0, 0);
    op_xform_yaw(&ops, 300);
    tb_u8(&ops, 11); tb_u8(&ops, 44); tb_u8(&ops, 4); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "entity 44");
    tb_free(&ops);
    /* each payload one byte short */
    unsigned masks[] = {1, 2, 4, 8, 5, 10};
    for (size_t i = 0; i < 6; i++) {
        op_spawn(&ops, 1, 0, 0);
        if (masks[i] & 8)
            op_xform_tilt(&ops, 1);
        else
            op_xform_yaw(&ops, 1);
        tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, masks[i]);
        int n = ((masks[i] & 1) ? 3 : 0) + ((masks[i] & 2) ? 6 : 0) + ((masks[i] & 4) ? 1 : 0) +
                ((masks[i] & 8) ? 3 : 0);
        for (int k = 0; k < n; k++)
            tb_u8(&ops, 1);
        expect(check_ops(&ops), DG_OK, NULL);
        ops.n--;
        expect(check_ops(&ops), DG_E_TRUNCATED, "XFORM_D");
        tb_free(&ops);
    }
}

static void xform_d_needs_components(void **state)
{
    (void)state;
    tb ops = {0};
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 3); tb_u16(&ops, 1); tb_u8(&ops, 4); tb_u16(&ops, 5); /* yaw only, no position */
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "no position");
    tb_free(&ops);
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 3); tb_u16(&ops, 1); tb_u8(&ops, 1);
    tb_f32(&ops, 0); tb_f32(&ops, 0); tb_f32(&ops, 0); /* position only */
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 4); tb_u8(&ops, 1);
    expect(check_ops(&ops), DG_E_STATE, "no rotation");
    tb_free(&ops);
}

static void prop_errors(void **state)
{
    (void)state;
    tb ops = {0};
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 4); tb_u16(&ops, 1); tb_u16(&ops, 0); tb_u8(&ops, 0); tb_u8(&ops, 2);
    run r = check_ops(&ops);
    expect(r, DG_E_RANGE, "0 or 1");
    assert_int_equal(r.err.offset, r.len - 1);
    tb_free(&ops);
    for (unsigned tag = 6; tag < 260; tag += 60) {
        op_spawn(&ops, 1, 0, 0);
        tb_u8(&ops, 4); tb_u16(&ops, 1); tb_u16(&ops, 0); tb_u8(&ops, tag & 0xFF);
        for (int k = 0; k < 12; k++)
            tb_u8(&ops, 0);
        expect(check_ops(&ops), DG_E_RANGE, "typeTag");
        tb_free(&ops);
    }
    /* each tag's value one byte short */
    const int sizes[6] = {1, 8, 2, 3, 12, 2};
    for (unsigned tag = 0; tag < 6; tag++) {
        op_spawn(&ops, 1, 0, 0);
        tb_u8(&ops, 4); tb_u16(&ops, 1); tb_u16(&ops, 0); tb_u8(&ops, tag);
        for (int k = 0; k < sizes[tag]; k++)
            tb_u8(&ops, 0);
        expect(check_ops(&ops), DG_OK, NULL);
        ops.n--;
        expect(check_ops(&ops), DG_E_TRUNCATED, "PROP");
        tb_free(&ops);
    }
}

static void fixed_ops_truncated(void **state)
{
    (void)state;
    /* every fixed-size op, complete then one byte short */
    for (int which = 0; which < 9; which++) {
        tb ops = {0};
        op_spawn(&ops, 1, 0, 0);
        size_t before = ops.n;
        switch (which) {
        case 0: op_tick(&ops, 1); break;
        case 1: op_spawn(&ops, 2, 0, 1); break;
        case 2: op_despawn(&ops, 1); break;
        case 3: tb_u8(&ops, 5); tb_u16(&ops, 1); tb_u16(&ops, 0); tb_u8(&ops, 1); tb_u8(&ops, 0); tb_u16(&ops, 256); break;
        case 4: tb_u8(&ops, 6); tb_u16(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 0); break;
        case 5: tb_u8(&ops, 7); tb_u16(&ops, 1); tb_u8(&ops, 1); tb_u16(&ops, 0); break;
        case 6: tb_u8(&ops, 8); tb_u16(&ops, 0); tb_u16(&ops, 1); break;
        case 7: tb_u8(&ops, 9); tb_u16(&ops, 0); tb_u16(&ops, 3); tb_u8(&ops, 1); tb_u8(&ops, 2); tb_u8(&ops, 3); break;
        case 8: tb_u8(&ops, 14); tb_u16(&ops, 1); tb_u32(&ops, 0); break;
        }
        if (which != 8)
            expect(check_ops(&ops), DG_OK, NULL);
        for (size_t cut = before + 1; cut < ops.n; cut++) {
            tb part = {0};
            tb_put(&part, ops.p, cut);
            expect(check_ops(&part), DG_E_TRUNCATED, NULL);
            tb_free(&part);
        }
        tb_free(&ops);
    }
}

/* ---- snapshots ----------------------------------------------------------------------------- */
static tb encode_sample(void)
{
    sample_snapshot x;
    sample_snapshot_init(&x);
    size_t n = 0;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_snapshot_encode(&x.s, NULL, 0, &n, &err), DG_OK);
    tb b = {0};
    tb_put(&b, NULL, 0);
    b.p = malloc(n);
    b.cap = n;
    assert_int_equal(dg_rply_snapshot_encode(&x.s, b.p, n, &b.n, &err), DG_OK);
    return b;
}

static run check_snapshot(const uint8_t *p, size_t n)
{
    tb ops = {0};
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 14); tb_u16(&ops, 1); tb_u32(&ops, (uint32_t)n);
    tb_put(&ops, p, n);
    run r = check_ops(&ops);
    tb_free(&ops);
    return r;
}

/* A minimal non-model snapshot with given parts/joints bytes appended by the caller. */
static void snap_head(tb *b, unsigned version, unsigned is_model)
{
    tb_u8(b, version); tb_u8(b, is_model); tb_str(b, "n"); tb_str(b, "k"); tb_str(b, "r");
    tb_u16(b, 1); tb_str(b, "union"); /* one union key */
    tb_u16(b, 0);                     /* no mesh ids */
}
static void snap_part(tb *b, unsigned kind, unsigned union_index)
{
    tb_u8(b, kind);
    if (kind == 5)
        tb_u16(b, union_index);
    tb_str(b, "p"); tb_str(b, "");
    for (int i = 0; i < 3; i++) tb_f32(b, 1);
    for (int i = 0; i < 3; i++) tb_u16(b, 0);
    for (int i = 0; i < 3; i++) tb_f32(b, 1);
    tb_u8(b, 1); tb_u8(b, 2); tb_u8(b, 3); tb_u16(b, 256); tb_u8(b, 0); tb_u8(b, 0); tb_u8(b, 1);
    for (int i = 0; i < 6; i++) tb_u8(b, 0);
    if (kind == 1) {
        tb_str(b, "m"); tb_str(b, "t");
        for (int i = 0; i < 3; i++) tb_f32(b, 1);
    }
}
static void snap_part_plain_tail(tb *b) { tb_u8(b, 0); tb_u8(b, 0); tb_u8(b, 0); tb_u8(b, 0); }

static void snapshot_errors(void **state)
{
    (void)state;
    tb s = encode_sample();
    run r = check_snapshot(s.p, s.n);
    expect(r, DG_OK, NULL);
    /* over-run (byteLen too small: the parser runs past it) and under-run (bytes left over) */
    expect(check_snapshot(s.p, s.n - 1), DG_E_TRUNCATED, "snapshot");
    tb longer = {0};
    tb_put(&longer, s.p, s.n);
    tb_u8(&longer, 0);
    expect(check_snapshot(longer.p, longer.n), DG_E_MALFORMED, "before its byteLen");
    tb_free(&longer);
    /* SNAPSHOT byteLen beyond the op stream */
    tb ops = {0};
    op_spawn(&ops, 1, 0, 0);
    tb_u8(&ops, 14); tb_u16(&ops, 1); tb_u32(&ops, 0xFFFFFFFFu);
    expect(check_ops(&ops), DG_E_TRUNCATED, NULL);
    tb_free(&ops);
    tb_free(&s);

    /* version */
    tb b = {0};
    snap_head(&b, 9, 0); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_VERSION, "snapshot version 9");
    tb_free(&b);
    /* isModel flag and the rig flags must be 0 or 1 */
    snap_head(&b, 10, 2); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "isModel");
    tb_free(&b);
    snap_head(&b, 10, 1); tb_u8(&b, 3); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "hasHumanoid");
    tb_free(&b);
    snap_head(&b, 10, 1); tb_u8(&b, 1); tb_u8(&b, 0); tb_str(&b, ""); tb_str(&b, ""); tb_str(&b, "");
    tb_u8(&b, 2); tb_u8(&b, 0); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "hasBodyColors");
    tb_free(&b);
    /* characterMeshCount beyond the bytes left */
    snap_head(&b, 10, 1); tb_u8(&b, 1); tb_u8(&b, 0); tb_str(&b, ""); tb_str(&b, ""); tb_str(&b, "");
    tb_u8(&b, 0); tb_u8(&b, 200); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_TRUNCATED, "characterMeshCount");
    tb_free(&b);
    /* invalid UTF-8 in a snapshot string */
    tb_u8(&b, 10); tb_u8(&b, 0); tb_u16(&b, 2); tb_u8(&b, 0xED); tb_u8(&b, 0xA0); /* surrogate */
    tb_str(&b, ""); tb_str(&b, ""); tb_u16(&b, 0); tb_u16(&b, 0); tb_u16(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_UTF8, NULL);
    tb_free(&b);
    /* counts that cannot fit */
    snap_head(&b, 10, 0); tb_u16(&b, 60000);
    expect(check_snapshot(b.p, b.n), DG_E_TRUNCATED, "part count 60000");
    tb_free(&b);
    tb_u8(&b, 10); tb_u8(&b, 0); tb_str(&b, ""); tb_str(&b, ""); tb_str(&b, ""); tb_u16(&b, 9);
    expect(check_snapshot(b.p, b.n), DG_E_TRUNCATED, "unionCount 9");
    tb_free(&b);

    /* part kind, union key index */
    snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 6, 0); snap_part_plain_tail(&b); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "part kind 6");
    tb_free(&b);
    snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 5, 1); snap_part_plain_tail(&b); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "unionKeyIndex 1");
    tb_free(&b);
    for (unsigned kind = 0; kind <= 5; kind++) {
        snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, kind, 0); snap_part_plain_tail(&b); tb_u16(&b, 0);
        expect(check_snapshot(b.p, b.n), DG_OK, NULL);
        tb_free(&b);
    }
    /* optional blocks' present flags */
    snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 0, 0); tb_u8(&b, 2); tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "SpecialMesh");
    tb_free(&b);
    snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 0, 0); tb_u8(&b, 0); tb_u8(&b, 7); tb_u8(&b, 0); tb_u8(&b, 0); tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "SurfaceAppearance");
    tb_free(&b);
    /* decals: kind and face */
    for (int which = 0; which < 2; which++) {
        snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 0, 0); tb_u8(&b, 0); tb_u8(&b, 0);
        tb_u8(&b, 1); tb_u8(&b, which == 0 ? 2 : 0); tb_u8(&b, which == 1 ? 6 : 0); tb_str(&b, "t");
        tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 0);
        tb_u8(&b, 0); tb_u16(&b, 0);
        expect(check_snapshot(b.p, b.n), DG_E_RANGE, which == 0 ? "decal kind 2" : "face 6");
        tb_free(&b);
    }
    /* effects: class, parent index, property tag */
    struct { unsigned cls0, cls1, parent1, tag; const char *needle; } ecases[] = {
        {0, 1, 0, 0, "effect class 0"},
        {12, 1, 0, 0, "effect class 12"},
        {1, 2, 2, 0, "parentIndex 2"},     /* itself, not earlier */
        {2, 3, 1, 0, "parentIndex 1"},     /* earlier, but not an Attachment */
        {1, 2, 1, 11, "tag 11"},
        {1, 2, 1, 0, NULL},
    };
    for (size_t i = 0; i < sizeof ecases / sizeof ecases[0]; i++) {
        snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 0, 0); tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 0);
        tb_u8(&b, 2);
        tb_u8(&b, ecases[i].cls0); tb_u8(&b, 0); tb_str(&b, "a"); tb_u8(&b, 0);
        tb_u8(&b, ecases[i].cls1); tb_u8(&b, ecases[i].parent1); tb_str(&b, "b"); tb_u8(&b, 1);
        tb_u8(&b, 0); tb_u8(&b, ecases[i].tag); tb_u8(&b, 1);
        tb_u16(&b, 0);
        expect(check_snapshot(b.p, b.n), ecases[i].needle ? DG_E_RANGE : DG_OK, ecases[i].needle);
        tb_free(&b);
    }
    /* joints: kind and 1-based indices (0 and count+1 are out of range) */
    struct { unsigned kind, holder, p0, p1; dg_status st; const char *needle; } jcases[] = {
        {0, 1, 1, 1, DG_E_RANGE, "joint kind 0"}, {5, 1, 1, 1, DG_E_RANGE, "joint kind 5"},
        {1, 0, 1, 1, DG_E_RANGE, "holderIndex 0"}, {2, 3, 1, 1, DG_E_RANGE, "holderIndex 3"},
        {1, 1, 0, 1, DG_E_RANGE, "part0Index 0"}, {2, 1, 1, 3, DG_E_RANGE, "part1Index 3"},
        {3, 1, 3, 1, DG_E_RANGE, "part0Index 3"}, {4, 1, 1, 0, DG_E_RANGE, "part1Index 0"},
        {1, 2, 2, 1, DG_OK, NULL}, {4, 2, 1, 2, DG_OK, NULL},
    };
    for (size_t i = 0; i < sizeof jcases / sizeof jcases[0]; i++) {
        snap_head(&b, 10, 0); tb_u16(&b, 2);
        snap_part(&b, 0, 0); snap_part_plain_tail(&b);
        snap_part(&b, 2, 0); snap_part_plain_tail(&b);
        tb_u16(&b, 1);
        tb_u8(&b, jcases[i].kind); tb_str(&b, "j"); tb_u16(&b, jcases[i].holder);
        if (jcases[i].kind == 3 || jcases[i].kind == 4) {
            tb_u16(&b, jcases[i].p0); tb_str(&b, "a0"); tb_u16(&b, jcases[i].p1); tb_str(&b, "a1");
        } else {
            tb_u16(&b, jcases[i].p0); tb_u16(&b, jcases[i].p1);
            for (int k = 0; k < 2; k++) {
                for (int q = 0; q < 3; q++) tb_f32(&b, 0);
                for (int q = 0; q < 3; q++) tb_u16(&b, 0);
            }
        }
        expect(check_snapshot(b.p, b.n), jcases[i].st, jcases[i].needle);
        tb_free(&b);
    }
    /* bool effect value must be 0 or 1 */
    snap_head(&b, 10, 0); tb_u16(&b, 1); snap_part(&b, 0, 0); tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 0);
    tb_u8(&b, 1); tb_u8(&b, 6); tb_u8(&b, 0); tb_str(&b, "f"); tb_u8(&b, 1); tb_u8(&b, 0); tb_u8(&b, 0); tb_u8(&b, 9);
    tb_u16(&b, 0);
    expect(check_snapshot(b.p, b.n), DG_E_RANGE, "0 or 1");
    tb_free(&b);
}

static void error_names_op_and_offset(void **state)
{
    (void)state;
    tb ops = {0};
    op_tick(&ops, 1);
    op_spawn(&ops, 1, 0, 0);
    op_xform_yaw(&ops, 1);
    tb_u8(&ops, 11); tb_u8(&ops, 1); tb_u8(&ops, 8); tb_u8(&ops, 1); tb_u8(&ops, 1); tb_u8(&ops, 1);
    run r = check_ops(&ops);
    char text[600];
    dg_error_format(&r.err, text, sizeof text);
    assert_non_null(strstr(text, "XFORM_D"));
    assert_non_null(strstr(text, "stream offset 30"));
    assert_int_equal(r.err.offset, r.len - 6);
    tb_free(&ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_errors),         cmocka_unit_test(table_errors),
        cmocka_unit_test(keyframe_errors),       cmocka_unit_test(opcode_errors),
        cmocka_unit_test(tick_errors),           cmocka_unit_test(string_id_errors),
        cmocka_unit_test(entity_errors),         cmocka_unit_test(xform_errors),
        cmocka_unit_test(xform_d_errors),        cmocka_unit_test(xform_d_needs_components),
        cmocka_unit_test(prop_errors),           cmocka_unit_test(fixed_ops_truncated),
        cmocka_unit_test(snapshot_errors),       cmocka_unit_test(error_names_op_and_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
