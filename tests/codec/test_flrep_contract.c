/* tests/codec/test_flrep_contract.c — the reader against the decisions docs/FORMAT-flrep.md writes
 * down (issue "verdicts you can trust"): the last u64 tick, which faults refuse a file and which
 * start a recovery (§8 "Faults"), the live-entity bound on read, one message per record rule, the
 * prediction context across skipped ticks, unknown event kinds. Files built by flrep_handfile.h
 * from the page alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/flrep.h"
#include "flrep_handfile.h"

static dg_flrep_reader *open_ok(const hf_bytes *f, dg_error *err)
{
    dg_flrep_reader *r = NULL;
    dg_error_clear(err);
    if (dg_flrep_reader_open_mem(&r, f->b, f->n, NULL, err) != DG_OK)
        fail_msg("open: %s at %llu: %s", err->where, (unsigned long long)err->offset, err->msg);
    return r;
}

static void next_ok(dg_flrep_reader *r, dg_flrep_tick *t)
{
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_next(r, t, &err) != 1)
        fail_msg("next: %s at %llu: %s", err.where, (unsigned long long)err.offset, err.msg);
}

/* ---- the last tick a u64 can name ---------------------------------------------------------- */

/* Keyframe at 2^64-2: entity 1 at x = 0 with vx = 100; DELTA at 2^64-1 adding vres 5, 60 Hz. §6.4:
 * vel' = 100 + 0 + 5 = 105, pos' = 0 + rdiv(210, 60) = 4 (3.5 rounds away from zero). The reader
 * once took tick 2^64-1 for its "double delta" test hook's "off" value and applied it twice
 * (velocity 115, position 8). */
static void build_last_tick_file(hf_bytes *f)
{
    const uint64_t kf = UINT64_MAX - 1;
    hf_bytes content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 100);
    hf_tick(&content, kf, 1, 1, 0, &w);
    memset(&w, 0, sizeof w);
    hf_delta_vx(&w, 0, 5);
    hf_tick(&content, UINT64_MAX, 0, 1, 0, &w);
    hf_preamble(f, 60, 15);
    hf_chunk c = hf_append_chunk(f, &content, kf, UINT64_MAX, 2);
    hf_trailer(f, &c, 1);
    hf_free(&content);
}

static void test_delta_at_the_last_u64_tick_is_applied_once(void **state)
{
    (void)state;
    hf_bytes f = {0};
    build_last_tick_file(&f);
    dg_error err;
    dg_flrep_reader *r = open_ok(&f, &err);
    dg_flrep_tick t;
    next_ok(r, &t);
    assert_true(t.tick == UINT64_MAX - 1);
    next_ok(r, &t);
    assert_true(t.tick == UINT64_MAX);
    assert_int_equal(t.ents[0].vel[0], 105);
    assert_int_equal(t.ents[0].pos[0], 4);
    /* the seek path too (its own test hook had the same "off" value) */
    assert_int_equal(dg_flrep_reader_seek(r, UINT64_MAX, &err), DG_OK);
    next_ok(r, &t);
    assert_true(t.tick == UINT64_MAX);
    assert_int_equal(t.ents[0].vel[0], 105);
    assert_int_equal(t.ents[0].pos[0], 4);
    dg_flrep_reader_close(r);
    hf_free(&f);
}

/* ---- faults: refuse with a trailer, recover without one (§8 "Faults") ------------------- */

/* A one-tick keyframe chunk of entity 1 at tick `t`. */
static hf_chunk one_tick_chunk(hf_bytes *f, uint64_t t)
{
    hf_bytes content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 0);
    hf_tick(&content, t, 1, 1, 0, &w);
    hf_chunk c = hf_append_chunk(f, &content, t, t, 1);
    hf_free(&content);
    return c;
}

/* Chunks 0..2 and 2..4 (ticks 0,1,2 then 2,3,4): the second overlaps the first. */
static void build_overlap(hf_bytes *f, bool trailer)
{
    hf_preamble(f, 60, 15);
    hf_chunk c[2];
    for (int k = 0; k < 2; k++) {
        hf_bytes content = {0};
        for (uint64_t t = 2 * (uint64_t)k; t <= 2 * (uint64_t)k + 2; t++) {
            bits w = {{0}, 0};
            if (t == 2 * (uint64_t)k) {
                hf_full(&w, 0, 0, 0);
                hf_tick(&content, t, 1, 1, 0, &w);
            } else {
                hf_tick(&content, t, 0, 0, 0, &w);
            }
        }
        c[k] = hf_append_chunk(f, &content, 2 * (uint64_t)k, 2 * (uint64_t)k + 2, 3);
        hf_free(&content);
    }
    if (trailer)
        hf_trailer(f, c, 2);
}

