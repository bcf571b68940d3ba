/* tests/codec/test_flrep_encode_paths.c — the tick encoder's builds agree. Where the codec has the
 * encoder's AVX2 build (codec/flrep/flrep_encode.h, the common DELTA record with the three axes in
 * vector lanes) and the CPU runs it, every tick of random worlds is encoded both ways — ctx.fast_avx2
 * set, and cleared (the portable build) — and the two must give the same status, the same bytes and
 * the same tracked world with the same prediction contexts. The worlds mix the common record with
 * everything the vector path hands back: long residuals, rotFull, attribute changes, id gaps past
 * the small table, FULL and REMOVE records, unchanged entities, extreme i32 values, forged
 * prediction contexts, and rotations that are not unit quaternions (the self-check's refusal); and
 * each refusal the self-check can make in a common record (a -32768 component, a rotation past the
 * unit sphere, a pad byte) is made by both builds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "flrep_internal.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    uint64_t x = rng_state;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    return x ^ (x >> 29);
}

static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
static bool one_in(unsigned k) { return rnd() % k == 0; }

/* A change of a few quanta mostly (the common record), sometimes a long one, sometimes anything. */
static int32_t nudge(int32_t v)
{
    if (one_in(200))
        return (int32_t)(uint32_t)rnd();
    if (one_in(300))
        return one_in(2) ? INT32_MAX : INT32_MIN;
    int64_t d = one_in(10) ? rnd_in(-100000, 100000) : rnd_in(-3, 3);
    int64_t r = (int64_t)v + d;
    return r > INT32_MAX || r < INT32_MIN ? v : (int32_t)r;
}

static void random_rot(dg_qentity *q)
{
    q->rot_largest = (uint8_t)rnd_in(0, 3);
    for (int k = 0; k < 3; k++)
        q->rot[k] = (int16_t)rnd_in(-16000, 16000);   /* three of these are a unit quaternion's */
}

static void random_entity(dg_qentity *q, uint32_t id)
{
    memset(q, 0, sizeof *q);
    q->id = id;
    q->type_index = (uint16_t)rnd_in(0, 3);
    q->faction_index = (uint16_t)rnd_in(0, 2);
    q->health = (uint16_t)rnd_in(0, 10000);
    for (int k = 0; k < 3; k++) {
        q->pos[k] = (int32_t)rnd_in(-1000000, 1000000);
        q->vel[k] = (int32_t)rnd_in(-5000, 5000);
    }
    random_rot(q);
}

/* The next tick's world from this one: most entities move a little, some stay, some change in ways
 * the common record does not cover, a few leave and a few arrive (some far past the last id). */
static size_t next_world(const dg_qentity *now, size_t n, dg_qentity *next, size_t cap, uint32_t rate)
{
    size_t m = 0;
    uint32_t last = 0;
    for (size_t i = 0; i < n && m < cap; i++) {
        if (one_in(60))
            continue;   /* left: REMOVE */
        dg_qentity q = now[i];
        bool at_limit = q.rot[0] == 32767 && q.rot[1] == 32767 && q.rot[2] == 0;
        if (at_limit) {
            q.rot[2] = 1;   /* one quantum past the unit sphere, predicted by a forged drot: the self-check refuses */
        } else if (!one_in(8)) {   /* moved, near where the predictor says */
            for (int k = 0; k < 3; k++) {
                q.vel[k] = nudge(q.vel[k]);
                int64_t p = (int64_t)q.pos[k] + 2 * (int64_t)q.vel[k] / rate + rnd_in(-2, 2);
                q.pos[k] = p > INT32_MAX || p < INT32_MIN ? nudge(q.pos[k]) : (int32_t)p;
                q.rot[k] = (int16_t)(q.rot[k] + rnd_in(-2, 2));
            }
        }
        if (one_in(3000))
            q.rot[0] = 32767, q.rot[1] = 32767, q.rot[2] = 0;   /* on the unit sphere's limit: valid */
        if (one_in(40))
            random_rot(&q);   /* rotLargest may change: rotFull */
        if (one_in(40))
            q.health = (uint16_t)rnd_in(0, 10000);
        if (one_in(80))
            q.type_index = (uint16_t)rnd_in(0, 3);
        if (one_in(80))
            q.flags = (uint16_t)rnd();
        if (one_in(5000))
            q.rot[0] = 32767, q.rot[1] = 32767;   /* not a unit quaternion, a long residual: refused */
        next[m++] = q;
        last = q.id;
        if (one_in(50) && m < cap && (i + 1 == n || now[i + 1].id > last + 1)) {
            random_entity(&next[m++], last + 1);   /* arrived: FULL */
            last++;
        }
    }
    for (int k = 0; k < 3 && m < cap; k++) {
        uint32_t id = last + 1 + (uint32_t)(one_in(2) ? rnd_in(0, 3) : rnd_in(100, 1000));
        if (id <= last)
            break;
        random_entity(&next[m++], id);
        last = id;
    }
    return m;
}

