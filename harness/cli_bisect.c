/* harness/cli_bisect.c — the commands that build the project elsewhere: `detgate bisect` (records a
 * scenario at the good revision, then drives `git bisect run` in a separate worktree, each step
 * built in its own folder) and `detgate matrix` (sim_stub under several compilers and flags, the
 * first divergent tick for every pair). Your working tree is never touched. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH_CAP 4096
#define WORK_CAP 1024 /* work folders, the repository, the scenario: room for the names built on them */

/* ---- running other programs ---------------------------------------------------------------------- */

/* The signal that interrupted `bisect` (0: none). Its handler only records it: the parent then stops
 * its child, removes the worktree with git and its folder, and dies of the signal (bisect_cleanup). */
static volatile sig_atomic_t bisect_sig;
static void bisect_on_signal(int sig) { bisect_sig = sig; }

/* Runs argv (execvp) in cwd (NULL = here) with stdout+stderr appended to log (NULL = inherited),
 * in a process group of its own, so an interrupt reaches it (and what it started: git bisect run's
 * steps, cmake, make) through the parent. Returns the exit status, or -1 when it could not run / was
 * killed; once bisect was interrupted, only cleanup commands (even_interrupted) run. */
static int run_child(char *const argv[], const char *cwd, const char *log, bool even_interrupted)
{
    if (bisect_sig && !even_interrupted)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        if (cwd && chdir(cwd) != 0)
            _exit(127);
        if (log) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0)
                _exit(127);
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: the child may not have run yet when a signal comes */
    int st;
    bool forwarded = false;
    for (;;) {
        if (bisect_sig && !forwarded && !even_interrupted) {
            kill(-pid, bisect_sig);
            forwarded = true;
        }
        if (waitpid(pid, &st, 0) >= 0)
            break;
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(char *const argv[], const char *cwd, const char *log) { return run_child(argv, cwd, log, false); }

/* First line of `git -C repo A1 A2 A3 A4` output into out ("" on failure); trailing arguments may be
 * NULL (the list ends at the first NULL). */
static bool git_line(const char *repo, char *out, size_t cap, const char *a1, const char *a2, const char *a3,
                     const char *a4)
{
    int fds[2];
    out[0] = 0;
    if (pipe(fds) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("git", "git", "-C", repo, a1, a2, a3, a4, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < cap && (got = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    char sink[256];
    while (read(fds[0], sink, sizeof sink) > 0) {
    }
    close(fds[0]);
    out[n] = 0;
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = 0;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        out[0] = 0;
        return false;
    }
    return out[0] != 0;
}

static bool self_exe(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0)
        return false;
    out[n] = 0;
    return true;
}

static bool absolute(const char *in, char *out, size_t cap)
{
    char buf[PATH_MAX];
    if (!realpath(in, buf) || strlen(buf) >= cap)
        return false;
    snprintf(out, cap, "%s", buf);
    return true;
}

/* Configures and builds the detgate target of the tree at src into bdir (log appended). */
static bool build_tree(const char *src, const char *bdir, const char *build_type, const char *cc,
                       const char *sim_flags, const char *log)
{
    char s_arg[PATH_CAP + 8], b_arg[PATH_CAP + 8], bt[80], ccarg[200], simf[300];
    snprintf(s_arg, sizeof s_arg, "-S%s", src);
    snprintf(b_arg, sizeof b_arg, "-B%s", bdir);
    snprintf(bt, sizeof bt, "-DCMAKE_BUILD_TYPE=%s", build_type);
    snprintf(ccarg, sizeof ccarg, "-DCMAKE_C_COMPILER=%s", cc ? cc : "cc");
    snprintf(simf, sizeof simf, "-DDETGATE_SIM_FLAGS=%s", sim_flags ? sim_flags : "");
    char *conf[] = {"cmake", s_arg, b_arg, bt, ccarg, simf, "-DDETGATE_MODULES=codec;hash;sim_stub;reports;harness",
                    "-DDETGATE_TESTS=OFF", "-DDETGATE_BENCH=OFF", "-DDETGATE_FUZZ=OFF", "-DDETGATE_WERROR=OFF", NULL};
    if (run(conf, NULL, log) != 0)
        return false;
    char *bld[] = {"cmake", "--build", (char *)bdir, "--target", "detgate", "-j2", NULL};
    return run(bld, NULL, log) == 0;
}

static bool built_binary(const char *bdir, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/harness/detgate", bdir);
    return n > 0 && (size_t)n < cap;
}

/* Records scenario with the detgate built in bdir (.flrep with its hash log, or RPLY). */
static bool record_with(const char *bin, const char *scn, const char *out, const char *hash_log, bool rply,
                        const char *log)
{
    char *flrep[] = {(char *)bin, "record", (char *)scn, "-o", (char *)out, "--hash-log", (char *)hash_log, NULL};
    char *rp[] = {(char *)bin, "record", (char *)scn, "-o", (char *)out, "--format", "rply", NULL};
    return run(rply ? rp : flrep, NULL, log) == 0;
}

static const char *rec_ext(bool rply) { return rply ? "rply" : "flrep"; }

/* Compares two recordings into a new "diff" check of a scenario of rep. Returns the first
 * divergent tick (TICK_NONE when equal), or UINT64_MAX-1 on error. */
static uint64_t compare_into(dg_report *rep, const char *name, const char *a, const char *b, bool rply,
                             dg_error *err)
{
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, rec_ext(rply));
    dg_report_check *c = sc ? dg_report_add_check(sc, "diff", DG_REPORT_PASS) : NULL;
    if (!c)
        return UINT64_MAX - 1;
    uint64_t nd = rply ? harness__rply_compare_files(c, sc, a, b, err) : harness__compare_files(c, sc, a, b, err);
    if (nd == UINT64_MAX) {
        char buf[600];
        dg_error_format(err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        return UINT64_MAX - 1;
    }
    c->status = nd ? DG_REPORT_FAIL : DG_REPORT_PASS;
    if (nd)
        dg_report_check_set_message(c, "%llu tick%s differ%s from the good recording; first at tick %llu",
                                    (unsigned long long)nd, dg_report_plural_s(nd), nd == 1 ? "s" : "",
                                    (unsigned long long)c->first_tick);
    else
        dg_report_check_set_message(c, "identical to the good recording");
    return nd ? c->first_tick : DG_REPORT_TICK_NONE;
}

/* ---- bisect-step (what git bisect run calls) -------------------------------------------------------- */

enum { S_WORK = 0x500, S_SCN, S_GOOD, S_REPO, S_TYPE, S_GOODREV, S_BADREV, S_KEEP, S_FORMAT };

int cli_bisect_step(int argc, char **argv)
{
    static const struct option opts[] = {{"work", 1, 0, S_WORK}, {"scenario", 1, 0, S_SCN},
                                         {"good-rec", 1, 0, S_GOOD}, {"repo", 1, 0, S_REPO},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         {0, 0, 0, 0}};
    const char *work = NULL, *scn = NULL, *good = NULL, *repo = ".", *type = "Release";
    bool rply = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case S_WORK: work = optarg; break;
        case S_SCN: scn = optarg; break;
        case S_GOOD: good = optarg; break;
        case S_REPO: repo = optarg; break;
        case S_TYPE: type = optarg; break;
        case S_FORMAT: rply = strcmp(optarg, "rply") == 0; break;
        default: /* git bisect run: "cannot test" */
            fprintf(stderr, "detgate bisect-step: unknown option or missing value '%s'\n", argv[optind - 1]);
            return CLI_UNTESTED;
        }
    }
    if (!work || !scn || !good)
        return CLI_UNTESTED;
    char sha[64], bdir[WORK_CAP * 2], bin[PATH_CAP], rec[PATH_CAP], hl[PATH_CAP], log[PATH_CAP], steps[PATH_CAP];
    if (!git_line(repo, sha, sizeof sha, "rev-parse", "HEAD", NULL, NULL))
        return CLI_UNTESTED;
    snprintf(bdir, sizeof bdir, "%s/build-%s", work, sha);
    snprintf(rec, sizeof rec, "%s/rec-%s.%s", work, sha, rec_ext(rply));
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", work, sha);
    snprintf(log, sizeof log, "%s/build-%s.log", work, sha);
    snprintf(steps, sizeof steps, "%s/steps.txt", work);
    built_binary(bdir, bin, sizeof bin);
    int verdict;
    uint64_t first = DG_REPORT_TICK_NONE;
    if (!build_tree(repo, bdir, type, NULL, NULL, log) || !record_with(bin, scn, rec, hl, rply, log)) {
        verdict = CLI_UNTESTED;
    } else {
        dg_error err;
        dg_error_clear(&err);
        dg_report *rep = cli_report_new("bisect", &err);
        first = rep ? compare_into(rep, "step", good, rec, rply, &err) : UINT64_MAX - 1;
        dg_report_free(rep);
        verdict = first == UINT64_MAX - 1 ? CLI_UNTESTED : first == DG_REPORT_TICK_NONE ? CLI_EQUAL : CLI_DIVERGED;
    }
    FILE *f = fopen(steps, "a");
    if (f) {
        fprintf(f, "%s %d %llu\n", sha, verdict, (unsigned long long)first);
        fclose(f);
    }
    return verdict;
}

