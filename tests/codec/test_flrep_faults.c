/* tests/codec/test_flrep_faults.c — the .flrep codec when memory runs out or the disk fails. The
 * library's allocations (malloc, calloc, realloc) and its file calls (fopen, fread, fseeko, fwrite,
 * fflush, fsync, fclose, rename) go through the linker's --wrap (see CMakeLists.txt); the k-th call
 * of one kind after the test arms the counter fails, for every k until a call no longer reaches k:
 * each failure path is taken on its own. Each must give the kind's status (DG_E_NOMEM, DG_E_IO) with
 * a message, no crash, no leak (the ASan build's leak check), and leave what the API promises: the
 * reader's position and world as they were (the next tick after a failed next or seek is the one it
 * would have been), no file under the final name from a writer that reported a failure. Calls made
 * inside libzstd and libc themselves (a shared library's own) are not counted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "flrep_testlib.h"

typedef enum fault_kind { FAULT_ALLOC, FAULT_IO } fault_kind;

/* Calls of the armed kind left before the one that fails; < 0 = disarmed. `failed`: it came. */
static long countdown = -1;
static fault_kind armed_kind;
static bool failed;

static bool call_fails(fault_kind kind)
{
    if (countdown < 0 || kind != armed_kind)
        return false;
    if (countdown-- > 0)
        return false;
    failed = true;
    return true;
}

/* The k-th call of `kind` from now fails (k = 0: the next one). */
static void arm(fault_kind kind, long k)
{
    armed_kind = kind;
    countdown = k;
    failed = false;
}

static bool disarm(void)
{
    countdown = -1;
    return failed;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n) { return call_fails(FAULT_ALLOC) ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return call_fails(FAULT_ALLOC) ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return call_fails(FAULT_ALLOC) ? NULL : __real_realloc(p, n); }

/* The file calls, by the names the library links against (large-file builds: fopen64, fseeko64). A
 * failing call sets errno as the disk would; fclose closes the stream anyway (as the real one
 * does) and reports the failure. */
FILE *__real_fopen64(const char *path, const char *mode);
size_t __real_fread(void *p, size_t size, size_t n, FILE *f);
int __real_fseeko64(FILE *f, off_t off, int whence);
size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);
int __real_fflush(FILE *f);
int __real_fsync(int fd);
int __real_fclose(FILE *f);
int __real_rename(const char *from, const char *to);
FILE *__wrap_fopen64(const char *path, const char *mode);
size_t __wrap_fread(void *p, size_t size, size_t n, FILE *f);
int __wrap_fseeko64(FILE *f, off_t off, int whence);
size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f);
int __wrap_fflush(FILE *f);
int __wrap_fsync(int fd);
int __wrap_fclose(FILE *f);
int __wrap_rename(const char *from, const char *to);

static bool io_fails(int error)
{
    if (!call_fails(FAULT_IO))
        return false;
    errno = error;
    return true;
}

FILE *__wrap_fopen64(const char *path, const char *mode) { return io_fails(EACCES) ? NULL : __real_fopen64(path, mode); }
size_t __wrap_fread(void *p, size_t size, size_t n, FILE *f) { return io_fails(EIO) ? 0 : __real_fread(p, size, n, f); }
int __wrap_fseeko64(FILE *f, off_t off, int whence) { return io_fails(EIO) ? -1 : __real_fseeko64(f, off, whence); }
size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    return io_fails(ENOSPC) ? 0 : __real_fwrite(p, size, n, f);
}
int __wrap_fflush(FILE *f) { return io_fails(ENOSPC) ? EOF : __real_fflush(f); }
int __wrap_fsync(int fd) { return io_fails(EIO) ? -1 : __real_fsync(fd); }
int __wrap_fclose(FILE *f)
{
    int rc = __real_fclose(f);
    return io_fails(ENOSPC) ? EOF : rc;
}
int __wrap_rename(const char *from, const char *to) { return io_fails(EXDEV) ? -1 : __real_rename(from, to); }

/* More than any call here makes: a loop that reaches it has a call that never stops. */
#define MAX_FAULTS 5000

static const char *kind_name(fault_kind kind) { return kind == FAULT_ALLOC ? "allocation" : "file call"; }

static void assert_fault_status(fault_kind kind, dg_status st, const dg_error *err, const char *call, long k)
{
    dg_status want = kind == FAULT_ALLOC ? DG_E_NOMEM : DG_E_IO;
    if (st != want)
        fail_msg("%s with %s %ld failing: expected status %d, found %d (%s: %s)", call, kind_name(kind), k, want,
                 st, err->where, err->msg);
    assert_int_equal(err->code, want);
    assert_true(err->msg[0] != '\0');
}

static const tl_params session = {.seed = 41, .ticks = 160, .entities = 24, .churn = true, .events = true,
                                  .keyframe = 15};

/* Opening, from memory (path NULL) or from a file: every call of the kind the open makes fails
 * once; then the open that no failure reaches plays. */