static void test_overlapping_chunks_refused_with_trailer_recovered_without(void **state)
{
    (void)state;
    hf_bytes f = {0};
    build_overlap(&f, true);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), DG_E_MALFORMED);
    assert_null(r);
    assert_non_null(strstr(err.msg, "chunk 1"));
    assert_non_null(strstr(err.msg, "expected firstTick > 2"));
    assert_non_null(strstr(err.msg, "found 2"));
    hf_free(&f);
    build_overlap(&f, false);
    r = open_ok(&f, &err);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    assert_true(in->recovered);
    assert_int_equal(in->chunk_count, 1);
    assert_int_equal(in->tick_count, 3);
    assert_non_null(strstr(in->recovery_stop, "firstTick > 2"));
    dg_flrep_reader_close(r);
    hf_free(&f);
}

/* Ticks 5, 5, 6 in one chunk. `framing_last` 6: the framing itself cannot hold three increasing
 * ticks in 5..6; 7 (content 5, 5, 7): the framing is fine, the content breaks it. */
static void build_repeated_tick(hf_bytes *f, uint64_t framing_last, bool trailer)
{
    hf_preamble(f, 60, 15);
    hf_bytes content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 0);
    hf_tick(&content, 5, 1, 1, 0, &w);
    memset(&w, 0, sizeof w);
    hf_tick(&content, 5, 0, 0, 0, &w);
    hf_tick(&content, framing_last, 0, 0, 0, &w);
    hf_chunk c[2];
    c[0] = hf_append_chunk(f, &content, 5, framing_last, 3);
    c[1] = one_tick_chunk(f, 20);
    if (trailer)
        hf_trailer(f, c, 2);
    hf_free(&content);
}

static void test_ticks_that_do_not_increase_refused_with_trailer_recovered_without(void **state)
{
    (void)state;
    for (uint64_t last = 6; last <= 7; last++) {
        hf_bytes f = {0};
        build_repeated_tick(&f, last, true);
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        dg_status st = dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err);
        if (last == 6) {   /* the framing is refused at open, naming the trailer entry */
            assert_int_equal(st, DG_E_MALFORMED);
            assert_non_null(strstr(err.where, "trailer entry 0, chunk 0"));
        } else {           /* the content is refused when the chunk is first read: no tick of it is delivered */
            assert_int_equal(st, DG_OK);
            assert_false(dg_flrep_reader_info(r)->recovered);
            dg_flrep_tick t;
            assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
            assert_non_null(strstr(err.msg, "increasing tick index"));
            assert_non_null(strstr(err.where, "chunk 0"));
            dg_flrep_reader_close(r);
        }
        hf_free(&f);
        build_repeated_tick(&f, last, false);
        r = open_ok(&f, &err);
        const dg_flrep_file_info *in = dg_flrep_reader_info(r);
        assert_true(in->recovered);
        assert_int_equal(in->chunk_count, 0);   /* the scan stops at the first bad chunk */
        assert_true(in->recovery_stop[0] != '\0');
        dg_flrep_reader_close(r);
        hf_free(&f);
    }
}

/* A chunk over the reader's cap is refused with or without a trailer: the file is one this
 * reader cannot hold, not a cut one (a recovery would silently drop the chunk and all after it). */
static void test_chunk_over_cap_refused_with_or_without_trailer(void **state)
{
    (void)state;
    for (int trailer = 0; trailer <= 1; trailer++) {
        hf_bytes f = {0};
        hf_preamble(&f, 60, 15);
        hf_chunk c[2] = {one_tick_chunk(&f, 0), one_tick_chunk(&f, 15)};
        if (trailer)
            hf_trailer(&f, c, 2);
        dg_flrep_reader_opts o = {.max_decompressed = 20};   /* one 18-byte tick header + a 38-byte record */
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, &o, &err), DG_E_LIMIT);
        assert_null(r);
        assert_non_null(strstr(err.msg, "cap of 20 bytes"));
        assert_int_equal(err.offset, c[0].offset + 28);
        hf_free(&f);
    }
}

/* One flipped bit in a chunk's framing of an intact file: an error naming the chunk, not a
 * silent recovery of the chunks before it. The flip is the one found by hand (bit 1 of byte 9 of
 * dogfight-40's chunk 10: its firstTick), located here from the golden's own index. */
