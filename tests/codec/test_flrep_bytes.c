/* tests/codec/test_flrep_bytes.c — files built byte by byte from docs/FORMAT-flrep.md alone (an
 * independent writer: its own bit packer in flrep_handbits.h, zstd call and XXH3 checks), read by
 * the codec. If the contract page and the code ever disagree, this fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "detgate/flrep.h"
#include "flrep_handbits.h"

typedef struct bytes {
    uint8_t b[8192];
    size_t n;
} bytes;

static void u8(bytes *o, uint8_t v) { o->b[o->n++] = v; }
static void u16(bytes *o, uint16_t v) { u8(o, (uint8_t)v); u8(o, (uint8_t)(v >> 8)); }
static void u32(bytes *o, uint32_t v) { u16(o, (uint16_t)v); u16(o, (uint16_t)(v >> 16)); }
static void u64(bytes *o, uint64_t v) { u32(o, (uint32_t)v); u32(o, (uint32_t)(v >> 32)); }
static void str(bytes *o, const char *s) { u16(o, (uint16_t)strlen(s)); memcpy(o->b + o->n, s, strlen(s)); o->n += strlen(s); }
static void raw(bytes *o, const void *p, size_t n) { memcpy(o->b + o->n, p, n); o->n += n; }

static void preamble(bytes *o)
{
    raw(o, "FLRP", 4);
    u16(o, 1);
    u16(o, 0);
    str(o, "hand 1");
    bytes body = {{0}, 0};
    u32(&body, 30);                     /* tickRateHz */
    double radius = 3389500.0;          /* Mars */
    uint64_t rb;
    memcpy(&rb, &radius, 8);
    u64(&body, rb);
    u64(&body, 42);
    str(&body, "");
    u32(&body, 0);
    u32(&body, 15);
    u32(o, (uint32_t)body.n);
    raw(o, body.b, body.n);
    bytes s = {{0}, 0};
    u16(&s, 1); u16(&s, 3); str(&s, "jet"); str(&s, "Jet"); u8(&s, 1); u8(&s, 0);
    u16(o, 1); u32(o, (uint32_t)s.n); raw(o, s.b, s.n);
    s.n = 0;
    u16(&s, 1); u16(&s, 2); str(&s, "red"); str(&s, "Red");
    u16(o, 2); u32(o, (uint32_t)s.n); raw(o, s.b, s.n);
    s.n = 0;
    u16(&s, 1); u32(&s, 500); u32(&s, 10); str(&s, "Iceman"); u16(&s, 0);
    u16(o, 3); u32(o, (uint32_t)s.n); raw(o, s.b, s.n);
    u16(o, 0);
    u32(o, 0);
}

static void full_record(bits *w, uint64_t gap, int32_t px, int32_t vx, int16_t r0)
{
    beg(w, gap);
    bput(w, 1, 2);                       /* FULL */
    bput(w, 3, 16); bput(w, 2, 16); bput(w, 10000, 16); bput(w, 0x8001, 16);
    bput(w, (uint32_t)px, 32); bput(w, (uint32_t)-7, 32); bput(w, 1u << 30, 32);
    bput(w, (uint32_t)vx, 32); bput(w, 0, 32); bput(w, 0, 32);
    bput(w, 0, 2); bput(w, (uint16_t)r0, 16); bput(w, 0, 16); bput(w, 0, 16);
}

static void tick(bytes *o, uint64_t t, uint16_t flags, uint16_t nrec, uint16_t nev, const bits *w)
{
    u64(o, t);
    u16(o, flags);
    u16(o, nrec);
    u16(o, nev);
    u32(o, (uint32_t)((w->nbits + 7) / 8));
    raw(o, w->b, (w->nbits + 7) / 8);
}

/* Header, sections, one chunk holding `content` (ticks first..last), trailer: FORMAT-flrep.md §3-8. */
static void wrap_chunk(bytes *out, const bytes *content_in, uint64_t first, uint64_t last, uint32_t nticks)
{
    const bytes *pc = content_in;
    memset(out, 0, sizeof *out);
    bytes *fp = out;
    preamble(fp);
    uint64_t data_start = fp->n;
    uint8_t frame[4096];
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t fsize = ZSTD_compress2(cc, frame, sizeof frame, pc->b, pc->n);
    ZSTD_freeCCtx(cc);
    assert_false(ZSTD_isError(fsize));
    size_t hdr_at = fp->n;
    raw(fp, "FLCK", 4);
    u32(fp, nticks);
    u64(fp, first);
    u64(fp, last);
    u32(fp, (uint32_t)fsize);
    u32(fp, (uint32_t)pc->n);
    u32(fp, (uint32_t)XXH3_64bits(fp->b + hdr_at, 32));
    raw(fp, frame, fsize);
    size_t table = fp->n;
    raw(fp, "FLIX", 4);
    u32(fp, 1);
    u64(fp, first);
    u64(fp, last);
    u64(fp, nticks);
    u64(fp, first);
    u64(fp, data_start);
    u64(fp, XXH3_64bits(fp->b + table, fp->n - table));
    u64(fp, table);
}