/* ---- bisect ---------------------------------------------------------------------------------------- */

static bool make_work_dir(const char *given, char *out, size_t cap)
{
    if (given) {
        if (!cli_mkdirs(given))
            return false;
        return absolute(given, out, cap);
    }
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(out, cap, "%s/dg-bisect-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return n > 0 && (size_t)n < cap && mkdtemp(out) != NULL;
}

static void remove_tree(const char *path)
{
    char *argv[] = {"rm", "-rf", (char *)path, NULL};
    run_child(argv, NULL, NULL, true);
}

/* ---- the work folder's owner: an interrupted run cleans up, a killed one is cleaned at the next --- */

#define OWNER_FILE "owner.pid"

static void write_owner(const char *work)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/" OWNER_FILE, work);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
}

/* True when dir carries an owner file naming a process that no longer exists. */
static bool owner_dead(const char *dir)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/" OWNER_FILE, dir);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (!f)
        return false;
    bool read_ok = fscanf(f, "%ld", &pid) == 1;
    fclose(f);
    return read_ok && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Unregisters the worktree wt (git run inside it finds its repository, whichever that is), then
 * prunes repo's list of worktrees whose folders are gone. */
static void remove_worktree(const char *repo, const char *wt)
{
    char *rm[] = {"git", "-C", (char *)wt, "worktree", "remove", "--force", (char *)wt, NULL};
    char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
    struct stat st;
    if (stat(wt, &st) == 0)
        run_child(rm, NULL, "/dev/null", true);
    run_child(prune, NULL, "/dev/null", true);
}

