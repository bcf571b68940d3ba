/* harness/source_process.c — the process engine: a project's `run` command started through /bin/sh
 * in its own process group, its standard output read once as a state stream (through a FILE whose
 * reads poll both pipes, so a flood on stderr never blocks it and the time limit is kept), the last
 * lines of its stderr kept in a small ring for the message, and its end (exit status, signal, time
 * limit) checked before the stream counts as complete. Nothing it prints is trusted as text. */
#define _GNU_SOURCE
#include "project.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROC_RING 4096     /* bytes of stderr kept (the last ones) */
#define PROC_OUT_BUF (1 << 20)  /* the pipe: the engine and detgate trade the CPU less often */
#define PROC_FILE_BUF (1 << 16) /* the FILE's buffer: a binary tick larger than it is read past it,
                                   straight into the reader's own buffer (one copy fewer) */
#define PROC_TAIL_LINES 3  /* lines of it quoted in a message */
#define PROC_GATHER (1 << 16)  /* a read of fewer bytes found the pipe nearly empty: the engine is the slower */
#define PROC_GATHER_NAP_NS 1000000L /* one sleep then, before the next read: the engine fills the pipe */
#define PROC_TERM_GRACE 1.0 /* seconds between SIGTERM and SIGKILL */
#define PROC_HELD_OPEN_S 5.0 /* the engine gone, its stdout open and silent this long: a process it left holds it */
#define PROC_WATCH_MS 100    /* an empty pipe's poll, in slices this long while the engine runs: its exit is seen */
#define PROC_SLOTS 64

extern char **environ;

/* ---- running children, for the interrupt handler ---------------------------------------------- */

static volatile pid_t g_children[PROC_SLOTS];
static pthread_mutex_t g_children_mu = PTHREAD_MUTEX_INITIALIZER;

static void children_set(pid_t old, pid_t now)
{
    pthread_mutex_lock(&g_children_mu);
    for (size_t i = 0; i < PROC_SLOTS; i++)
        if (g_children[i] == old) {
            g_children[i] = now;
            break;
        }
    pthread_mutex_unlock(&g_children_mu);
}

void dg_harness__process_kill_all(void)
{
    for (size_t i = 0; i < PROC_SLOTS; i++)
        if (g_children[i] > 0)
            kill(-g_children[i], SIGKILL);
}

/* ---- the child ------------------------------------------------------------------------------------ */

typedef struct proc_impl {
    harness__source *inner; /* the state stream parser over `out` */
    FILE *out;
    char *out_buf; /* out's buffer (PROC_FILE_BUF) */
    int fd_out, fd_err;
    pid_t pid;
    bool reaped, timed_out, stopped; /* stopped: detgate sent the signal */
    bool left_open;        /* timed out after the engine exited: a process it left held stdout */
    bool held_quiet;       /* ... and stopped after PROC_HELD_OPEN_S of silence, not by the time limit */
    double quiet_since;    /* the engine gone: when its stdout was first found empty after the last byte */
    int status;
    double deadline, limit_s; /* dg_harness__now() seconds; 0 = none */
    char ring[PROC_RING];
    size_t ring_at, ring_len; /* next write position, bytes held */
    uint64_t ticks, bytes; /* ticks parsed, bytes read from stdout */
    bool gather;           /* the last read was short: sleep once before waiting on the pipe */
    char name[DG_HASH_LOG_NAME_MAX + 1];
} proc_impl;

static void ring_add(proc_impl *p, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p->ring[p->ring_at] = b[i];
        p->ring_at = (p->ring_at + 1) % PROC_RING;
    }
    p->ring_len = p->ring_len + n > PROC_RING ? PROC_RING : p->ring_len + n;
}

/* Reads what stderr has now; closes it at its end. */
static void drain_err(proc_impl *p)
{
    char b[4096];
    ssize_t n = read(p->fd_err, b, sizeof b);
    if (n > 0)
        ring_add(p, b, (size_t)n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(p->fd_err);
        p->fd_err = -1;
    }
}

static void reap(proc_impl *p, bool block)
{
    while (!p->reaped) {
        pid_t r = waitpid(p->pid, &p->status, block ? 0 : WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR))
            p->reaped = true; /* its group stays registered: what it left may still hold stdout */
        if (r == 0 || !block)
            return;
    }
}