static void open_faults(fault_kind kind, const tl_recording *rec, const char *path)
{
    long k = 0;
    for (;; k++) {
        assert_true(k < MAX_FAULTS);
        dg_flrep_reader *r = (dg_flrep_reader *)1;
        dg_error err;
        dg_error_clear(&err);
        arm(kind, k);
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
        assert_fault_status(kind, st, &err, path ? "dg_flrep_reader_open_file" : "dg_flrep_reader_open_mem", k);
        assert_null(r);
    }
    assert_true(k > 0);   /* the counter does see the library's calls */
    print_message("reader open (%s): %ld %ss, each failed once\n", path ? "file" : "memory", k, kind_name(kind));
}

/* The session recorded in memory and written to *path. */
static void record_session(tl_recording *rec, char *path, size_t cap)
{
    tl_record_mem(&session, rec);
    tl_temp_path(path, cap, ".flrep");
    tl_write_file(path, rec->buf, rec->len);
}

/* A reader on the session: from the file (path) or from memory (path NULL), no faults. */
static dg_flrep_reader *open_session(const tl_recording *rec, const char *path)
{
    dg_flrep_reader *r;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(path ? dg_flrep_reader_open_file(&r, path, NULL, &err)
                          : dg_flrep_reader_open_mem(&r, rec->buf, rec->len, NULL, &err),
                     DG_OK);
    return r;
}

/* The tick the reader returns next, without faults (the reference a failed call must not move). */
static int next_clean(dg_flrep_reader *r, dg_flrep_tick *t)
{
    dg_error err;
    dg_error_clear(&err);
    return dg_flrep_reader_next(r, t, &err);
}

/* Playback: at every tick, each call of the kind that next makes fails once; after each failure
 * the next call (no fault) returns that very tick. */
static long next_faults(fault_kind kind, const tl_recording *rec, const char *path)
{
    dg_flrep_reader *r = open_session(rec, path);
    long faults = 0;
    for (size_t i = 0; i < rec->s.count; i++) {
        for (long k = 0;; k++) {
            assert_true(k < MAX_FAULTS);
            dg_flrep_tick t;
            dg_error err;
            dg_error_clear(&err);
            arm(kind, k);
            int rc = dg_flrep_reader_next(r, &t, &err);
            bool hit = disarm();
            if (rc == -1) {
                assert_true(hit);
                assert_fault_status(kind, err.code, &err, "dg_flrep_reader_next", k);
                faults++;
                continue;   /* the same tick again, one call further */
            }
            assert_int_equal(rc, 1);
            tl_assert_tick_equal(&rec->s.ticks[i], &t);
            break;
        }
    }
    dg_flrep_tick t;
    assert_int_equal(next_clean(r, &t), 0);
    dg_flrep_reader_close(r);
    return faults;
}

/* Seeking: from a place in the middle, each call of the kind a seek makes fails once; the position
 * stays (the next tick is the one after the place), and the seek without faults then lands. */
static long seek_faults(fault_kind kind, const tl_recording *rec, const char *path)
{
    dg_flrep_reader *r = open_session(rec, path);
    const size_t place = 70;   /* mid-chunk: the world there is rebuilt from deltas */
    const size_t targets[] = {3, 15, 16, 44, 71, 100, 159, 0};
    long faults = 0;
    for (size_t j = 0; j < sizeof targets / sizeof targets[0]; j++) {
        for (long k = 0;; k++) {
            assert_true(k < MAX_FAULTS);
            tl_seek_and_check(r, &rec->s, place - 1);   /* now the next tick is `place` */
            dg_error err;
            dg_error_clear(&err);
            arm(kind, k);
            dg_status st = dg_flrep_reader_seek(r, rec->s.ticks[targets[j]].tick, &err);
            bool hit = disarm();
            dg_flrep_tick t;
            if (st != DG_OK) {
                assert_true(hit);
                assert_fault_status(kind, st, &err, "dg_flrep_reader_seek", k);
                assert_int_equal(next_clean(r, &t), 1);
                tl_assert_tick_equal(&rec->s.ticks[place], &t);
                faults++;
                continue;
            }
            assert_int_equal(next_clean(r, &t), 1);
            tl_assert_tick_equal(&rec->s.ticks[targets[j]], &t);
            if (!hit)
                break;
        }
    }
    dg_flrep_reader_close(r);
    return faults;
}

/* Opening under both kinds of fault: memory runs out opening from memory and from a file, the
 * disk fails only for the file. */
static void test_reader_open(void **state)
{
    (void)state;
    tl_recording rec;
    char path[512];
    record_session(&rec, path, sizeof path);
    open_faults(FAULT_ALLOC, &rec, NULL);
    open_faults(FAULT_ALLOC, &rec, path);
    open_faults(FAULT_IO, &rec, path);
    remove(path);
    tl_recording_free(&rec);
}

