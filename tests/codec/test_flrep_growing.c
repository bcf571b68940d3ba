/* tests/codec/test_flrep_growing.c — following a recording while it is written: the writer's chunk
 * notification (each chunk as the finished file's trailer indexes it, after its bytes are in the
 * file), and the growing reader (dg_flrep_reader_open_growing + _refresh), which scans each chunk
 * as it completes and plays and seeks what it has; a chunk cut short waits, a damaged one is an
 * error naming it, every later refresh repeats it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flrep_internal.h"
#include "flrep_testlib.h"

/* ---- the writer's notification, followed on the file being written ---------------------------- */

typedef struct follower {
    tl_session *s;                /* the recording so far (filled tick by tick by tl_record) */
    dg_flrep_chunk_info seen[64]; /* the notices */
    uint64_t ends[64];
    size_t n;
    dg_flrep_reader *r;           /* opened on the temp file at the first notice */
    size_t played;
    char path[512];
} follower;

static void assert_chunk_equal(const dg_flrep_chunk_info *a, const dg_flrep_chunk_info *b)
{
    assert_int_equal(a->offset, b->offset);
    assert_int_equal(a->first_tick, b->first_tick);
    assert_int_equal(a->last_tick, b->last_tick);
    assert_int_equal(a->tick_count, b->tick_count);
    assert_int_equal(a->compressed_size, b->compressed_size);
    assert_int_equal(a->decompressed_size, b->decompressed_size);
}

static void on_chunk(void *user, const dg_flrep_chunk_done *d)
{
    follower *f = user;
    assert_true(f->n < 64);
    assert_int_equal(d->file_index, 0);
    assert_int_equal(d->end, d->chunk->offset + 36 + d->chunk->compressed_size);
    f->seen[f->n] = *d->chunk;
    f->ends[f->n++] = d->end;
    dg_error err;
    dg_error_clear(&err);
    if (!f->r) {
        snprintf(f->path, sizeof f->path, "%s", d->path);
        if (dg_flrep_reader_open_growing(&f->r, d->path, NULL, &err) != DG_OK)
            fail_msg("open_growing: %s: %s", err.where, err.msg);
        assert_true(dg_flrep_reader_info(f->r)->recovered);
        assert_int_equal(dg_flrep_reader_info(f->r)->chunk_count, 0);
    }
    size_t added = 0;
    if (dg_flrep_reader_refresh(f->r, d->end, &added, &err) != DG_OK)
        fail_msg("refresh: %s: %s", err.where, err.msg);
    assert_int_equal(added, 1);
    const dg_flrep_file_info *info = dg_flrep_reader_info(f->r);
    assert_int_equal(info->chunk_count, f->n);
    assert_chunk_equal(&info->chunks[f->n - 1], d->chunk);
    assert_string_equal(info->recovery_stop, "");
    /* every tick of the new chunk plays, and is the tick the writer was given */
    dg_flrep_tick t;
    int rc;
    while ((rc = dg_flrep_reader_next(f->r, &t, &err)) == 1)
        tl_assert_tick_equal(&f->s->ticks[f->played++], &t);
    assert_int_equal(rc, 0);
    assert_int_equal(f->played, info->tick_count);
    /* the first tick and the last one so far, by seek (then back to the end for the next chunk) */
    tl_seek_and_check(f->r, f->s, 0);
    tl_seek_and_check(f->r, f->s, f->played - 1);
}

static void test_a_reader_follows_the_writer_chunk_by_chunk(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_session s = {0};
    follower f = {.s = &s};
    /* tl_record fills s as it goes: size it before the first tick (tl_record sets it again) */
    tl_params p = {.seed = 5, .ticks = 100, .entities = 6, .churn = true, .events = true, .keyframe = 15,
                   .on_chunk = on_chunk, .on_chunk_user = &f};
    tl_record(path, &p, &s);
    assert_true(f.n >= 6);
    assert_int_equal(f.played, s.count);
    assert_non_null(strstr(f.path, ".tmp-"));
    /* the notices are the finished file's index, the last chunk's end is where its trailer starts */
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    const dg_flrep_file_info *info = dg_flrep_reader_info(r);
    assert_false(info->recovered);
    assert_int_equal(info->chunk_count, f.n);
    for (size_t k = 0; k < f.n; k++)
        assert_chunk_equal(&info->chunks[k], &f.seen[k]);
    assert_true(f.ends[f.n - 1] < info->file_size);
    dg_flrep_reader_close(r);
    /* the renamed file is the same file: a refresh of the whole of it stops at the trailer */
    size_t added = 9;
    assert_int_not_equal(dg_flrep_reader_refresh(f.r, 0, &added, &err), DG_OK);
    assert_int_equal(added, 0);
    assert_int_equal(err.offset, f.ends[f.n - 1]);   /* "FLIX" where a chunk framing was expected */
    dg_flrep_reader_close(f.r);
    remove(path);
    tl_session_free(&s);
}

/* ---- cut at every byte ---------------------------------------------------------------------------- */

/* Chunks of rec wholly within the first `size` bytes. */
static size_t chunks_within(const tl_recording *rec, uint64_t size)
{
    size_t k = 0;
    while (k < rec->nchunks && rec->chunks[k].offset + 36 + rec->chunks[k].compressed_size <= size)
        k++;
    return k;
}