static void test_framing_flip_in_an_intact_file_is_an_error(void **state)
{
    (void)state;
    const char *root = getenv("DETGATE_SOURCE_DIR");
    assert_non_null(root);
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus/golden/dogfight-40.flrep", root);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    size_t n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *d = malloc(n);
    assert_int_equal(fread(d, 1, n, fp), n);
    fclose(fp);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, d, n, NULL, &err), DG_OK);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    assert_true(in->chunk_count > 10);
    uint64_t at = in->chunks[10].offset + 9;
    uint64_t table = in->chunks[in->chunk_count - 1].offset + 36 + in->chunks[in->chunk_count - 1].compressed_size;
    dg_flrep_reader_close(r);
    d[at] ^= 2;
    assert_int_equal(dg_flrep_reader_open_mem(&r, d, n, NULL, &err), DG_E_CHECKSUM);
    assert_null(r);
    assert_non_null(strstr(err.where, "chunk 10 at byte"));
    assert_non_null(strstr(err.msg, "expected headerCheck"));
    assert_non_null(strstr(err.msg, "found"));
    /* without the trailer the same bytes are a cut recording: the ten chunks before play */
    assert_int_equal(dg_flrep_reader_open_mem(&r, d, (size_t)table, NULL, &err), DG_OK);
    assert_true(dg_flrep_reader_info(r)->recovered);
    assert_int_equal(dg_flrep_reader_info(r)->chunk_count, 10);
    assert_non_null(strstr(dg_flrep_reader_info(r)->recovery_stop, "headerCheck"));
    dg_flrep_reader_close(r);
    free(d);
}

/* ---- unbounded cost from a small file --------------------------------------------------- */

/* A keyframe of 65535 FULL records, then a delta tick spawning one more: 65536 live entities, more
 * than any writer makes. Refused at that tick (it once grew the world without bound). */
static void test_more_live_entities_than_the_writer_allows_is_refused(void **state)
{
    (void)state;
    hf_bytes f = {0}, content = {0}, block = {0};
    bits w = {{0}, 0};
    /* 65535 records of gap 0, bit-packed into `block` one at a time (bits holds 1 KiB) */
    uint8_t carry = 0;
    size_t carry_bits = 0;
    for (uint32_t i = 0; i < 65535; i++) {
        memset(&w, 0, sizeof w);
        bput(&w, carry, (unsigned)carry_bits);
        hf_full(&w, 0, 0, 0);
        size_t whole = w.nbits / 8;
        hf_raw(&block, w.b, whole);
        carry_bits = w.nbits % 8;
        carry = w.b[whole];
    }
    if (carry_bits)
        hf_u8(&block, carry);
    hf_tick_block(&content, 0, 1, 65535, block.b, block.n);
    memset(&w, 0, sizeof w);
    hf_full(&w, 65535, 0, 0);   /* gap 65535 after id 0: entity 65536 */
    hf_tick(&content, 1, 0, 1, 0, &w);
    hf_preamble(&f, 60, 15);
    hf_chunk c = hf_append_chunk(&f, &content, 0, 1, 2);
    hf_trailer(&f, &c, 1);
    dg_error err;
    dg_flrep_reader *r = open_ok(&f, &err);
    dg_flrep_tick t;
    next_ok(r, &t);
    assert_int_equal(t.ent_count, 65535);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    assert_int_equal(err.code, DG_E_LIMIT);
    assert_non_null(strstr(err.msg, "at most 65535 live entities"));
    assert_non_null(strstr(err.msg, "found 65536"));
    assert_non_null(strstr(err.where, "chunk 0"));
    assert_non_null(strstr(err.where, "tick 1"));
    dg_flrep_reader_close(r);
    hf_free(&f);
    hf_free(&content);
    hf_free(&block);
}

/* ---- one message per record rule (§6.3) ------------------------------------------------- */

/* A keyframe of entity 1 at tick 10, then tick 11 holding the record `rec` writes. */
static void expect_record_refusal(void (*rec)(bits *), const char *needle)
{
    hf_bytes f = {0}, content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 0);
    hf_tick(&content, 10, 1, 1, 0, &w);
    memset(&w, 0, sizeof w);
    rec(&w);
    hf_tick(&content, 11, 0, 1, 0, &w);
    hf_preamble(&f, 60, 15);
    hf_chunk c = hf_append_chunk(&f, &content, 10, 11, 2);
    hf_trailer(&f, &c, 1);
    dg_error err;
    dg_flrep_reader *r = open_ok(&f, &err);
    dg_flrep_tick t;
    next_ok(r, &t);
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "entity 1") || !strstr(err.msg, "bit ") ||
        !strstr(err.where, "tick 11"))
        fail_msg("expected \"%s\" naming entity 1, a bit offset and tick 11, found %s: %s", needle, err.where,
                 err.msg);
    dg_flrep_reader_close(r);
    hf_free(&f);
    hf_free(&content);
}

