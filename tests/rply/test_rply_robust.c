/* tests/rply/test_rply_robust.c — hostile input: truncation at every offset (file and op stream)
 * and every single-bit flip of a small file. Each must give a clean error or a valid read, never a
 * crash, leak or sanitizer report (this suite runs under ASan+UBSan in the asan preset). */
#include <stdio.h>

#include "harness/rply_dump.h"
#include "rply_sample_file.h"

/* Everything a reader can do with a buffer; returns whether the full validation passed. */
static bool exercise(const uint8_t *p, size_t n, FILE *sink)
{
    dg_error err;
    dg_error_clear(&err);
    dg_rply_file f;
    dg_status st = dg_rply_file_open(&f, p, n, 0, &err);
    if (st == DG_OK)
        st = dg_rply_validate(&f, &err);
    if (st != DG_OK) {
        assert_true(err.code != DG_OK);
        assert_true(err.offset == DG_OFFSET_NONE || err.offset <= n);
        assert_true(err.msg[0] != '\0');
    }
    if (f.ops && f.hdr.tick_count > 0) {
        dg_rply_player *pl;
        dg_error e2;
        dg_error_clear(&e2);
        assert_non_null(pl = dg_rply_player_new(&f, 0, &e2));
        uint32_t last = f.hdr.tick_count - 1;
        if (last > 64)
            last = 64;
        dg_status a = dg_rply_player_advance(pl, last, &e2);
        if (st == DG_OK)
            assert_int_equal(a, DG_OK);
        dg_error_clear(&e2);
        (void)dg_rply_player_seek(pl, 0, &e2);
        dg_rply_player_free(pl);
    }
    dg_rply_file_close(&f);
    /* the dump: without --partial nothing is printed for a bad file */
    rewind(sink);
    dg_error_clear(&err);
    int r = dg_rply_dump_json(p, n, sink, false, 0, &err);
    assert_int_equal(r != 0, st != DG_OK);
    if (r != 0)
        assert_int_equal(ftell(sink), 0);
    rewind(sink);
    dg_error_clear(&err);
    int r2 = dg_rply_dump_json(p, n, sink, true, 0, &err);
    assert_int_equal(r2 != 0, st != DG_OK);
    return st == DG_OK;
}

static void truncation_everywhere(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = sample_file(&len, true);
    FILE *sink = tmpfile();
    assert_true(exercise(buf, len, sink));
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, buf, n);
        assert_false(exercise(cut, n, sink));
        free(cut);
    }
    /* the op stream cut at every offset with opBytes rewritten to match: op-level truncation */
    dg_rply_file f;
    dg_error err;
    assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_OK);
    size_t ops_at = (size_t)f.ops_at;
    dg_rply_file_close(&f);
    int valid = 0;
    for (size_t n = ops_at; n < len; n++) {
        uint8_t *cut = malloc(n);
        memcpy(cut, buf, n);
        uint32_t ob = (uint32_t)(n - ops_at);
        cut[26] = (uint8_t)ob;
        cut[27] = (uint8_t)(ob >> 8);
        cut[28] = (uint8_t)(ob >> 16);
        cut[29] = (uint8_t)(ob >> 24);
        valid += exercise(cut, n, sink);
        free(cut);
    }
    /* cuts on op boundaries before the last keyframe fail (its offset leaves the stream); a few
     * after it read as valid shorter files */
    assert_true(valid > 0);
    assert_true(valid < (int)(len - ops_at) / 4);
    fclose(sink);
    free(buf);
}

static void every_bit_flip(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = sample_file(&len, false);
    FILE *sink = tmpfile();
    int valid = 0, total = 0;
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            valid += exercise(buf, len, sink);
            total++;
            buf[i] ^= (uint8_t)(1u << bit);
        }
    assert_true(exercise(buf, len, sink));
    /* flips inside float payloads and some ids stay valid; most flips are caught */
    assert_true(valid > 0);
    assert_true(valid < total);
    fprintf(stderr, "bit flips: %d of %d still valid (%zu-byte file)\n", valid, total, len);
    fclose(sink);
    free(buf);
}

/* The snapshot parser alone: every truncation and bit flip of the full sample snapshot. */
static void snapshot_flips(void **state)
{
    (void)state;
    sample_snapshot x;
    sample_snapshot_init(&x);
    size_t n;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_snapshot_encode(&x.s, NULL, 0, &n, &err), DG_OK);
    uint8_t *b = malloc(n);
    assert_int_equal(dg_rply_snapshot_encode(&x.s, b, n, &n, &err), DG_OK);
    for (size_t cut = 0; cut < n; cut++) {
        dg_error_clear(&err);
        assert_int_not_equal(dg_rply_snapshot_check(b, cut, 0, &err), DG_OK);
    }
    int valid = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1u << bit);
            dg_rply_snapshot *d;
            dg_error_clear(&err);
            dg_status st = dg_rply_snapshot_decode(b, n, 0, &d, &err);
            dg_error_clear(&err);
            assert_int_equal(st, dg_rply_snapshot_check(b, n, 0, &err));
            if (st == DG_OK) {
                valid++;
                size_t n2;
                dg_error_clear(&err);
                assert_int_equal(dg_rply_snapshot_encode(d, NULL, 0, &n2, &err), DG_OK);
                assert_int_equal(n2, n);
            }
            dg_rply_snapshot_free(d);
            b[i] ^= (uint8_t)(1u << bit);
        }
    assert_true(valid > 0);
    free(b);
}