/* Work folders of earlier runs that were killed before they could clean up (dg-bisect-* in TMPDIR,
 * owner dead): their worktree unregistered, the folder removed. */
static void clean_stale(const char *repo)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    DIR *d = opendir(tmp);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char dir[PATH_CAP + 260], wt[PATH_CAP + 280];
        if (strncmp(e->d_name, "dg-bisect-", 10) != 0)
            continue;
        int n = snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
        if (n < 0 || (size_t)n >= sizeof dir || !owner_dead(dir))
            continue;
        snprintf(wt, sizeof wt, "%s/worktree", dir);
        remove_worktree(repo, wt);
        remove_tree(dir);
        fprintf(stderr, "detgate bisect: removed the work folder of an earlier run that was killed: %s\n", dir);
    }
    if (d)
        closedir(d);
    char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
    run_child(prune, NULL, "/dev/null", true);
}

static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = bisect_on_signal; /* no SA_RESTART: waitpid returns to forward it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* A failed run's log outlives the work folder: copied (temp + rename) to where the messages said. */
static void keep_log(const char *log, const char *kept)
{
    char dir[PATH_CAP], tmp[PATH_CAP];
    snprintf(dir, sizeof dir, "%s", kept);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    struct stat st;
    dg_error err;
    dg_error_clear(&err);
    tmp[0] = 0;
    bool ok = stat(log, &st) == 0 && (!slash || cli_mkdirs(dir)) &&
              harness__temp_path(tmp, sizeof tmp, slash ? dir : ".", "bisect", ".log") &&
              harness__copy_prefix(log, tmp, (uint64_t)st.st_size, &err) == DG_OK && rename(tmp, kept) == 0;
    if (!ok) {
        if (tmp[0])
            remove(tmp);
        fprintf(stderr, "detgate bisect: could not keep the log at %s\n", kept);
    }
}

