/* tests/codec/test_flrep_alloc.c — the .flrep codec when memory runs out. Every allocation the
 * library makes is counted through the linker's --wrap (see CMakeLists.txt), and the k-th one after
 * the test arms the counter fails, for every k until a call no longer reaches k allocations: each
 * failure path is taken on its own. Each must give DG_E_NOMEM with a message, no crash, no leak (the
 * ASan build's leak check), and leave what the API promises: the reader's position and world as
 * they were (the next tick after a failed next or seek is the one it would have been), no file
 * under the final name from a writer that failed. Allocations inside libzstd and libc (a shared
 * library's own calls) are not counted: their failures come back through zstd's and stdio's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flrep_testlib.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

/* Allocations left before the one that fails; < 0 = disarmed. `failed` says whether it came. */
static long countdown = -1;
static bool failed;

static bool allocation_fails(void)
{
    if (countdown < 0)
        return false;
    if (countdown-- > 0)
        return false;
    failed = true;
    return true;
}

void *__wrap_malloc(size_t n) { return allocation_fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return allocation_fails() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return allocation_fails() ? NULL : __real_realloc(p, n); }

/* The k-th allocation from now fails (k = 0: the next one). */
static void arm(long k)
{
    countdown = k;
    failed = false;
}

static bool disarm(void)
{
    countdown = -1;
    return failed;
}

/* More than any call here makes: a loop that reaches it has a call that never stops allocating. */
#define MAX_FAULTS 5000

static void assert_out_of_memory(dg_status st, const dg_error *err, const char *call, long k)
{
    if (st != DG_E_NOMEM)
        fail_msg("%s with allocation %ld failing: expected DG_E_NOMEM, found status %d (%s: %s)", call, k, st,
                 err->where, err->msg);
    assert_int_equal(err->code, DG_E_NOMEM);
    assert_true(err->msg[0] != '\0');
}

static const tl_params session = {.seed = 41, .ticks = 160, .entities = 24, .churn = true, .events = true,
                                  .keyframe = 15};

/* Opening, from memory and from a file: every allocation of the open fails once; then the open
 * that no failure reaches plays. */
static void open_faults(const tl_recording *rec, const char *path)
{
    long k = 0;
    for (;; k++) {
        assert_true(k < MAX_FAULTS);
        dg_flrep_reader *r = (dg_flrep_reader *)1;
        dg_error err;
        dg_error_clear(&err);
        arm(k);
        dg_status st = path ? dg_flrep_reader_open_file(&r, path, NULL, &err)
                            : dg_flrep_reader_open_mem(&r, rec->buf, rec->len, NULL, &err);
        bool hit = disarm();
        if (!hit) {
            assert_int_equal(st, DG_OK);
            dg_flrep_tick t;
            for (size_t i = 0; i < rec->s.count; i++) {
                assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
                tl_assert_tick_equal(&rec->s.ticks[i], &t);
            }
            dg_flrep_reader_close(r);
            break;
        }
        if (st == DG_OK) {   /* a failure the reader can do without (none today): it must still play */
            dg_flrep_reader_close(r);
            continue;
        }
        assert_out_of_memory(st, &err, path ? "dg_flrep_reader_open_file" : "dg_flrep_reader_open_mem", k);
        assert_null(r);
    }
    assert_true(k > 0);   /* the counter does see the library's allocations */
    print_message("reader open (%s): %ld allocations, each failed once\n", path ? "file" : "memory", k);
}

static void test_reader_open(void **state)
{
    (void)state;
    tl_recording rec;
    tl_record_mem(&session, &rec);
    open_faults(&rec, NULL);
    char path[512];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_write_file(path, rec.buf, rec.len);
    open_faults(&rec, path);
    remove(path);
    tl_recording_free(&rec);
}

/* The tick the reader returns next, without faults (the reference a failed call must not move). */
static int next_clean(dg_flrep_reader *r, dg_flrep_tick *t)
{
    dg_error err;
    dg_error_clear(&err);
    return dg_flrep_reader_next(r, t, &err);
}