static void rec_full_minus_32768(bits *w)
{
    beg(w, 0);
    bput(w, 1, 2);
    bput(w, 3, 16); bput(w, 2, 16); bput(w, 10000, 16); bput(w, 0, 16);
    for (int i = 0; i < 6; i++)
        bput(w, 0, 32);
    bput(w, 0, 2); bput(w, 0x8000, 16); bput(w, 0, 16); bput(w, 0, 16);
}

static void rec_rotfull_without_motion(bits *w)
{
    beg(w, 0);
    bput(w, 0, 2);
    bput(w, 2, 3);   /* motion 0, rotFull 1, attrs 0 */
}

static void rec_empty_attrs_mask(bits *w)
{
    beg(w, 0);
    bput(w, 0, 2);
    bput(w, 4, 3);   /* attrs only */
    bput(w, 0, 4);
}

static void rec_exhausted(bits *w)
{
    beg(w, 0);
    bput(w, 0, 2);
    bput(w, 1, 3);   /* motion: nine residuals promised, none there */
}

static void test_each_record_rule_has_its_own_message(void **state)
{
    (void)state;
    expect_record_refusal(rec_full_minus_32768, "-32767..32767, found -32768");
    expect_record_refusal(rec_rotfull_without_motion, "rotFull = 0 when motion = 0");
    expect_record_refusal(rec_empty_attrs_mask, "non-zero attrs mask");
    expect_record_refusal(rec_exhausted, "record block exhausted");
}

/* ---- §6.4 across skipped tick numbers, §7 unknown kinds --------------------------------- */

/* Ticks 100 (keyframe), 101 (DELTA vres 6), 105 (DELTA, motion 0): 101 is the previous *stored*
 * tick, so the context dv = 6 carries to 105 however many tick numbers lie between. With a stored
 * tick 103 between that has no record for the entity, the context is cleared. */
static void test_prediction_context_is_the_previous_stored_tick(void **state)
{
    (void)state;
    for (int gap_tick = 0; gap_tick <= 1; gap_tick++) {
        hf_bytes f = {0}, content = {0};
        bits w = {{0}, 0};
        hf_full(&w, 0, 0, 960);
        hf_tick(&content, 100, 1, 1, 0, &w);
        memset(&w, 0, sizeof w);
        hf_delta_vx(&w, 0, 6);
        hf_tick(&content, 101, 0, 1, 0, &w);
        memset(&w, 0, sizeof w);
        if (gap_tick)
            hf_tick(&content, 103, 0, 0, 0, &w);
        beg(&w, 0);
        bput(&w, 0, 2);
        bput(&w, 0, 3);   /* DELTA, motion = rotFull = attrs = 0: prediction only */
        hf_tick(&content, 105, 0, 1, 0, &w);
        hf_preamble(&f, 60, 15);
        hf_chunk c = hf_append_chunk(&f, &content, 100, 105, gap_tick ? 4 : 3);
        hf_trailer(&f, &c, 1);
        dg_error err;
        dg_flrep_reader *r = open_ok(&f, &err);
        dg_flrep_tick t;
        for (int k = 0; k < (gap_tick ? 4 : 3); k++)
            next_ok(r, &t);
        assert_true(t.tick == 105);
        assert_int_equal(t.ents[0].vel[0], gap_tick ? 966 : 972);
        dg_flrep_reader_close(r);
        hf_free(&f);
        hf_free(&content);
    }
}

static void event(hf_bytes *o, uint8_t kind, uint64_t tick, const void *payload, uint16_t len)
{
    hf_u8(o, kind);
    hf_u64(o, tick);
    hf_u16(o, len);
    hf_raw(o, payload, len);
}

/* An event of kind 9 (a newer minor's) between two kills is skipped by its length: the tick shows
 * the two kills only. */