typedef struct bisect_ctx {
    char repo[WORK_CAP], work[WORK_CAP / 2], wt[WORK_CAP], scn[WORK_CAP], self[WORK_CAP];
    char shown_log[PATH_CAP]; /* the log named in messages: where it is kept after a failure */
    char good[64], bad[64];
    const char *type;
    bool rply;        /* record through the RPLY writer (--format rply) */
} bisect_ctx;

/* Builds and records one revision directly (the endpoints): checks it out in the worktree first. */
static int test_revision(const bisect_ctx *b, const char *sha, const char *good_rec)
{
    char *co[] = {"git", "-C", (char *)b->wt, "checkout", "-q", "--detach", (char *)sha, NULL};
    char log[PATH_CAP];
    snprintf(log, sizeof log, "%s/git.log", b->work);
    if (run(co, NULL, log) != 0)
        return CLI_UNTESTED;
    char *step[] = {(char *)b->self, "bisect-step", "--work", (char *)b->work, "--scenario", (char *)b->scn,
                    "--good-rec", (char *)good_rec, "--repo", (char *)b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)rec_ext(b->rply), NULL};
    return run(step, NULL, NULL);
}

/* Reads steps.txt into the report's bisect steps; returns the first tick recorded for `sha`. */
static uint64_t load_steps(dg_report *rep, const char *work, const char *sha)
{
    char path[PATH_CAP], line[256];
    snprintf(path, sizeof path, "%s/steps.txt", work);
    FILE *f = fopen(path, "r");
    uint64_t first = DG_REPORT_TICK_NONE;
    while (f && fgets(line, sizeof line, f)) {
        char s[64];
        int v;
        unsigned long long t;
        if (sscanf(line, "%63s %d %llu", s, &v, &t) != 3)
            continue;
        dg_report_bisect_add_step(rep, s, v == 0 ? DG_REPORT_GOOD : v == 125 ? DG_REPORT_SKIP : DG_REPORT_BAD, t);
        if (strcmp(s, sha) == 0)
            first = t;
    }
    if (f)
        fclose(f);
    return first;
}