/* Random op streams behind a valid header, built op by op with plausible payloads (small ids,
 * string ids around stringCount, any mask, short payloads now and then) so that the decoder and
 * the state rules are reached deep, not only the opcode check. */
static uint64_t rs_x = 0xC0FFEE;
static uint32_t rs(uint32_t n)
{
    rs_x ^= rs_x << 13;
    rs_x ^= rs_x >> 7;
    rs_x ^= rs_x << 17;
    return (uint32_t)(rs_x >> 20) % n;
}

static void random_op(tb *b)
{
    unsigned id = 1 + rs(4);
    switch (rs(14)) {
    case 0: tb_u8(b, 0); tb_u32(b, rs(40)); break;
    case 1: tb_u8(b, 10); break;
    case 2: case 3: tb_u8(b, 1); tb_u16(b, id); tb_u16(b, rs(9)); tb_u16(b, rs(3) ? 0 : 1 + rs(4)); break;
    case 4: tb_u8(b, 2); tb_u16(b, id); break;
    case 5: case 6: {
        unsigned m = rs(4) ? (rs(2) ? 5 : 3) : rs(9);
        tb_u8(b, 3); tb_u16(b, id); tb_u8(b, m);
        if (m & 1) { tb_f32(b, (float)rs(100)); tb_f32(b, 0); tb_f32(b, -1); }
        if (m & 2) { tb_u16(b, rs(65536)); tb_u16(b, rs(65536)); tb_u16(b, rs(65536)); }
        if (m & 4) tb_u16(b, rs(65536));
        break;
    }
    case 7: case 8: {
        unsigned m = rs(4) ? (rs(2) ? 5 : 9) : rs(17);
        tb_u8(b, 11); tb_u8(b, id); tb_u8(b, m);
        for (unsigned k = 0; k < ((m & 1) ? 3u : 0u) + ((m & 2) ? 6u : 0u) + ((m & 4) ? 1u : 0u) + ((m & 8) ? 3u : 0u); k++)
            tb_u8(b, rs(256));
        break;
    }
    case 9: {
        unsigned tag = rs(7);
        static const unsigned sz[7] = {1, 8, 2, 3, 12, 2, 4};
        tb_u8(b, 4); tb_u16(b, id); tb_u16(b, rs(9)); tb_u8(b, tag);
        for (unsigned k = 0; k < sz[tag]; k++)
            tb_u8(b, tag == 0 ? rs(3) : (tag == 2 || tag == 5) ? (k == 0 ? rs(9) : 0) : rs(256));
        break;
    }
    case 10: tb_u8(b, 5); tb_u16(b, id); tb_u16(b, rs(9)); tb_u8(b, rs(4)); tb_u8(b, 10); tb_u16(b, 256); break;
    case 11: tb_u8(b, 6 + rs(2)); tb_u16(b, id); tb_u8(b, rs(4)); tb_u8(b, 0); tb_u8(b, 1); break;
    case 12: tb_u8(b, 8 + rs(2)); tb_u16(b, rs(9)); tb_u16(b, rs(3)); if (rs(2)) { tb_u8(b, 1); tb_u8(b, 2); } break;
    case 13: {
        static const uint8_t tiny[] = {10, 0, 1, 0, 'n', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        tb_u8(b, 14); tb_u16(b, id); tb_u32(b, sizeof tiny - rs(2)); tb_put(b, tiny, sizeof tiny);
        break;
    }
    }
}

static void random_streams(void **state)
{
    (void)state;
    FILE *sink = tmpfile();
    int valid = 0;
    for (int round = 0; round < 3000; round++) {
        tb ops = {0};
        for (unsigned id = 1; id <= 4; id++)
            if (rs(4)) {
                tb_u8(&ops, 1); tb_u16(&ops, id); tb_u16(&ops, 0); tb_u16(&ops, 0);
            }
        int n = 1 + (int)rs(30);
        for (int k = 0; k < n; k++)
            random_op(&ops);
        if (rs(8) == 0 && ops.n > 2)
            ops.p[rs((uint32_t)ops.n)] ^= (uint8_t)(1u << rs(8));
        tfile t = tfile_default();
        t.tick_count = 1u + rs(60);
        tb f = tfile_build(&t, &ops);
        valid += exercise(f.p, f.n, sink);
        tb_free(&f);
        tb_free(&ops);
    }
    fprintf(stderr, "random streams: %d of 3000 valid\n", valid);
    assert_true(valid > 30);
    fclose(sink);
}

static void player_misuse(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = sample_file(&len, false);
    dg_rply_file f;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_OK);
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, &err));
    assert_int_equal(dg_rply_player_advance(p, 5, &err), DG_OK);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_advance(p, 3, &err), DG_E_USAGE); /* backwards: use seek */
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_advance(p, 8, &err), DG_E_USAGE); /* tickCount is 8 */
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_seek(p, 8, &err), DG_E_USAGE);
    assert_int_equal(dg_rply_state_tick(dg_rply_player_state(p)), 5);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_seek(p, 3, &err), DG_OK);
    assert_int_equal(dg_rply_state_tick(dg_rply_player_state(p)), 3);
    dg_rply_player_free(p);
    dg_rply_file_close(&f);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truncation_everywhere),
        cmocka_unit_test(every_bit_flip),
        cmocka_unit_test(snapshot_flips),
        cmocka_unit_test(random_streams),
        cmocka_unit_test(player_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