static void test_hand_built_file_decodes_as_the_page_says(void **state)
{
    (void)state;
    bytes content = {{0}, 0};
    bits w = {{0}, 0};
    full_record(&w, 4, 1000, 960, 100);  /* entity 5 */
    full_record(&w, 1, -64, -30, -5);    /* entity 7 */
    tick(&content, 100, 1, 2, 0, &w);
    memset(&w, 0, sizeof w);             /* tick 101: DELTA 5, REMOVE 7, FULL 9 */
    beg(&w, 4);
    bput(&w, 0, 2);
    bput(&w, 1, 1);                      /* motion */
    bput(&w, 0, 1);                      /* rotFull = 0 */
    bput(&w, 1, 1);                      /* attrs */
    bseg(&w, 6); bseg(&w, 0); bseg(&w, 0);     /* vres */
    bseg(&w, -1); bseg(&w, 0); bseg(&w, 2);    /* pres */
    bseg(&w, 3); bseg(&w, 0); bseg(&w, -2);    /* rres */
    bput(&w, 4, 4);                      /* health only */
    bput(&w, 5000, 16);
    beg(&w, 1);
    bput(&w, 2, 2);                      /* REMOVE 7 */
    full_record(&w, 1, 0, 0, 0);         /* FULL 9 */
    tick(&content, 101, 0, 3, 1, &w);
    u8(&content, 3); u64(&content, 101); u16(&content, 10); /* chat event */
    u32(&content, 500); u16(&content, 2); str(&content, "hi");
    memset(&w, 0, sizeof w);             /* tick 103: DELTA 5 with motion = 0 (pure prediction) */
    beg(&w, 4);
    bput(&w, 0, 2);
    bput(&w, 0, 3);                      /* motion = rotFull = attrs = 0 */
    tick(&content, 103, 0, 1, 0, &w);

    static bytes file;
    wrap_chunk(&file, &content, 100, 103, 3);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r, file.b, file.n, NULL, &err) != DG_OK)
        fail_msg("%s at %llu: %s", err.where, (unsigned long long)err.offset, err.msg);
    assert_false(dg_flrep_reader_info(r)->recovered);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_true(h->planet_radius_m == 3389500.0);
    assert_int_equal(h->participants[0].entity_id, 10);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.ent_count, 2);
    assert_int_equal(t.ents[0].id, 5);
    assert_int_equal(t.ents[1].id, 7);
    assert_int_equal(t.ents[1].pos[0], -64);
    assert_int_equal(t.ents[0].pos[1], -7);
    assert_int_equal(t.ents[0].flags, 0x8001);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.tick, 101);
    assert_int_equal(t.ent_count, 2);   /* 5 and 9; 7 removed */
    assert_int_equal(t.ents[1].id, 9);
    /* §6.4 by hand: vel' = 960 + 0 + 6 = 966; pos' = 1000 + rdiv(2*966, 30) + (-1) = 1000 + 64 - 1 */
    assert_int_equal(t.ents[0].vel[0], 966);
    assert_int_equal(t.ents[0].pos[0], 1063);
    assert_int_equal(t.ents[0].pos[2], (1 << 30) + 2);
    assert_int_equal(t.ents[0].rot[0], 103);
    assert_int_equal(t.ents[0].rot[2], -2);
    assert_int_equal(t.ents[0].health, 5000);
    assert_int_equal(t.event_count, 1);
    assert_int_equal(t.events[0].kind, DG_EV_CHAT);
    assert_int_equal(t.events[0].a, 500);
    assert_memory_equal(t.events[0].text, "hi", 2);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    /* tick 103, motion = 0: dv = 6 and drot = (3, 0, -2) carry over from tick 101's DELTA only if
     * that was the immediately preceding tick of the chunk — it was (seq 1 -> seq 2) */
    assert_int_equal(t.tick, 103);
    assert_int_equal(t.ents[0].vel[0], 972);
    assert_int_equal(t.ents[0].pos[0], 1063 + 65);   /* rdiv(1944, 30) = 64.8 -> 65 */
    assert_int_equal(t.ents[0].rot[0], 106);
    assert_int_equal(t.ents[0].rot[2], -4);
    assert_int_equal(t.ents[1].id, 9);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 0);
    dg_flrep_reader_close(r);
}