/* Refreshed at every size from the end of the sections to the end of the last chunk, one byte
 * more each time, the index holds exactly the complete chunks, playback continues where it
 * stopped and delivers every tick once, and the scan says where it waits inside a chunk. */
static void test_every_cut_waits_for_the_rest_of_its_chunk(void **state)
{
    (void)state;
    tl_recording rec;
    tl_params p = {.seed = 9, .ticks = 60, .entities = 3, .churn = true, .events = true, .keyframe = 15};
    tl_record_mem(&p, &rec);
    const dg_flrep_chunk_info *last = &rec.chunks[rec.nchunks - 1];
    uint64_t end = last->offset + 36 + last->compressed_size;
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep__reader_open_growing_mem(&r, rec.buf, rec.len, NULL, &err), DG_OK);
    size_t played = 0, total_added = 0;
    for (uint64_t size = rec.data_start; size <= end; size++) {
        size_t added = 0;
        if (dg_flrep_reader_refresh(r, size, &added, &err) != DG_OK)
            fail_msg("refresh at %llu: %s: %s", (unsigned long long)size, err.where, err.msg);
        total_added += added;
        const dg_flrep_file_info *info = dg_flrep_reader_info(r);
        size_t want = chunks_within(&rec, size);
        assert_int_equal(info->chunk_count, want);
        assert_int_equal(total_added, want);
        bool at_edge = size == rec.data_start || (want > 0 && size == rec.chunks[want - 1].offset + 36 +
                                                                          rec.chunks[want - 1].compressed_size);
        assert_int_equal(info->recovery_stop[0] == '\0', at_edge);
        dg_flrep_tick t;
        int rc;
        while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1)
            tl_assert_tick_equal(&rec.s.ticks[played++], &t);
        assert_int_equal(rc, 0);
        assert_int_equal(played, info->tick_count);
    }
    assert_int_equal(played, rec.s.count);
    /* a size below what was scanned, or past the buffer, is the caller's mistake */
    assert_int_equal(dg_flrep_reader_refresh(r, end - 1, NULL, &err), DG_E_USAGE);
    assert_int_equal(dg_flrep_reader_refresh(r, rec.len + 1, NULL, &err), DG_E_USAGE);
    dg_flrep_reader_close(r);
    /* a reader that was not opened growing has no refresh */
    assert_int_equal(dg_flrep_reader_open_mem(&r, rec.buf, rec.len, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_refresh(r, 0, NULL, &err), DG_E_USAGE);
    dg_flrep_reader_close(r);
    tl_recording_free(&rec);
}

/* ---- a damaged chunk ------------------------------------------------------------------------------- */

/* A byte of chunk 2's frame spoiled: the refresh that reaches it fails naming chunk 2 and a byte
 * inside it, keeps chunks 0 and 1 (which still play), and every later refresh fails the same way. */
static void test_a_damaged_chunk_is_an_error_that_stays(void **state)
{
    (void)state;
    tl_recording rec;
    tl_params p = {.seed = 13, .ticks = 80, .entities = 4, .churn = true, .keyframe = 15};
    tl_record_mem(&p, &rec);
    assert_true(rec.nchunks >= 4);
    const dg_flrep_chunk_info *bad = &rec.chunks[2];
    uint8_t *copy = malloc(rec.len);
    memcpy(copy, rec.buf, rec.len);
    copy[bad->offset + 36 + bad->compressed_size / 2] ^= 0x5A;
    dg_flrep_reader *r = NULL;
    dg_error err, again;
    dg_error_clear(&err);
    dg_error_clear(&again);
    assert_int_equal(dg_flrep__reader_open_growing_mem(&r, copy, rec.len, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_refresh(r, rec.chunks[1].offset + 36 + rec.chunks[1].compressed_size, NULL, &err),
                     DG_OK);
    size_t added = 9;
    dg_status st = dg_flrep_reader_refresh(r, rec.chunks[3].offset + 36 + rec.chunks[3].compressed_size, &added, &err);
    assert_int_not_equal(st, DG_OK);
    assert_int_equal(added, 0);
    assert_true(err.offset >= bad->offset && err.offset < bad->offset + 36 + bad->compressed_size);
    if (!strstr(err.where, "chunk 2"))
        fail_msg("expected the error to name chunk 2: %s: %s", err.where, err.msg);
    const dg_flrep_file_info *info = dg_flrep_reader_info(r);
    assert_int_equal(info->chunk_count, 2);
    assert_non_null(strstr(info->recovery_stop, "scan stopped at byte"));
    assert_int_equal(dg_flrep_reader_refresh(r, 0, NULL, &again), st);
    assert_string_equal(again.msg, err.msg);
    assert_int_equal(again.offset, err.offset);
    tl_seek_and_check(r, &rec.s, rec.chunks[0].tick_count + rec.chunks[1].tick_count - 1);
    dg_flrep_reader_close(r);
    free(copy);
    tl_recording_free(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_reader_follows_the_writer_chunk_by_chunk),
        cmocka_unit_test(test_every_cut_waits_for_the_rest_of_its_chunk),
        cmocka_unit_test(test_a_damaged_chunk_is_an_error_that_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