/* SIGTERM to the whole group, SIGKILL after a grace period. */
static void stop_child(proc_impl *p)
{
    reap(p, false);
    if (p->reaped)
        return;
    p->stopped = true;
    kill(-p->pid, SIGTERM);
    double until = dg_harness__now() + PROC_TERM_GRACE;
    while (!p->reaped && dg_harness__now() < until) {
        reap(p, false);
        if (!p->reaped)
            poll(NULL, 0, 10);
    }
    if (!p->reaped) {
        kill(-p->pid, SIGKILL);
        reap(p, true);
    }
}

/* Ends the run before its stream's end: the time limit passed, or (quiet) the engine is gone and its
 * stdout has been silent for PROC_HELD_OPEN_S. The engine gone, its stdout not: a process it left
 * in its group holds it. SIGKILL at once: not detgate's child, so no exit to wait for (a zombie
 * still counts as in the group), and the engine it belongs to has ended, so no grace to give. */
static void end_run(proc_impl *p, bool quiet)
{
    p->timed_out = true;
    p->held_quiet = quiet;
    reap(p, false);
    p->left_open = p->reaped;
    if (p->left_open)
        kill(-p->pid, SIGKILL);
    stop_child(p);
}

static bool past_deadline(proc_impl *p)
{
    if (p->deadline <= 0 || dg_harness__now() < p->deadline)
        return false;
    end_run(p, false);
    return true;
}

/* Called with the pipe empty. The engine gone and its stdout silent for PROC_HELD_OPEN_S: nothing
 * more will come from a process it left holding it (with or without a time limit, which may be long
 * or none), so the run ends. */
static bool held_open(proc_impl *p, double now)
{
    reap(p, false);
    if (!p->reaped)
        return false;
    if (p->quiet_since <= 0)
        p->quiet_since = now;
    if (now - p->quiet_since < PROC_HELD_OPEN_S)
        return false;
    end_run(p, true);
    return true;
}

/* Seconds from now to the time limit (HUGE_VAL without one). */
static double limit_left(const proc_impl *p, double now)
{
    return p->deadline > 0 ? p->deadline - now : HUGE_VAL;
}

/* How long an empty pipe is polled: to the time limit, to the end of held_open's silence once the
 * engine is gone, and in slices while it runs, so that its exit is seen. */