static bool find_first_bad(const char *log, char *sha, size_t cap)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, " is the first bad commit");
        if (p && p - line >= 40) {
            snprintf(sha, cap, "%.40s", p - 40);
            found = true;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static int bisect_run(bisect_ctx *b, dg_report *rep, const char *scenario_arg)
{
    char good_rec[PATH_CAP], good_hl[PATH_CAP], log[PATH_CAP];
    snprintf(good_rec, sizeof good_rec, "%s/good.%s", b->work, rec_ext(b->rply));
    snprintf(good_hl, sizeof good_hl, "%s/good.hashlog", b->work);
    snprintf(log, sizeof log, "%s/bisect.log", b->work);
    char *wt_add[] = {"git", "-C", b->repo, "worktree", "add", "-q", "--detach", b->wt, b->good, NULL};
    if (run(wt_add, NULL, log) != 0) {
        if (!bisect_sig)
            fprintf(stderr, "detgate bisect: cannot create a worktree of %s (see %s)\n", b->repo, b->shown_log);
        return CLI_UNTESTED;
    }
    /* 1. the good recording, once */
    char bdir[WORK_CAP * 2], bin[PATH_CAP];
    snprintf(bdir, sizeof bdir, "%s/build-good", b->work);
    built_binary(bdir, bin, sizeof bin);
    fprintf(stderr, "detgate bisect: building the good revision %.12s\n", b->good);
    if (!build_tree(b->wt, bdir, b->type, NULL, NULL, log) || !record_with(bin, b->scn, good_rec, good_hl, b->rply, log)) {
        if (!bisect_sig)
            fprintf(stderr, "detgate bisect: the good revision %.12s cannot be built or cannot record %s (see %s)\n",
                    b->good, scenario_arg, b->shown_log);
        return CLI_UNTESTED;
    }
    /* 2. the bad end must really differ, or there is nothing to bisect */
    fprintf(stderr, "detgate bisect: testing the bad revision %.12s\n", b->bad);
    int vb = test_revision(b, b->bad, good_rec);
    if (bisect_sig)
        return CLI_UNTESTED;
    if (vb != CLI_DIVERGED) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        fprintf(stderr, "detgate bisect: the bad revision %s (%s)\n", b->bad,
                vb == CLI_EQUAL ? "records the same as the good one: nothing to bisect" : "cannot be built or tested");
        return vb == CLI_EQUAL ? CLI_EQUAL : CLI_UNTESTED;
    }
    /* 3. git bisect run, each step built in its own folder */
    char *start[] = {"git", "-C", b->wt, "bisect", "start", b->bad, b->good, NULL};
    char *runv[] = {"git", "-C", b->wt, "bisect", "run", b->self, "bisect-step", "--work", b->work, "--scenario",
                    b->scn, "--good-rec", good_rec, "--repo", b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)rec_ext(b->rply), NULL};
    char *reset[] = {"git", "-C", b->wt, "bisect", "reset", NULL}; /* takes no -q: it would read it as a commit */
    fprintf(stderr, "detgate bisect: git bisect run over %.12s..%.12s\n", b->good, b->bad);
    bool ran = run(start, NULL, log) == 0 && run(runv, NULL, log) == 0;
    char first_bad[64] = "";
    bool found = ran && find_first_bad(log, first_bad, sizeof first_bad);
    run_child(reset, NULL, log, true);
    if (bisect_sig)
        return CLI_UNTESTED;
    if (!found) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        fprintf(stderr, "detgate bisect: git bisect did not name a first bad commit (see %s)\n", b->shown_log);
        return CLI_UNTESTED;
    }
    /* 4. the first bad commit, its first divergent tick and the field diff */
    char subject[300] = "";
    git_line(b->repo, subject, sizeof subject, "show", "-s", "--format=%s", first_bad);
    char rec[PATH_CAP];
    snprintf(rec, sizeof rec, "%s/rec-%s.%s", b->work, first_bad, rec_ext(b->rply));
    dg_error err;
    dg_error_clear(&err);
    uint64_t first = compare_into(rep, scenario_arg, good_rec, rec, b->rply, &err);
    load_steps(rep, b->work, first_bad);
    dg_report_set_bisect(rep, scenario_arg, first_bad, subject, b->good, b->bad, first);
    printf("first bad commit: %s %s\n", first_bad, subject);
    if (first < UINT64_MAX - 1)
        printf("first divergent tick: %llu\n", (unsigned long long)first);
    return CLI_DIVERGED;
}