/* §6.4 says dv = vel_after - vel_before: exact, even when the change does not fit in 32 bits
 * (velocity -1.5e9 -> +1.5e9 quanta). Tick 102 undoes the jump with vres = -3e9: exact arithmetic
 * lands on 1.5e9 again; a context wrapped to 32 bits would predict from -1.29e9 and leave the i32
 * range. In the second file tick 102 has motion = 0: exact prediction is 4.5e9 quanta, an error. */
static void build_velocity_jump(bytes *file, bool undo)
{
    bytes content = {{0}, 0};
    bits w = {{0}, 0};
    full_record(&w, 0, 0, -1500000000, 0);   /* entity 1 */
    tick(&content, 100, 1, 1, 0, &w);
    for (int t = 101; t <= 102; t++) {
        memset(&w, 0, sizeof w);
        beg(&w, 0);
        bput(&w, 0, 2);                       /* DELTA */
        bool motion = t == 101 || undo;
        bput(&w, motion ? 1 : 0, 3);          /* motion, no rotFull, no attrs */
        if (motion) {
            bseg(&w, t == 101 ? 3000000000LL : -3000000000LL); bseg(&w, 0); bseg(&w, 0);
            for (int i = 0; i < 6; i++)
                bseg(&w, 0);
        }
        tick(&content, (uint64_t)t, 0, 1, 0, &w);
    }
    wrap_chunk(file, &content, 100, 102, 3);
}

static void test_velocity_change_context_is_exact_beyond_32_bits(void **state)
{
    (void)state;
    static bytes file;
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_tick t;
    build_velocity_jump(&file, true);
    assert_int_equal(dg_flrep_reader_open_mem(&r, file.b, file.n, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.ents[0].vel[0], 1500000000);
    /* pos' = 0 + rdiv(2 * 1.5e9, 30) = 100,000,000 */
    assert_int_equal(t.ents[0].pos[0], 100000000);
    if (dg_flrep_reader_next(r, &t, &err) != 1)
        fail_msg("tick 102: %s", err.msg);
    assert_int_equal(t.ents[0].vel[0], 1500000000);   /* 1.5e9 + 3e9 - 3e9 */
    assert_int_equal(t.ents[0].pos[0], 200000000);
    dg_flrep_reader_close(r);
    build_velocity_jump(&file, false);
    assert_int_equal(dg_flrep_reader_open_mem(&r, file.b, file.n, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    assert_non_null(strstr(err.msg, "i32"));
    dg_flrep_reader_close(r);
}

/* A DELTA whose whole rotation has a component of -32768 is outside the quantized domain. */
static void test_delta_rotfull_with_minus_32768_is_an_error(void **state)
{
    (void)state;
    bytes content = {{0}, 0};
    bits w = {{0}, 0};
    full_record(&w, 4, 1000, 960, 100);
    tick(&content, 100, 1, 1, 0, &w);
    memset(&w, 0, sizeof w);
    beg(&w, 4);
    bput(&w, 0, 2);
    bput(&w, 3, 3);                      /* motion + rotFull */
    for (int i = 0; i < 6; i++)
        bseg(&w, 0);
    bput(&w, 1, 2);
    bput(&w, 0x8000, 16);                /* -32768 */
    bput(&w, 0, 16);
    bput(&w, 0, 16);
    tick(&content, 101, 0, 1, 0, &w);
    static bytes file;
    wrap_chunk(&file, &content, 100, 101, 2);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, file.b, file.n, NULL, &err), DG_OK);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    assert_non_null(strstr(err.msg, "-32767..32767"));
    assert_non_null(strstr(err.where, "tick 101"));
    assert_int_equal(t.tick, 100); /* the caller's view is still the last good tick */
    dg_flrep_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_built_file_decodes_as_the_page_says),
        cmocka_unit_test(test_delta_rotfull_with_minus_32768_is_an_error),
        cmocka_unit_test(test_velocity_change_context_is_exact_beyond_32_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