/* Forged prediction contexts, the same in both worlds: any a decoder could have (dv within the
 * change of two i32 velocities, drot within that of two components), so residuals of every size. */
static void forge_contexts(flrep_world *a, flrep_world *b)
{
    for (size_t i = 0; i < a->n; i++) {
        const int16_t *rot = a->ents[i].rot;
        if (rot[0] == 32767 && rot[1] == 32767 && rot[2] == 0) {   /* next_world moves it to (.., .., 1) */
            a->pred[i].drot[0] = a->pred[i].drot[1] = 0;
            a->pred[i].drot[2] = 1;
            b->pred[i] = a->pred[i];
            continue;
        }
        if (!one_in(20))
            continue;
        for (int k = 0; k < 3; k++) {
            a->pred[i].dv[k] = rnd_in(-(INT64_C(1) << 32), INT64_C(1) << 32);
            a->pred[i].drot[k] = (int32_t)rnd_in(-65534, 65534);
        }
        b->pred[i] = a->pred[i];
    }
}

static void check_builds_agree(uint32_t rate, uint64_t seed, int ticks)
{
    rng_state = seed;
    flrep_tick_ctx fast, portable;
    dg_flrep__tick_ctx_init(&fast, rate, NULL, NULL);
    dg_flrep__tick_ctx_init(&portable, rate, NULL, NULL);
    portable.fast_avx2 = false;
    flrep_world wf = {0}, wp = {0}, nf = {0}, np = {0};
    dg_buf of, op, bf, bp;
    dg_buf_init(&of), dg_buf_init(&op), dg_buf_init(&bf), dg_buf_init(&bp);
    enum { CAP = 600 };
    dg_qentity *cur = calloc(CAP, sizeof *cur), *nxt = calloc(CAP, sizeof *nxt);
    assert_non_null(cur);
    assert_non_null(nxt);
    size_t n = 0;
    for (uint32_t id = 1; n < 300; id += one_in(4) ? 2 : 1)
        random_entity(&cur[n++], id);
    int refused = 0;
    for (int t = 0; t < ticks; t++) {
        for (size_t i = 1; i < n; i++)
            assert_true(cur[i].id > cur[i - 1].id);   /* dg_flrep__encode_tick's precondition */
        bool keyframe = t % 50 == 0;
        dg_buf_reset(&of), dg_buf_reset(&op);
        dg_status sf = dg_flrep__encode_tick(&of, (uint64_t)t, keyframe, &fast, &wf, &nf, cur, n, NULL, 0, &bf, NULL);
        dg_status sp = dg_flrep__encode_tick(&op, (uint64_t)t, keyframe, &portable, &wp, &np, cur, n, NULL, 0, &bp, NULL);
        if (sf != sp || of.len != op.len || memcmp(of.p, op.p, of.len) != 0)
            fail_msg("rate %u seed %llu tick %d: the builds encode differently (status %d vs %d, %zu vs %zu bytes)",
                     rate, (unsigned long long)seed, t, sf, sp, of.len, op.len);
        refused += sf != DG_OK;
        assert_int_equal(wf.n, wp.n);
        if (wf.n && (memcmp(wf.ents, wp.ents, wf.n * sizeof *wf.ents) != 0 ||
                     memcmp(wf.pred, wp.pred, wf.n * sizeof *wf.pred) != 0))
            fail_msg("rate %u seed %llu tick %d: the builds track different worlds", rate, (unsigned long long)seed, t);
        if (sf == DG_OK)
            forge_contexts(&wf, &wp);
        size_t m = next_world(sf == DG_OK ? cur : wf.ents, sf == DG_OK ? n : wf.n, nxt, CAP, rate);
        dg_qentity *swap = cur;
        cur = nxt, nxt = swap;
        n = m;
    }
    assert_true(refused > 0);   /* the self-check's refusal was compared too */
    free(cur), free(nxt);
    dg_buf_free(&of), dg_buf_free(&op), dg_buf_free(&bf), dg_buf_free(&bp);
    dg_flrep__world_free(&wf), dg_flrep__world_free(&wp), dg_flrep__world_free(&nf), dg_flrep__world_free(&np);
}