static int wait_ms(const proc_impl *p, double now)
{
    double left = fmin(p->reaped ? p->quiet_since + PROC_HELD_OPEN_S - now : PROC_WATCH_MS / 1000.0,
                       limit_left(p, now));
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* One sleep of PROC_GATHER_NAP_NS, cut to the time limit. An engine slower than detgate writes in
 * pieces (stdio's 4 KiB): waking on each costs detgate more than parsing it, so after a short read
 * it waits once while the (1 MiB) pipe fills, then reads what came in one go. One sleep, not many
 * short ones: each is a wake-up too. */
static void gather_nap(proc_impl *p)
{
    double left = fmin(limit_left(p, dg_harness__now()), PROC_GATHER_NAP_NS / 1e9);
    p->gather = false;
    if (left > 0)
        nanosleep(&(struct timespec){0, (long)(left * 1e9)}, NULL);
}

/* The FILE's read: stdout read while it has bytes (it is non-blocking); when it is empty, after a
 * short read one nap (gather_nap), else waited for while emptying stderr, within the time limit. A
 * flood on stderr cannot block it: an engine stuck on a full stderr writes nothing to stdout, which
 * then comes up empty and is polled with stderr. */
static ssize_t pipe_read(void *cookie, char *buf, size_t size)
{
    proc_impl *p = cookie;
    while (p->fd_out >= 0) {
        if (past_deadline(p)) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t n = read(p->fd_out, buf, size);
        if (n > 0) {
            p->bytes += (uint64_t)n;
            p->gather = (size_t)n < size && n < PROC_GATHER;
            p->quiet_since = 0;
            return n;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (p->gather) {
                gather_nap(p);
                continue;
            }
            double now = dg_harness__now();
            if (held_open(p, now)) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd fds[2] = {{p->fd_out, POLLIN, 0}, {p->fd_err, POLLIN, 0}};
            int r = poll(fds, 2, wait_ms(p, now));
            if (r < 0 && errno != EINTR)
                return -1;
            if (r > 0 && p->fd_err >= 0 && fds[1].revents)
                drain_err(p);
            continue;
        }
        close(p->fd_out);
        p->fd_out = -1;
        return n < 0 ? -1 : 0;
    }
    return 0;
}

/* Bytes pipe_read has returned so far (the binary stream parser's raw reader: what f holds is the
 * difference to what the parser took from it). */
static uint64_t pipe_total(void *cookie)
{
    const proc_impl *p = cookie;
    return p->bytes;
}

/* What stderr still holds once the child is gone (a grandchild keeping it open: cut short). */
static void drain_rest(proc_impl *p)
{
    for (int k = 0; k < 256 && p->fd_err >= 0; k++) { /* at most 1 MiB: a grandchild may write forever */
        struct pollfd fd = {p->fd_err, POLLIN, 0};
        if (poll(&fd, 1, 0) <= 0)
            break;
        drain_err(p);
    }
}

/* After the stream's end: the rest of stderr, and the child's exit (within the time limit). */
static void wait_child(proc_impl *p)
{
    while (!p->reaped) {
        reap(p, false);
        if (p->reaped || past_deadline(p))
            break;
        if (p->fd_err >= 0) {
            struct pollfd fd = {p->fd_err, POLLIN, 0};
            if (poll(&fd, 1, 20) > 0)
                drain_err(p);
        } else if (p->deadline <= 0) {
            reap(p, true);
        } else {
            poll(NULL, 0, 10);
        }
    }
    drain_rest(p);
}

/* " | "-joined, escaped last lines of stderr, at most cap bytes, the end kept. */
static void stderr_tail(const proc_impl *p, char *out, size_t cap)
{
    char lin[PROC_RING + 1];
    size_t n = p->ring_len, start = (p->ring_at + PROC_RING - n) % PROC_RING;
    for (size_t i = 0; i < n; i++)
        lin[i] = p->ring[(start + i) % PROC_RING];
    while (n > 0 && (lin[n - 1] == '\n' || lin[n - 1] == '\r'))
        n--;
    size_t from = n, lines = 0;
    while (from > 0 && lines < PROC_TAIL_LINES)
        if (lin[--from] == '\n' && ++lines == PROC_TAIL_LINES)
            from++;
    if (n - from > cap / 2) /* keep the end: what it said last */
        from = n - cap / 2;
    out[0] = 0;
    size_t o = 0;
    for (size_t i = from; i < n && o + 8 < cap;) {
        size_t e = i;
        while (e < n && lin[e] != '\n')
            e++;
        if (o)
            o += (size_t)snprintf(out + o, cap - o, " | ");
        o += dg_escape_bytes(out + o, cap - o, lin + i, e - i > 0 && lin[e - 1] == '\r' ? e - i - 1 : e - i);
        i = e + 1;
    }
}

/* Replaces err with what went wrong with the child: time limit, signal, exit status, or the stream. */
static void diagnose(proc_impl *p, bool stream_failed, dg_error *err)
{
    char inner[400] = "", tail[170];
    if (stream_failed)
        dg_error_format(err, inner, sizeof inner);
    for (double until = dg_harness__now() + 0.5; !p->reaped && stream_failed && dg_harness__now() < until;)
        reap(p, false), poll(NULL, 0, 5); /* a bad stream may come from an engine dying on its own: say how */
    stop_child(p);
    drain_rest(p);
    stderr_tail(p, tail, sizeof tail);
    char what[300];
    unsigned long long t = (unsigned long long)p->ticks;
    const char *ts = p->ticks == 1 ? "" : "s";
    int code = WIFEXITED(p->status) ? WEXITSTATUS(p->status) : 0;
    char gone[48]; /* how the engine ended, where a process it left held stdout */
    if (WIFEXITED(p->status))
        snprintf(gone, sizeof gone, "exited (status %d)", code);
    else
        snprintf(gone, sizeof gone, "was killed (signal %d)", WTERMSIG(p->status));
    if (p->held_quiet)
        snprintf(what, sizeof what, "the engine %s but its standard output stayed open, nothing written on it for "
                 "%g s after: a process it started still held it (stopped; redirect that one's output) after %llu "
                 "tick%s", gone, PROC_HELD_OPEN_S, t, ts);
    else if (p->timed_out && p->left_open)
        snprintf(what, sizeof what, "the engine %s but its standard output stayed open until the time limit of "
                 "%g s: a process it started still held it (stopped; redirect that one's output) after %llu tick%s",
                 gone, p->limit_s, t, ts);
    else if (p->timed_out)
        snprintf(what, sizeof what, "the engine ran past its time limit of %g s (stopped) after %llu tick%s",
                 p->limit_s, t, ts);
    else if (WIFSIGNALED(p->status) && !(p->stopped && stream_failed))
        snprintf(what, sizeof what, "the engine was killed by signal %d (%s) after %llu tick%s", WTERMSIG(p->status),
                 strsignal(WTERMSIG(p->status)), t, ts);
    else if (code > 128 && code < 128 + 65 && !p->stopped) /* the shell's way to tell a child's signal */
        snprintf(what, sizeof what, "the engine was killed by signal %d (%s; the shell exited with status %d) after "
                 "%llu tick%s", code - 128, strsignal(code - 128), code, t, ts);
    else if (code != 0 && !p->stopped)
        snprintf(what, sizeof what, "the engine exited with status %d after %llu tick%s", code, t, ts);
    else if (p->bytes == 0)
        snprintf(what, sizeof what, "the engine exited 0 without writing anything on its standard output");
    else if (stream_failed)
        snprintf(what, sizeof what, "the engine's stream is malformed after %llu tick%s: %.230s", t, ts, inner);
    else
        snprintf(what, sizeof what, "the engine exited 0 without writing a tick");
    dg_error_clear(err);
    dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->name, "%s; %s%s", what, tail[0] ? "its stderr ended: " : "no stderr",
                 tail);
}

/* ---- the source --------------------------------------------------------------------------------- */

static int proc_next(harness__source *s, harness__frame *f, dg_error *err)
{
    proc_impl *p = s->impl;
    int rc = p->inner->next(p->inner, f, err);
    if (rc == 1) {
        p->ticks++;
        return 1;
    }
    if (rc < 0 || p->timed_out) {
        diagnose(p, true, err);
        return -1;
    }
    wait_child(p);
    if (p->timed_out || !WIFEXITED(p->status) || WEXITSTATUS(p->status) != 0 || p->ticks == 0) {
        diagnose(p, false, err);
        return -1;
    }
    return 0;
}

static dg_status proc_rewind(harness__source *s, dg_error *err)
{
    proc_impl *p = s->impl;
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, p->name,
                        "a process engine's stream is read once and not re-run: no state diff from the record side");
}