/* next and seek under both kinds of fault; memory runs out reading from memory and from a file,
 * the disk fails only for the file. */
static void test_reader_keeps_its_place(void **state)
{
    (void)state;
    tl_recording rec;
    char path[512];
    record_session(&rec, path, sizeof path);
    long mem_next = next_faults(FAULT_ALLOC, &rec, NULL), file_next = next_faults(FAULT_ALLOC, &rec, path);
    long io_next = next_faults(FAULT_IO, &rec, path);
    long mem_seek = seek_faults(FAULT_ALLOC, &rec, NULL), io_seek = seek_faults(FAULT_IO, &rec, path);
    /* chunks are decompressed into buffers the reader allocates, and read from the file */
    assert_true(mem_next > 0 && file_next > 0 && io_next > 0 && mem_seek > 0 && io_seek > 0);
    print_message("reader next over %zu ticks: %ld + %ld failed allocations, %ld failed file calls\n", rec.s.count,
                  mem_next, file_next, io_next);
    print_message("reader seek: %ld failed allocations, %ld failed file calls\n", mem_seek, io_seek);
    remove(path);
    tl_recording_free(&rec);
}

/* Recording: the whole write (open, every tick, close) with its k-th call of the kind failing. The
 * call that fails says so, and the writer is then abandoned (abort) or closed. Whatever reports a
 * failure leaves no file under the final name; a close that succeeds after a failed tick leaves a
 * file that plays the ticks written before it; the write no failure reaches reads back whole. */
typedef enum writer_end { END_ABORT, END_CLOSE } writer_end;

typedef struct write_result {
    bool hit;              /* the armed call came */
    dg_status failure;     /* the first failing call's status, DG_OK if none */
    size_t ticks_written;  /* ticks accepted before it */
    bool closed;           /* close was called (END_CLOSE after a failure, or no failure) */
    dg_status close_st;    /* its status */
} write_result;

static write_result write_with_fault(fault_kind kind, const char *path, const tl_session *s, long k, writer_end end)
{
    write_result res = {false, DG_OK, 0, false, DG_OK};
    dg_flrep_header h = tl_header(60, session.keyframe);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    arm(kind, k);
    dg_status st = dg_flrep_writer_open(&w, path, &h, NULL, &err);
    for (size_t i = 0; st == DG_OK && i < s->count; i++) {
        st = dg_flrep_writer_tick_q(w, s->ticks[i].tick, s->ticks[i].ents, s->ticks[i].n, s->ticks[i].events,
                                    s->ticks[i].nev, &err);
        res.ticks_written += st == DG_OK;
    }
    if (st != DG_OK) {
        assert_fault_status(kind, st, &err, "the writer", k);
        res.failure = st;
    }
    if (w && st != DG_OK && end == END_ABORT) {
        dg_flrep_writer_abort(w);
    } else if (w) {
        dg_error_clear(&err);
        res.closed = true;
        res.close_st = dg_flrep_writer_close(w, &err);   /* frees w whatever it returns */
        if (res.close_st != DG_OK && st == DG_OK) {
            assert_fault_status(kind, res.close_st, &err, "dg_flrep_writer_close", k);
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

static void writer_faults(fault_kind kind, writer_end end)
{
    tl_session s;
    char ref[512], path[512];
    tl_temp_path(ref, sizeof ref, ".flrep");
    tl_record(ref, &session, &s);
    remove(ref);
    tl_temp_path(path, sizeof path, ".flrep");
    const char *what = kind_name(kind);
    long k = 0;
    for (;; k++) {
        assert_true(k < MAX_FAULTS);
        write_result res = write_with_fault(kind, path, &s, k, end);
        bool file = access(path, F_OK) == 0;
        if (res.failure != DG_OK || res.close_st != DG_OK) {
            assert_true(res.hit);
            if (file && res.close_st != DG_OK)
                fail_msg("%s %ld failing: close failed, yet a file was left under the final name", what, k);
            if (file && end == END_ABORT)
                fail_msg("%s %ld failing: an abandoned writer left a file under the final name", what, k);
            if (!file && res.closed && res.close_st == DG_OK)
                fail_msg("%s %ld failing: close succeeded after the failure but left no file", what, k);
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
    print_message("writer (%s on error): %ld %ss, each failed once\n", end == END_ABORT ? "abort" : "close", k, what);
    tl_session_free(&s);
}

static void test_writer_out_of_memory(void **state)
{
    (void)state;
    writer_faults(FAULT_ALLOC, END_ABORT);
    writer_faults(FAULT_ALLOC, END_CLOSE);
}

static void test_writer_io_failure(void **state)
{
    (void)state;
    writer_faults(FAULT_IO, END_ABORT);
    writer_faults(FAULT_IO, END_CLOSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_open),
        cmocka_unit_test(test_reader_keeps_its_place),
        cmocka_unit_test(test_writer_out_of_memory),
        cmocka_unit_test(test_writer_io_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