static void test_encoder_builds_agree_on_random_worlds(void **state)
{
    (void)state;
    flrep_tick_ctx ctx;
    dg_flrep__tick_ctx_init(&ctx, 60, NULL, NULL);
    print_message("encoder builds compared: %s\n", ctx.fast_avx2 ? "AVX2 and portable" : "portable only (no AVX2)");
    static const uint32_t rates[] = {1, 2, 7, 30, 60, 1000, 100000};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            check_builds_agree(rates[r], seed * 7919 + rates[r], 400);
}

/* Both builds side by side on the same ticks: the AVX2 loop (where the CPU runs it) and the portable. */
typedef struct two_builds {
    flrep_tick_ctx fast, portable;
    flrep_world wf, wp, nf, np;
    dg_buf of, op, bf, bp;
} two_builds;

static void two_builds_init(two_builds *tb, uint32_t rate)
{
    memset(tb, 0, sizeof *tb);
    dg_flrep__tick_ctx_init(&tb->fast, rate, NULL, NULL);
    dg_flrep__tick_ctx_init(&tb->portable, rate, NULL, NULL);
    tb->portable.fast_avx2 = false;
    dg_buf_init(&tb->of), dg_buf_init(&tb->op), dg_buf_init(&tb->bf), dg_buf_init(&tb->bp);
}

/* Encodes one tick both ways: both succeed with the same bytes, the same states and contexts. */
static void two_builds_tick(two_builds *tb, uint64_t t, bool keyframe, const dg_qentity *cur, size_t n)
{
    dg_buf_reset(&tb->of), dg_buf_reset(&tb->op);
    assert_int_equal(dg_flrep__encode_tick(&tb->of, t, keyframe, &tb->fast, &tb->wf, &tb->nf, cur, n, NULL, 0, &tb->bf, NULL),
                     DG_OK);
    assert_int_equal(
        dg_flrep__encode_tick(&tb->op, t, keyframe, &tb->portable, &tb->wp, &tb->np, cur, n, NULL, 0, &tb->bp, NULL), DG_OK);
    assert_int_equal(tb->of.len, tb->op.len);
    assert_memory_equal(tb->of.p, tb->op.p, tb->of.len);
    assert_int_equal(tb->wf.n, n);
    assert_int_equal(tb->wp.n, n);
    assert_memory_equal(tb->wf.ents, tb->wp.ents, n * sizeof *tb->wf.ents);
    assert_memory_equal(tb->wf.pred, tb->wp.pred, n * sizeof *tb->wf.pred);
}

static void two_builds_free(two_builds *tb)
{
    dg_buf_free(&tb->of), dg_buf_free(&tb->op), dg_buf_free(&tb->bf), dg_buf_free(&tb->bp);
    dg_flrep__world_free(&tb->wf), dg_flrep__world_free(&tb->wp), dg_flrep__world_free(&tb->nf),
        dg_flrep__world_free(&tb->np);
}

/* Two worlds of n entities, ids 1..n, every one with proto's fields: *w0 the tick before, *w1 the
 * copy a test changes. */