int cli_bisect(int argc, char **argv)
{
    static const struct option opts[] = {{"good", 1, 0, S_GOODREV}, {"bad", 1, 0, S_BADREV},
                                         {"scenario", 1, 0, S_SCN}, {"repo", 1, 0, S_REPO},
                                         {"work", 1, 0, S_WORK}, {"keep", 0, 0, S_KEEP},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         CLI_REPORT_OPTS, {0, 0, 0, 0}};
    const char *good = NULL, *bad = NULL, *scn = NULL, *repo = ".", *work = NULL;
    bool keep = false;
    cli_reports rp = {0};
    bisect_ctx b;
    memset(&b, 0, sizeof b);
    b.type = "Release";
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        switch (c) {
        case S_GOODREV: good = optarg; break;
        case S_BADREV: bad = optarg; break;
        case S_SCN: scn = optarg; break;
        case S_REPO: repo = optarg; break;
        case S_WORK: work = optarg; break;
        case S_KEEP: keep = true; break;
        case S_TYPE: b.type = optarg; break;
        case S_FORMAT:
            if (strcmp(optarg, "flrep") != 0 && strcmp(optarg, "rply") != 0)
                return cli_usage_error("bisect", "--format: expected flrep or rply, found '%s'", optarg);
            b.rply = strcmp(optarg, "rply") == 0;
            break;
        default: return cli_usage_error("bisect", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (!good || !bad || !scn || optind != argc)
        return cli_usage_error("bisect", "--good REV --bad REV --scenario S are required");
    char top[WORK_CAP], spec[200];
    if (!git_line(repo, top, sizeof top, "rev-parse", "--show-toplevel", NULL, NULL))
        return cli_usage_error("bisect", "%s is not inside a git repository", repo);
    snprintf(b.repo, sizeof b.repo, "%s", top);
    snprintf(spec, sizeof spec, "%s^{commit}", good);
    if (!git_line(b.repo, b.good, sizeof b.good, "rev-parse", "--verify", spec, NULL))
        return cli_usage_error("bisect", "--good: no commit '%s'", good);
    snprintf(spec, sizeof spec, "%s^{commit}", bad);
    if (!git_line(b.repo, b.bad, sizeof b.bad, "rev-parse", "--verify", spec, NULL))
        return cli_usage_error("bisect", "--bad: no commit '%s'", bad);
    char scn_path[PATH_CAP];
    if (!cli_resolve_scenario(scn, NULL, scn_path, sizeof scn_path))
        return cli_usage_error("bisect", "no scenario '%s'", scn);
    const char *inputs[] = {scn_path};
    int prc = cli_reports_prepare(&rp, "bisect", inputs, 1);
    if (prc)
        return prc;
    clean_stale(b.repo);
    if (work && owner_dead(work)) { /* the same --work folder, left by a killed run */
        char wt[PATH_CAP + 16];
        snprintf(wt, sizeof wt, "%s/worktree", work);
        remove_worktree(b.repo, wt);
    }
    catch_interrupts(); /* from here on an interrupt is handled below, after the child has stopped */
    if (!make_work_dir(work, b.work, sizeof b.work) || !self_exe(b.self, sizeof b.self)) {
        fprintf(stderr, "detgate bisect: cannot create the work folder %s: %s\n", work ? work : "in TMPDIR",
                strerror(errno));
        return work ? CLI_USAGE : CLI_UNTESTED; /* a --work path given is checked like any output: 2 */
    }
    write_owner(b.work);
    bool drop_work = !keep && !work;
    if (!drop_work)
        snprintf(b.shown_log, sizeof b.shown_log, "%s/bisect.log", b.work);
    else if (rp.dir)
        snprintf(b.shown_log, sizeof b.shown_log, "%s/bisect.log", rp.dir);
    else
        snprintf(b.shown_log, sizeof b.shown_log, "detgate-bisect.log");
    /* every revision records the same scenario text: the one in the current tree */
    snprintf(b.scn, sizeof b.scn, "%s/scenario.scn", b.work);
    dg_error err;
    dg_error_clear(&err);
    struct stat sst;
    if (stat(scn_path, &sst) != 0 ||
        harness__copy_prefix(scn_path, b.scn, (uint64_t)sst.st_size, &err) != DG_OK) {
        cli_print_error("bisect", &err);
        return CLI_UNTESTED;
    }
    snprintf(b.wt, sizeof b.wt, "%s/worktree", b.work);
    dg_report *rep = cli_report_new("bisect", &err);
    if (!rep)
        return CLI_UNTESTED;
    double t0 = harness__now();
    char name[DG_HASH_LOG_NAME_MAX + 1];
    harness__scenario_name(scn_path, name, sizeof name);
    int code = bisect_run(&b, rep, name);
    rep->duration_s = harness__now() - t0;
    remove_worktree(b.repo, b.wt);
    if (code == CLI_UNTESTED && drop_work && !bisect_sig) {
        char log[PATH_CAP];
        snprintf(log, sizeof log, "%s/bisect.log", b.work);
        keep_log(log, b.shown_log);
    }
    if (drop_work)
        remove_tree(b.work);
    else
        fprintf(stderr, "detgate bisect: work folder kept: %s\n", b.work);
    if (bisect_sig) { /* the worktree and the work folder are gone: now die of the signal */
        int sig = bisect_sig;
        fprintf(stderr, "detgate bisect: interrupted; the worktree and the work folder were removed\n");
        dg_report_free(rep);
        cli_outs_discard(&rp.outs);
        harness__temp_cleanup();
        signal(sig, SIG_DFL);
        raise(sig);
    }
    bool ok = cli_write_reports(rep, &rp, "bisect");
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}

/* ---- matrix ---------------------------------------------------------------------------------------- */

typedef struct mconf {
    char cc[32], opt[8], contract[8];
    char label[64];
    char log[PATH_CAP], rec[PATH_CAP];
    bool ok;
    harness__stream s;
} mconf;

static bool parse_configs(const char *list, mconf **out, size_t *n)
{
    static const char *const def = "gcc:-O0:off,gcc:-O2:off,gcc:-O3:off,gcc:-O0:fast,gcc:-O2:fast,gcc:-O3:fast,"
                                    "clang:-O0:off,clang:-O2:off,clang:-O3:off,clang:-O0:fast,clang:-O2:fast,"
                                    "clang:-O3:fast";
    const char *s = list ? list : def;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    mconf *v = calloc(cap, sizeof *v);
    if (!v)
        return false;
    size_t k = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char item[80];
        if (len >= sizeof item) {
            free(v);
            return false;
        }
        snprintf(item, sizeof item, "%.*s", (int)len, s);
        char *a = strtok(item, ":"), *o = strtok(NULL, ":"), *c = strtok(NULL, ":");
        if (!a || !o || !c || strtok(NULL, ":") || (strcmp(c, "off") && strcmp(c, "fast")) || o[0] != '-' ||
            strlen(a) >= sizeof v[k].cc || strlen(o) >= sizeof v[k].opt) {
            free(v);
            return false;
        }
        snprintf(v[k].cc, sizeof v[k].cc, "%s", a);
        snprintf(v[k].opt, sizeof v[k].opt, "%s", o);
        snprintf(v[k].contract, sizeof v[k].contract, "%s", c);
        snprintf(v[k].label, sizeof v[k].label, "%s%s-%s", a, o, c);
        k++;
        s += len + (e ? 1 : 0);
    }
    *out = v;
    *n = k;
    return k > 0;
}

/* -ffp-contract=fast only fuses where the target has FMA: the fast configurations also enable it
 * (-mfma) when this machine can run it, as a team moving to -march=haswell would. */
static bool cpu_has_fma(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool yes = false;
    while (f && !yes && fgets(line, sizeof line, f))
        yes = strncmp(line, "flags", 5) == 0 && strstr(line, " fma ");
    if (f)
        fclose(f);
    return yes;
}

/* Builds and records every configuration; a failure leaves that configuration marked !ok. */
static void matrix_build_all(mconf *cf, size_t n, const char *src, const char *wdir, const char *scn)
{
    bool fma = cpu_has_fma();
    for (size_t i = 0; i < n; i++) {
        char bdir[WORK_CAP * 2], bin[PATH_CAP], flags[120], hl[PATH_CAP];
        snprintf(bdir, sizeof bdir, "%s/build-%s", wdir, cf[i].label);
        snprintf(cf[i].log, sizeof cf[i].log, "%s/build-%s.log", wdir, cf[i].label);
        snprintf(cf[i].rec, sizeof cf[i].rec, "%s/%s.flrep", wdir, cf[i].label);
        snprintf(hl, sizeof hl, "%s/%s.hashlog", wdir, cf[i].label);
        snprintf(flags, sizeof flags, "%s;-ffp-contract=%s%s", cf[i].opt, cf[i].contract,
                 strcmp(cf[i].contract, "fast") == 0 && fma ? ";-mfma" : "");
        built_binary(bdir, bin, sizeof bin);
        fprintf(stderr, "detgate matrix: [%zu/%zu] %s (sim_stub flags %s)\n", i + 1, n, cf[i].label, flags);
        dg_error err;
        dg_error_clear(&err);
        cf[i].ok = build_tree(src, bdir, "Release", cf[i].cc, flags, cf[i].log) &&
                   record_with(bin, scn, cf[i].rec, hl, false, cf[i].log) &&
                   harness__load_log(hl, &cf[i].s, NULL, &err) == DG_OK;
        if (!cf[i].ok)
            fprintf(stderr, "detgate matrix: %s could not be built or run (see %s)\n", cf[i].label, cf[i].log);
    }
}

/* One pair: state diff of the two recordings, raw drift from their hash logs. Returns the pair's
 * exit code contribution (0 identical, 1 diverged, 125 not built). */
static int matrix_pair(dg_report *rep, const mconf *x, const mconf *y)
{
    char name[160], a[40] = "identical", r[40] = "identical";
    snprintf(name, sizeof name, "%s~%s", x->label, y->label);
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, "flrep");
    dg_report_check *ck = sc ? dg_report_add_check(sc, "matrix", x->ok && y->ok ? DG_REPORT_PASS : DG_REPORT_ERROR)
                             : NULL;
    if (!ck || !x->ok || !y->ok) {
        if (ck)
            dg_report_check_set_message(ck, "a configuration could not be built or run");
        printf("%-18s %-18s %-24s %s\n", x->label, y->label, "(not built)", "-");
        return CLI_UNTESTED;
    }
    dg_error err;
    dg_error_clear(&err);
    uint64_t nd = harness__compare_files(ck, sc, x->rec, y->rec, &err);
    uint64_t first[1], first_raw;
    size_t nf;
    harness__compare_streams(NULL, &x->s, &y->s, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    if (nd && nd != UINT64_MAX) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)ck->first_tick);
        ck->status = DG_REPORT_FAIL;
    }
    if (first_raw != DG_REPORT_TICK_NONE) {
        snprintf(r, sizeof r, "%llu", (unsigned long long)first_raw);
        if (nd == 0)
            dg_report_check_set_raw_divergence(ck, first_raw);
        else
            ck->first_raw_tick = first_raw;
    }
    dg_report_check_set_message(ck, "first divergent tick %s; raw floats first differ %s", a, r);
    printf("%-18s %-18s %-24s %s\n", x->label, y->label, a, r);
    return nd && nd != UINT64_MAX ? CLI_DIVERGED : CLI_EQUAL;
}

