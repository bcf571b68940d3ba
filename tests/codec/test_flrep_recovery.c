/* tests/codec/test_flrep_recovery.c — the forward-scan recovery keeps exactly the chunks before the
 * first bad one, and the first chunk, which the scan leaves decompressed for playback (it waits in
 * a buffer of its own while the later chunks are checked), plays as if it had been read anew:
 * linear playback, playback again after validate, seeks back into it, whatever chunk stopped the
 * scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flrep_testlib.h"

typedef tl_recording fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    tl_params p = {.seed = 77, .ticks = 70, .entities = 4, .churn = true, .events = true, .keyframe = 15};
    tl_record_mem(&p, f);
    assert_true(f->nchunks >= 4);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    tl_recording_free(*state);
    free(*state);
    return 0;
}

/* The recording without its trailer, and with chunk `bad` spoiled (a byte of its zstd frame; no
 * spoiling when bad == nchunks): recovery must keep chunks 0..bad-1. */
static uint8_t *copy_without_trailer(const fixture *f, size_t bad, size_t *len)
{
    const dg_flrep_chunk_info *last = &f->chunks[f->nchunks - 1];
    *len = (size_t)(last->offset + 36 + last->compressed_size);
    uint8_t *copy = malloc(*len);
    memcpy(copy, f->buf, *len);
    if (bad < f->nchunks)
        copy[f->chunks[bad].offset + 36 + f->chunks[bad].compressed_size / 2] ^= 0x5A;
    return copy;
}

static size_t ticks_before_chunk(const fixture *f, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        n += f->chunks[i].tick_count;
    return n;
}

/* Plays from the reader's position to the end; every tick must equal the recording from tick
 * index `from` on, and exactly `want` of them must come. */
static void play_and_check(dg_flrep_reader *r, const tl_session *s, size_t from, size_t want)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_tick t;
    size_t n = 0;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        assert_true(from + n < s->count);
        tl_assert_tick_equal(&s->ticks[from + n], &t);
        n++;
    }
    if (rc != 0)
        fail_msg("playback stopped after %zu ticks: %s: %s", n, err.where, err.msg);
    assert_int_equal(n, want);
}

/* For every chunk that can stop the scan (none, the first, the second, ..., the last): the kept
 * chunks play exactly as recorded, again after validate, and seeks into the first chunk and the
 * last kept one land on the recorded worlds. */
static void test_kept_chunks_play_whichever_chunk_stops_the_scan(void **state)
{
    fixture *f = *state;
    for (size_t bad = 0; bad <= f->nchunks; bad++) {
        size_t len;
        uint8_t *copy = copy_without_trailer(f, bad, &len);
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_flrep_reader_open_mem(&r, copy, len, NULL, &err), DG_OK);
        const dg_flrep_file_info *info = dg_flrep_reader_info(r);
        assert_true(info->recovered);
        assert_int_equal(info->chunk_count, bad);
        size_t ticks = ticks_before_chunk(f, bad);
        assert_int_equal(info->tick_count, ticks);
        play_and_check(r, &f->s, 0, ticks);
        assert_int_equal(dg_flrep_reader_validate(r, &err), DG_OK);
        play_and_check(r, &f->s, 0, ticks);
        if (bad > 0) {
            size_t last_kept = ticks_before_chunk(f, bad - 1);
            tl_seek_and_check(r, &f->s, last_kept);
            tl_seek_and_check(r, &f->s, 1);
            play_and_check(r, &f->s, 2, ticks - 2);
        }
        dg_flrep_reader_close(r);
        free(copy);
    }
}

/* The first chunk is not read again after the scan: with its bytes wiped in the caller's buffer
 * after open, playback still delivers it (from the scan's copy) and the later chunks (read anew);
 * once playback has moved on, a seek back into it reads the wiped bytes and fails cleanly. */
static void test_first_chunk_comes_from_the_scan(void **state)
{
    fixture *f = *state;
    size_t len;
    uint8_t *copy = copy_without_trailer(f, f->nchunks, &len);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, len, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_info(r)->chunk_count, f->nchunks);
    memset(copy + f->chunks[0].offset + 36, 0, f->chunks[0].compressed_size);
    play_and_check(r, &f->s, 0, f->s.count);
    dg_error_clear(&err);
    assert_int_not_equal(dg_flrep_reader_seek(r, f->s.ticks[1].tick, &err), DG_OK);
    assert_int_equal(err.offset, f->chunks[0].offset + 36); /* chunk 0's (wiped) frame */
    tl_seek_and_check(r, &f->s, f->chunks[0].tick_count + 1); /* the reader is still usable */
    dg_flrep_reader_close(r);
    free(copy);
}

/* Without a recovery nothing is kept from the open: the same wiping fails the first tick. */
static void test_no_chunk_is_kept_when_the_trailer_is_valid(void **state)
{
    fixture *f = *state;
    uint8_t *copy = malloc(f->len);
    memcpy(copy, f->buf, f->len);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err), DG_OK);
    assert_false(dg_flrep_reader_info(r)->recovered);
    memset(copy + f->chunks[0].offset + 36, 0, f->chunks[0].compressed_size);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), -1);
    dg_flrep_reader_close(r);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_chunks_play_whichever_chunk_stops_the_scan),
        cmocka_unit_test(test_first_chunk_comes_from_the_scan),
        cmocka_unit_test(test_no_chunk_is_kept_when_the_trailer_is_valid),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