static void twin_worlds(size_t n, dg_qentity proto, dg_qentity **w0, dg_qentity **w1)
{
    *w0 = calloc(n, sizeof **w0);
    *w1 = calloc(n, sizeof **w1);
    assert_non_null(*w0);
    assert_non_null(*w1);
    for (size_t i = 0; i < n; i++) {
        proto.id = (uint32_t)i + 1;
        (*w0)[i] = (*w1)[i] = proto;
    }
}

static unsigned eg_len(uint64_t v) { return 2 * (63u - (unsigned)__builtin_clzll(v + 1)) + 1; }
static uint64_t zig(int64_t v) { return v < 0 ? (uint64_t)(-2 * v - 1) : (uint64_t)(2 * v); }

/* The common record's residual triples, every value of -5..4 on every axis (zigzags 0..9: the vector
 * path's code triples below 8, its code by code path at 8 and 9), after id gaps of 0..127 (runs of
 * unchanged entities), so that some records fit one 56-bit put and some take two. At 1 Hz with
 * contexts cleared by the keyframe, a residual is what the test adds: vres = dv, pres = dp, rres = dr. */
static void test_encoder_builds_agree_on_every_small_residual(void **state)
{
    (void)state;
    enum { N = 20000 };
    dg_qentity *w0, *w1;
    twin_worlds(N, (dg_qentity){.pos = {1000, -2000, 3000}, .vel = {10, -20, 30}, .rot = {100, -200, 300}}, &w0, &w1);
    rng_state = 12345;
    size_t long_records = 0, fallback_records = 0, changed = 0;
    for (uint32_t i = 0; i < N;) {
        uint32_t gap = (uint32_t)(changed % 128);
        i += gap;   /* unchanged: no record */
        if (i >= N)
            break;
        dg_qentity *q = &w1[i++];
        unsigned bits = eg_len(gap) + 5, small = 1;
        for (int k = 0; k < 3; k++) {
            int64_t dv = rnd_in(-5, 4), dp = rnd_in(-5, 4), dr = rnd_in(-5, 4);
            if (changed % 7 == 0)   /* all nine at the ends of the range now and then */
                dv = dp = dr = (changed / 7) % 2 ? -4 : 3;
            q->vel[k] += (int32_t)dv;
            q->pos[k] += 2 * q->vel[k] + (int32_t)dp;   /* rdiv at 1 Hz: the numerator */
            q->rot[k] = (int16_t)(q->rot[k] + dr);
            bits += eg_len(zig(dv)) + eg_len(zig(dp)) + eg_len(zig(dr));
            small &= zig(dv) < 8 && zig(dp) < 8 && zig(dr) < 8;
        }
        long_records += small && bits > 56;
        fallback_records += !small;
        changed++;
    }
    assert_true(long_records > 0);       /* code triples in two puts */
    assert_true(fallback_records > 0);   /* a zigzag of 8 or 9 */
    two_builds tb;
    two_builds_init(&tb, 1);
    for (int t = 0; t < 2; t++)
        two_builds_tick(&tb, (uint64_t)t, t == 0, t ? w1 : w0, N);
    free(w0), free(w1);
    two_builds_free(&tb);
}

/* A change of one field by one unit is a record in both builds (the AVX2 loop tells unchanged from
 * changed with its own compare of the fields, not same_state's), whichever field it is and after a
 * run of unchanged entities longer than the small gap table (gap >= 128: the general path). The
 * tick header's record count (FORMAT-flrep.md §5.2, bytes 10-11) counts them. */