/* The session recorded in memory, and a reader on it (no faults). */
static dg_flrep_reader *open_session(tl_recording *rec)
{
    tl_record_mem(&session, rec);
    dg_flrep_reader *r;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, rec->buf, rec->len, NULL, &err), DG_OK);
    return r;
}

/* Playback: at every tick, each allocation next makes fails once; after each failure the next call
 * (no fault) returns that very tick. */
static void test_reader_next_keeps_its_place(void **state)
{
    (void)state;
    tl_recording rec;
    dg_flrep_reader *r = open_session(&rec);
    dg_error err;
    long faults = 0;
    for (size_t i = 0; i < rec.s.count; i++) {
        for (long k = 0;; k++) {
            assert_true(k < MAX_FAULTS);
            dg_flrep_tick t;
            dg_error_clear(&err);
            arm(k);
            int rc = dg_flrep_reader_next(r, &t, &err);
            bool hit = disarm();
            if (rc == -1) {
                assert_true(hit);
                assert_out_of_memory(err.code, &err, "dg_flrep_reader_next", k);
                faults++;
                continue;   /* the same tick again, one allocation further */
            }
            assert_int_equal(rc, 1);
            tl_assert_tick_equal(&rec.s.ticks[i], &t);
            break;
        }
    }
    dg_flrep_tick t;
    assert_int_equal(next_clean(r, &t), 0);
    assert_true(faults > 0);   /* chunks are decompressed into buffers the reader allocates */
    print_message("reader next: %ld failed allocations over %zu ticks\n", faults, rec.s.count);
    dg_flrep_reader_close(r);
    tl_recording_free(&rec);
}

/* Seeking: from a place in the middle, each allocation of a seek fails once; the position stays
 * (the next tick is the one after the place), and the seek without faults then lands. */
static void test_reader_seek_keeps_its_place(void **state)
{
    (void)state;
    tl_recording rec;
    dg_flrep_reader *r = open_session(&rec);
    dg_error err;
    const size_t place = 70;   /* mid-chunk: the world there is rebuilt from deltas */
    const size_t targets[] = {3, 15, 16, 44, 71, 100, 159, 0};
    long faults = 0;
    for (size_t j = 0; j < sizeof targets / sizeof targets[0]; j++) {
        for (long k = 0;; k++) {
            assert_true(k < MAX_FAULTS);
            tl_seek_and_check(r, &rec.s, place - 1);   /* now the next tick is `place` */
            dg_error_clear(&err);
            arm(k);
            dg_status st = dg_flrep_reader_seek(r, rec.s.ticks[targets[j]].tick, &err);
            bool hit = disarm();
            dg_flrep_tick t;
            if (st != DG_OK) {
                assert_true(hit);
                assert_out_of_memory(st, &err, "dg_flrep_reader_seek", k);
                assert_int_equal(next_clean(r, &t), 1);
                tl_assert_tick_equal(&rec.s.ticks[place], &t);
                faults++;
                continue;
            }
            assert_int_equal(next_clean(r, &t), 1);
            tl_assert_tick_equal(&rec.s.ticks[targets[j]], &t);
            if (!hit)
                break;
        }
    }
    assert_true(faults > 0);
    print_message("reader seek: %ld failed allocations over %zu targets\n", faults,
                  sizeof targets / sizeof targets[0]);
    dg_flrep_reader_close(r);
    tl_recording_free(&rec);
}

/* Recording: the whole write (open, every tick, close) with its k-th allocation failing. The call
 * that fails says so, and the writer is then abandoned (abort) or closed. Whatever reports a failure
 * leaves no file under the final name; a close that succeeds after a failed tick leaves a file
 * that plays the ticks written before it; the write no failure reaches reads back whole. */
typedef enum writer_end { END_ABORT, END_CLOSE } writer_end;