static void test_unknown_event_kind_is_left_out(void **state)
{
    (void)state;
    hf_bytes f = {0}, content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 0);
    hf_tick(&content, 3, 1, 1, 3, &w);
    const uint8_t kill1[10] = {1, 0, 0, 0, 2, 0, 0, 0, 7, 0}, kill2[10] = {2, 0, 0, 0, 1, 0, 0, 0, 8, 0};
    event(&content, 1, 3, kill1, sizeof kill1);
    event(&content, 9, 3, "future", 6);
    event(&content, 1, 3, kill2, sizeof kill2);
    hf_preamble(&f, 60, 15);
    hf_chunk c = hf_append_chunk(&f, &content, 3, 3, 1);
    hf_trailer(&f, &c, 1);
    dg_error err;
    dg_flrep_reader *r = open_ok(&f, &err);
    dg_flrep_tick t;
    next_ok(r, &t);
    assert_int_equal(t.event_count, 2);
    assert_int_equal(t.events[0].c, 7);
    assert_int_equal(t.events[1].c, 8);
    dg_flrep_reader_close(r);
    hf_free(&f);
    hf_free(&content);
}

/* ---- §6.1: the value domain and the quantizer's rounding ----------------------------------- */

/* The reader takes any i32 position, -2^31 quanta included (what dg_flrep_writer_tick_q writes);
 * the float quantizer takes |v x 64| < 2^31 - 0.5 and refuses beyond. */
static void test_position_domain_reader_and_quantizer(void **state)
{
    (void)state;
    hf_bytes f = {0}, content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, INT32_MIN, INT32_MAX);
    hf_tick(&content, 0, 1, 1, 0, &w);
    hf_preamble(&f, 60, 15);
    hf_chunk c = hf_append_chunk(&f, &content, 0, 0, 1);
    hf_trailer(&f, &c, 1);
    dg_error err;
    dg_flrep_reader *r = open_ok(&f, &err);
    dg_flrep_tick t;
    next_ok(r, &t);
    assert_int_equal(t.ents[0].pos[0], INT32_MIN);
    assert_int_equal(t.ents[0].vel[0], INT32_MAX);
    dg_flrep_reader_close(r);
    hf_free(&f);
    hf_free(&content);
    dg_entity_in in = {.id = 1, .rot = {1, 0, 0, 0}, .health = 1};
    dg_qentity q;
    in.pos[0] = 33554431.99;   /* x 64 = 2147483647.36: in range, rounds to 2^31 - 1 */
    dg_error_clear(&err);
    assert_int_equal(dg_quant_entity(&in, &q, &err), DG_OK);
    assert_int_equal(q.pos[0], INT32_MAX);
    in.pos[0] = -33554431.99;
    assert_int_equal(dg_quant_entity(&in, &q, &err), DG_OK);
    assert_int_equal(q.pos[0], -INT32_MAX);
    in.pos[0] = -33554432.0;   /* x 64 = -2^31: what only quantized input may hold */
    assert_int_equal(dg_quant_entity(&in, &q, &err), DG_E_RANGE);
    assert_non_null(strstr(err.msg, "+-33554431 m"));
}

/* Health: the binary64 product h x 10000, a tie rounded up (away from zero). 0.00025 x 10000 is
 * exactly 2.5 in binary64, 0.00045 x 10000 exactly 4.5: 3 and 5 (not 2 and 4, as ties-to-even
 * would give). */
static void test_health_tie_rounds_up(void **state)
{
    (void)state;
    const double h[] = {0.00005, 0.00025, 0.00045, 0.00125};
    const uint16_t want[] = {1, 3, 5, 13};
    for (int i = 0; i < 4; i++) {
        assert_true(h[i] * 10000 - (double)(int)(h[i] * 10000) == 0.5);   /* a tie, as the test needs */
        dg_entity_in in = {.id = 1, .rot = {1, 0, 0, 0}, .health = h[i]};
        dg_qentity q;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_quant_entity(&in, &q, &err), DG_OK);
        assert_int_equal(q.health, want[i]);
        assert_int_equal(dg_quant_entities(&in, &q, 1, NULL, &err), DG_OK);   /* the batch path too */
        assert_int_equal(q.health, want[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_at_the_last_u64_tick_is_applied_once),
        cmocka_unit_test(test_overlapping_chunks_refused_with_trailer_recovered_without),
        cmocka_unit_test(test_ticks_that_do_not_increase_refused_with_trailer_recovered_without),
        cmocka_unit_test(test_chunk_over_cap_refused_with_or_without_trailer),
        cmocka_unit_test(test_framing_flip_in_an_intact_file_is_an_error),
        cmocka_unit_test(test_more_live_entities_than_the_writer_allows_is_refused),
        cmocka_unit_test(test_each_record_rule_has_its_own_message),
        cmocka_unit_test(test_prediction_context_is_the_previous_stored_tick),
        cmocka_unit_test(test_unknown_event_kind_is_left_out),
        cmocka_unit_test(test_position_domain_reader_and_quantizer),
        cmocka_unit_test(test_health_tie_rounds_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