static int matrix_pairs(dg_report *rep, const mconf *cf, size_t n)
{
    int code = CLI_EQUAL;
    printf("%-18s %-18s %-24s %s\n", "A", "B", "first divergent tick", "raw floats first differ");
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int c = matrix_pair(rep, &cf[i], &cf[j]);
            if (c == CLI_DIVERGED || (c == CLI_UNTESTED && code == CLI_EQUAL))
                code = c;
        }
    return code;
}

int cli_matrix(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", 1, 0, S_SCN}, {"configs", 1, 0, S_GOOD},
                                         {"work", 1, 0, S_WORK}, {"keep", 0, 0, S_KEEP},
                                         {"source", 1, 0, S_REPO}, CLI_REPORT_OPTS, {0, 0, 0, 0}};
    const char *scn = NULL, *configs = NULL, *work = NULL, *source = NULL;
    bool keep = false;
    cli_reports rp = {0};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        switch (c) {
        case S_SCN: scn = optarg; break;
        case S_GOOD: configs = optarg; break;
        case S_WORK: work = optarg; break;
        case S_KEEP: keep = true; break;
        case S_REPO: source = optarg; break;
        default: return cli_usage_error("matrix", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (!scn || optind != argc)
        return cli_usage_error("matrix", "--scenario S is required");
    if (cli_reports_prepare(&rp, "matrix", NULL, 0) != 0)
        return CLI_USAGE;
    mconf *cf = NULL;
    size_t n = 0;
    if (!parse_configs(configs, &cf, &n))
        return cli_usage_error("matrix", "--configs: expected CC:-OPT:off|fast[,...], found '%s'", configs);
    char scn_path[PATH_CAP], scn_abs[WORK_CAP], src[WORK_CAP], wdir[WORK_CAP];
    if (!cli_resolve_scenario(scn, NULL, scn_path, sizeof scn_path) || !absolute(scn_path, scn_abs, sizeof scn_abs)) {
        free(cf);
        return cli_usage_error("matrix", "no scenario '%s'", scn);
    }
#ifdef DETGATE_SOURCE_DIR
    const char *default_src = DETGATE_SOURCE_DIR;
#else
    const char *default_src = ".";
#endif
    if (!absolute(source ? source : default_src, src, sizeof src) || !make_work_dir(work, wdir, sizeof wdir)) {
        free(cf);
        fprintf(stderr, "detgate matrix: cannot find the source tree or create a work folder\n");
        return CLI_UNTESTED;
    }
    matrix_build_all(cf, n, src, wdir, scn_abs);
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = cli_report_new("matrix", &err);
    int code = rep ? matrix_pairs(rep, cf, n) : CLI_UNTESTED;
    fflush(stdout);
    for (size_t i = 0; i < n; i++)
        harness__stream_free(&cf[i].s);
    free(cf);
    if (!keep && !work)
        remove_tree(wdir);
    rp.no_summary = true;
    bool ok = rep && cli_write_reports(rep, &rp, "matrix");
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}