static void proc_destroy(harness__source *s)
{
    proc_impl *p = s->impl;
    if (!p)
        return;
    if (p->pid > 0) {
        stop_child(p);
        children_set(p->pid, 0);
    }
    dg_harness__source_free(p->inner);
    if (p->out)
        fclose(p->out);
    free(p->out_buf);
    if (p->fd_out >= 0)
        close(p->fd_out);
    if (p->fd_err >= 0)
        close(p->fd_err);
    free(p);
}

/* '...' with every ' as '\'' : the path reaches the shell as one word, whatever it holds. */
static bool build_command(char *out, size_t cap, const char *tmpl, const char *scenario)
{
    size_t o = 0;
    for (const char *s = tmpl; *s;) {
        if (strncmp(s, "{scenario}", 10) == 0) {
            if (o + 1 < cap)
                out[o++] = '\'';
            for (const char *c = scenario; *c && o + 5 < cap; c++) {
                if (*c == '\'') {
                    memcpy(out + o, "'\\''", 4);
                    o += 4;
                } else {
                    out[o++] = *c;
                }
            }
            if (o + 1 < cap)
                out[o++] = '\'';
            s += 10;
        } else if (o + 1 < cap) {
            out[o++] = *s++;
        } else {
            return false;
        }
    }
    if (o + 1 >= cap)
        return false;
    out[o] = 0;
    return true;
}

/* fork + exec /bin/sh -c cmd in dir, stdin /dev/null, stdout and stderr to the pipes; only
 * async-signal-safe calls in the child (gate --jobs forks from threads). */
static dg_status spawn(proc_impl *p, char *cmd, const char *dir, dg_error *err)
{
    int po[2], pe[2];
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || pipe2(po, O_CLOEXEC) != 0) {
        if (null >= 0)
            close(null);
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->name, "cannot create a pipe: %s", strerror(errno));
    }
    /* stdout non-blocking on detgate's side: pipe_read polls only when it is empty */
    if (fcntl(po[0], F_SETFL, O_NONBLOCK) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]), close(po[1]), close(null);
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->name, "cannot create a pipe: %s", strerror(errno));
    }
    /* The child may run (and be seen running) before the parent is scheduled again: an interrupt is
     * held off until its group exists and is registered, so the handler cannot miss it. */
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT), sigaddset(&hold, SIGTERM), sigaddset(&hold, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hold, &old);
    char *argv[] = {(char *)"sh", (char *)"-c", cmd, NULL}; /* built before fork: execve is all the child calls */
    pthread_mutex_lock(&g_children_mu);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL); /* one thread in the child */
        setpgid(0, 0);
        if (chdir(dir) != 0) {
            static const char m[] = "detgate: cannot enter the project folder\n";
            (void)!write(pe[1], m, sizeof m - 1);
            _exit(126);
        }
        dup2(null, 0), dup2(po[1], 1), dup2(pe[1], 2);