typedef struct write_result {
    bool hit;              /* the armed allocation came */
    dg_status failure;     /* the first failing call's status, DG_OK if none */
    size_t ticks_written;  /* ticks accepted before it */
    bool closed;           /* close was called (END_CLOSE after a failure, or no failure) */
    dg_status close_st;    /* its status */
} write_result;

static write_result write_with_fault(const char *path, const tl_session *s, long k, writer_end end)
{
    write_result res = {false, DG_OK, 0, false, DG_OK};
    dg_flrep_header h = tl_header(60, session.keyframe);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    arm(k);
    dg_status st = dg_flrep_writer_open(&w, path, &h, NULL, &err);
    for (size_t i = 0; st == DG_OK && i < s->count; i++) {
        st = dg_flrep_writer_tick_q(w, s->ticks[i].tick, s->ticks[i].ents, s->ticks[i].n, s->ticks[i].events,
                                    s->ticks[i].nev, &err);
        res.ticks_written += st == DG_OK;
    }
    if (st != DG_OK) {
        assert_out_of_memory(st, &err, "the writer", k);
        res.failure = st;
    }
    if (w && st != DG_OK && end == END_ABORT) {
        dg_flrep_writer_abort(w);
    } else if (w) {
        dg_error_clear(&err);
        res.closed = true;
        res.close_st = dg_flrep_writer_close(w, &err);   /* frees w whatever it returns */
        if (res.close_st != DG_OK && st == DG_OK) {
            assert_out_of_memory(res.close_st, &err, "dg_flrep_writer_close", k);
            res.failure = res.close_st;
        }
    }
    res.hit = disarm();
    return res;
}

/* The file at path plays exactly the first `count` ticks of s. */
static void assert_plays(const char *path, const tl_session *s, size_t count)
{
    dg_flrep_reader *r;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    dg_flrep_tick t;
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
        tl_assert_tick_equal(&s->ticks[i], &t);
    }
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 0);
    dg_flrep_reader_close(r);
}

static void writer_faults(writer_end end)
{
    tl_session s;
    char ref[512], path[512];
    tl_temp_path(ref, sizeof ref, ".flrep");
    tl_record(ref, &session, &s);
    remove(ref);
    tl_temp_path(path, sizeof path, ".flrep");
    long k = 0;
    for (;; k++) {
        assert_true(k < MAX_FAULTS);
        write_result res = write_with_fault(path, &s, k, end);
        bool file = access(path, F_OK) == 0;
        if (res.failure != DG_OK || res.close_st != DG_OK) {
            assert_true(res.hit);
            if (file && res.close_st != DG_OK)
                fail_msg("allocation %ld failing: close failed, yet a file was left under the final name", k);
            if (file && end == END_ABORT)
                fail_msg("allocation %ld failing: an abandoned writer left a file under the final name", k);
            if (!file && res.closed && res.close_st == DG_OK)
                fail_msg("allocation %ld failing: close succeeded after the failure but left no file", k);
            if (file)
                assert_plays(path, &s, res.ticks_written);   /* closed after a failed tick: what came before */
            remove(path);
            continue;
        }
        assert_true(file);
        assert_plays(path, &s, s.count);
        remove(path);
        if (!res.hit)
            break;
    }
    assert_true(k > 0);
    print_message("writer (%s on error): %ld allocations, each failed once\n", end == END_ABORT ? "abort" : "close", k);
    tl_session_free(&s);
}

static void test_writer_abort_after_failure(void **state)
{
    (void)state;
    writer_faults(END_ABORT);
}

static void test_writer_close_after_failure(void **state)
{
    (void)state;
    writer_faults(END_CLOSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_open),
        cmocka_unit_test(test_reader_next_keeps_its_place),
        cmocka_unit_test(test_reader_seek_keeps_its_place),
        cmocka_unit_test(test_writer_abort_after_failure),
        cmocka_unit_test(test_writer_close_after_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