static void test_encoder_builds_record_every_one_field_change(void **state)
{
    (void)state;
    enum { N = 2000, FIELDS = 9 };
    dg_qentity *w0, *w1;
    twin_worlds(N, (dg_qentity){.pos = {1000, -2000, 3000}, .vel = {60, -120, 180}, .rot = {100, -200, 300}}, &w0, &w1);
    size_t changed = 0;
    for (uint32_t i = 0, k = 0; i < N; k++) {
        dg_qentity *q = &w1[i];
        int f = (int)(k % FIELDS);
        if (f < 3)
            q->pos[f] += 1;
        else if (f < 6)
            q->vel[f - 3] += 1;
        else
            q->rot[f - 6] = (int16_t)(q->rot[f - 6] + 1);
        changed++;
        i += k % 5 == 4 ? 300 : 1 + (uint32_t)(k % 3);   /* now and then 299 unchanged entities between */
    }
    two_builds tb;
    two_builds_init(&tb, 60);
    for (int t = 0; t < 3; t++) {
        two_builds_tick(&tb, (uint64_t)t, t == 0, t == 1 ? w1 : w0, N);   /* tick 2 moves them back */
        assert_int_equal(tb.of.p[10] | tb.of.p[11] << 8, t == 0 ? N : changed);
    }
    free(w0), free(w1);
    two_builds_free(&tb);
}

/* Encodes one tick both ways and returns the status, which must be the same, with the same bytes. */
static dg_status two_builds_try(two_builds *tb, uint64_t t, const dg_qentity *cur, size_t n)
{
    dg_buf_reset(&tb->of), dg_buf_reset(&tb->op);
    dg_status sf = dg_flrep__encode_tick(&tb->of, t, false, &tb->fast, &tb->wf, &tb->nf, cur, n, NULL, 0, &tb->bf, NULL);
    dg_status sp = dg_flrep__encode_tick(&tb->op, t, false, &tb->portable, &tb->wp, &tb->np, cur, n, NULL, 0, &tb->bp, NULL);
    assert_int_equal(sf, sp);
    assert_int_equal(tb->of.len, tb->op.len);
    assert_memory_equal(tb->of.p, tb->op.p, tb->of.len);
    return sf;
}

/* What the self-check refuses in a record the AVX2 loop takes as common (small residuals, rotLargest
 * and attributes unchanged), in one entity among ones that all move a little: a rotation component
 * of -32768 one quantum past -32767, a rotation one quantum outside the unit sphere, a pad byte.
 * Both builds refuse the tick, and take it without the fault (for the sphere: exactly on its limit,
 * 2 * 32767^2, which is valid). */
static void test_encoder_builds_refuse_the_same_common_records(void **state)
{
    (void)state;
    enum { N = 64 };
    static const int16_t start[3][3] = {{-32767, 0, 0}, {32767, 32766, 0}, {100, -200, 300}};
    for (int fault = 0; fault < 3; fault++)
        for (uint32_t at = 0; at < N; at += 13) {
            dg_qentity *w0, *w1;
            twin_worlds(N, (dg_qentity){.pos = {1000, -2000, 3000}, .vel = {10, -20, 30}}, &w0, &w1);
            for (size_t i = 0; i < N; i++)
                memcpy(w0[i].rot, start[fault], sizeof w0[i].rot);
            two_builds tb;
            two_builds_init(&tb, 1);
            two_builds_tick(&tb, 0, true, w0, N);   /* the keyframe: contexts 0 */
            for (size_t i = 0; i < N; i++) {
                w1[i] = w0[i];
                w1[i].vel[0] += 1;   /* every entity a common record */
                w1[i].pos[0] += 2 * w1[i].vel[0];
            }
            dg_qentity good = w1[at], bad = w1[at];
            if (fault == 0) {
                bad.rot[0] = INT16_MIN;            /* residual -1 */
            } else if (fault == 1) {
                good.rot[1] = 32767;               /* on the limit */
                bad.rot[1] = 32767, bad.rot[2] = 1; /* one quantum past it */
            } else {
                bad.pad_ = 1;
            }
            w1[at] = bad;
            assert_int_not_equal(two_builds_try(&tb, 1, w1, N), DG_OK);
            w1[at] = good;
            assert_int_equal(two_builds_try(&tb, 2, w1, N), DG_OK);
            free(w0), free(w1);
            two_builds_free(&tb);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoder_builds_agree_on_random_worlds),
        cmocka_unit_test(test_encoder_builds_agree_on_every_small_residual),
        cmocka_unit_test(test_encoder_builds_record_every_one_field_change),
        cmocka_unit_test(test_encoder_builds_refuse_the_same_common_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