#ifdef SCHED_BATCH
        /* A batch job (same share of the CPU, same nice): woken by detgate's read of the pipe it
         * waits to write, it no longer preempts detgate on detgate's core for each piece (half of
         * detgate's context switches, and its caches); best effort */
        (void)sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){.sched_priority = 0});
#endif
        execve("/bin/sh", argv, environ);
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid); /* both sides set it: whichever runs first, the group exists before a kill */
    for (size_t i = 0; pid > 0 && i < PROC_SLOTS; i++)
        if (g_children[i] == 0) {
            g_children[i] = pid;
            break;
        }
    pthread_mutex_unlock(&g_children_mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(po[1]), close(pe[1]), close(null);
    if (pid < 0) {
        close(po[0]), close(pe[0]);
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->name, "cannot start the engine: %s", strerror(errno));
    }
    p->pid = pid;
#ifdef F_SETPIPE_SZ
    /* A 1 MiB pipe (Linux's default ceiling for any user): the engine and detgate trade the CPU
     * 16 times less often than through the 64 KiB default; refused, the default pipe still works. */
    (void)fcntl(po[0], F_SETPIPE_SZ, PROC_OUT_BUF);
#endif
    p->fd_out = po[0];
    p->fd_err = pe[0];
    return DG_OK;
}

dg_status dg_harness__source_process(harness__source **out, const char *run, const char *dir, const char *scenario,
                                  double time_limit_s, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    char abs[HARNESS_PROJECT_PATH_MAX], cmd[2 * HARNESS_PROJECT_PATH_MAX];
    proc_impl *p = calloc(1, sizeof *p);
    harness__source *s = calloc(1, sizeof *s);
    if (!p || !s) {
        free(p);
        free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, scenario, "out of memory");
    }
    p->fd_out = p->fd_err = -1;
    dg_harness__scenario_name(scenario, p->name, sizeof p->name);
    *s = (harness__source){.impl = p, .next = proc_next, .rewind = proc_rewind, .destroy = proc_destroy};
    dg_status st = DG_OK;
    if (!realpath(scenario, abs))
        st = dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, scenario, "no such scenario: %s", strerror(errno));
    else if (!build_command(cmd, sizeof cmd, run, abs))
        st = dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, scenario, "the run command is too long");
    if (st == DG_OK)
        st = spawn(p, cmd, dir, err);
    if (st == DG_OK) {
        p->limit_s = time_limit_s;
        p->deadline = time_limit_s > 0 ? dg_harness__now() + time_limit_s : 0;
        p->out = fopencookie(p, "r", (cookie_io_functions_t){.read = pipe_read});
        p->out_buf = malloc(PROC_FILE_BUF);
        if (!p->out || !p->out_buf || setvbuf(p->out, p->out_buf, _IOFBF, PROC_FILE_BUF) != 0)
            st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, scenario, "out of memory");
        else /* touched now: how much of it the reads touch depends on timing, and so would the peak RSS */
            memset(p->out_buf, 0, PROC_FILE_BUF);
    }
    char label[DG_HASH_LOG_NAME_MAX + 16];
    snprintf(label, sizeof label, "%s (stdout)", p->name);
    harness__raw_reader raw = {.read = pipe_read, .total = pipe_total, .cookie = p};
    bool zst = st == DG_OK && dg_harness__zstd_ahead(p->out); /* a compressed stdout: decompressed as read */
    dg_status sst = st != DG_OK ? DG_OK
                    : zst ? dg_harness__source_zstd_stream(&p->inner, p->out, label, scenario, keyframe, err)
                          : dg_harness__source_stream_raw(&p->inner, p->out, &raw, label, scenario, keyframe, err);
    if (sst != DG_OK) {
        diagnose(p, true, err);
        st = err->code;
    }
    if (st == DG_OK && !dg_harness__decl_copy(&s->decl, &p->inner->decl)) /* the stream's declared fields */
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, scenario, "out of memory");
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    snprintf(s->name, sizeof s->name, "%s", p->inner->name);
    s->hdr = p->inner->hdr;
    s->expected_ticks = 0;
    *out = s;
    return DG_OK;
}
