/* harness/cli_bisect.c — the commands that build the project elsewhere: `detgate bisect` (records a
 * scenario at the good revision, then drives `git bisect run` in a separate worktree, each step
 * built in its own folder) and `detgate matrix` (sim_stub under several compilers and flags, the
 * first divergent tick for every pair). Your working tree is never touched. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH_CAP 4096
#define WORK_CAP 1024 /* work folders, the repository, the scenario: room for the names built on them */

/* ---- running other programs ---------------------------------------------------------------------- */

/* Runs argv (execvp) in cwd (NULL = here) with stdout+stderr appended to log (NULL = inherited).
 * Returns the exit status, or -1 when it could not run / was killed. */
static int run(char *const argv[], const char *cwd, const char *log)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
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
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

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
    int st;
    waitpid(pid, &st, 0);
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

/* What one revision's recording is against the good one. */
typedef struct bisect_cmp {
    bool ok;             /* compared (false: an error, in the check) */
    uint64_t first;      /* first divergent tick of the quantized state, TICK_NONE when equal */
    uint64_t first_raw;  /* first tick whose raw float hashes differ, TICK_NONE when equal or unknown */
    dg_report_status st; /* by the raw policy: FAIL is a bad step */
} bisect_cmp;

/* The first tick whose raw float hashes differ between two hash logs (TICK_NONE when they agree, or
 * when a log is missing or unreadable: RPLY records keep none, and then no raw drift is seen). */
static uint64_t raw_drift(const char *good_log, const char *log)
{
    if (!good_log || !log || !cli_file_exists(good_log) || !cli_file_exists(log))
        return DG_REPORT_TICK_NONE;
    harness__stream g = {0}, s = {0};
    dg_error err;
    dg_error_clear(&err);
    uint64_t first[1], first_raw = DG_REPORT_TICK_NONE;
    size_t nf;
    if (harness__load_log(good_log, &g, NULL, &err) == DG_OK && harness__load_log(log, &s, NULL, &err) == DG_OK)
        harness__compare_streams(NULL, &g, &s, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    harness__stream_free(&g);
    harness__stream_free(&s);
    return first_raw;
}

/* Compares a revision's recording b (and its hash log b_log, may be NULL) with the good one into a
 * new "diff" check of a scenario of rep, judged by the raw policy. */
static bisect_cmp compare_into(dg_report *rep, const char *name, const char *a, const char *b, const char *a_log,
                               const char *b_log, bool rply, cli_raw_policy raw, dg_error *err)
{
    bisect_cmp r = {false, DG_REPORT_TICK_NONE, DG_REPORT_TICK_NONE, DG_REPORT_ERROR};
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, rec_ext(rply));
    dg_report_check *c = sc ? dg_report_add_check(sc, "diff", DG_REPORT_PASS) : NULL;
    if (!c)
        return r;
    uint64_t nd = rply ? harness__rply_compare_files(c, sc, a, b, err) : harness__compare_files(c, sc, a, b, err);
    if (nd == UINT64_MAX) {
        char buf[600];
        dg_error_format(err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        return r;
    }
    r.ok = true;
    r.first = nd ? c->first_tick : DG_REPORT_TICK_NONE;
    r.first_raw = raw_drift(a_log, b_log);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        dg_report_check_set_raw_divergence(c, r.first_raw);
    r.st = nd ? DG_REPORT_FAIL : cli_raw_status(raw, DG_REPORT_TICK_NONE, r.first_raw);
    c->status = r.st;
    if (nd)
        dg_report_check_set_message(c, "%llu tick%s differ%s from the good recording; first at tick %llu",
                                    (unsigned long long)nd, dg_report_plural_s(nd), nd == 1 ? "s" : "",
                                    (unsigned long long)c->first_tick);
    else if (r.first_raw != DG_REPORT_TICK_NONE)
        dg_report_check_set_message(c, "quantized state identical to the good recording; raw floats differ from "
                                       "tick %llu (sub-quantum drift): %s",
                                    (unsigned long long)r.first_raw, cli_raw_verdict_note(raw));
    else
        dg_report_check_set_message(c, "identical to the good recording");
    return r;
}

/* ---- bisect-step (what git bisect run calls) -------------------------------------------------------- */

enum { S_WORK = 0x500, S_SCN, S_GOOD, S_REPO, S_TYPE, S_GOODREV, S_BADREV, S_KEEP, S_FORMAT, S_GOODLOG };

int cli_bisect_step(int argc, char **argv)
{
    static const struct option opts[] = {{"work", 1, 0, S_WORK}, {"scenario", 1, 0, S_SCN},
                                         {"good-rec", 1, 0, S_GOOD}, {"repo", 1, 0, S_REPO},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         {"good-log", 1, 0, S_GOODLOG}, CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *work = NULL, *scn = NULL, *good = NULL, *good_log = NULL, *repo = ".", *type = "Release";
    bool rply = false;
    cli_raw_policy raw = cli_raw_policy_default();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int rc = cli_raw_opt("bisect-step", c, optarg, &raw);
        if (rc > 0)
            return CLI_UNTESTED; /* git bisect run: "cannot test" */
        if (rc == 0)
            continue;
        switch (c) {
        case S_GOODLOG: good_log = optarg; break;
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
    bisect_cmp r = {false, DG_REPORT_TICK_NONE, DG_REPORT_TICK_NONE, DG_REPORT_ERROR};
    if (!build_tree(repo, bdir, type, NULL, NULL, log) || !record_with(bin, scn, rec, hl, rply, log)) {
        verdict = CLI_UNTESTED;
    } else {
        dg_error err;
        dg_error_clear(&err);
        dg_report *rep = cli_report_new("bisect", &err);
        if (rep)
            r = compare_into(rep, "step", good, rec, good_log, rply ? NULL : hl, rply, raw, &err);
        dg_report_free(rep);
        /* under --raw fail a raw-only drift is bad: the bisection then finds where raw floats changed */
        verdict = !r.ok ? CLI_UNTESTED : r.st == DG_REPORT_FAIL ? CLI_DIVERGED : CLI_EQUAL;
    }
    FILE *f = fopen(steps, "a");
    if (f) { /* sha, verdict, first divergent tick, first raw-drifting tick (docs/CLI.md "bisect") */
        fprintf(f, "%s %d %llu %llu\n", sha, verdict, (unsigned long long)r.first, (unsigned long long)r.first_raw);
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
    run(argv, NULL, NULL);
}

typedef struct bisect_ctx {
    char repo[WORK_CAP], work[WORK_CAP / 2], wt[WORK_CAP], scn[WORK_CAP], self[WORK_CAP];
    char good[64], bad[64];
    const char *type;
    bool rply;        /* record through the RPLY writer (--format rply) */
    cli_raw_policy raw; /* --raw / --strict-raw: is a raw-only drift a bad step */
} bisect_ctx;

/* Builds and records one revision directly (the endpoints): checks it out in the worktree first. */
static int test_revision(const bisect_ctx *b, const char *sha, const char *good_rec, const char *good_log)
{
    char *co[] = {"git", "-C", (char *)b->wt, "checkout", "-q", "--detach", (char *)sha, NULL};
    char log[PATH_CAP];
    snprintf(log, sizeof log, "%s/git.log", b->work);
    if (run(co, NULL, log) != 0)
        return CLI_UNTESTED;
    char *step[] = {(char *)b->self, "bisect-step", "--work", (char *)b->work, "--scenario", (char *)b->scn,
                    "--good-rec", (char *)good_rec, "--repo", (char *)b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)rec_ext(b->rply), "--good-log", (char *)good_log,
                    "--raw", (char *)cli_raw_policy_name(b->raw), NULL};
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

/* The bad end is not bad by the policy: say whether its raw floats drifted all the same (a WARN
 * check in the report), and how to bisect that drift. */
static void bad_end_equal(const bisect_ctx *b, dg_report *rep, const char *scenario_arg, const char *good_rec,
                          const char *good_hl)
{
    char rec[PATH_CAP], hl[PATH_CAP];
    snprintf(rec, sizeof rec, "%s/rec-%s.%s", b->work, b->bad, rec_ext(b->rply));
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", b->work, b->bad);
    dg_error err;
    dg_error_clear(&err);
    bisect_cmp r = compare_into(rep, scenario_arg, good_rec, rec, good_hl, b->rply ? NULL : hl, b->rply, b->raw, &err);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        fprintf(stderr, "detgate bisect: the bad revision %s records the same quantized state as the good one, but "
                        "its raw floats differ from tick %llu (sub-quantum drift, %s): nothing to bisect under "
                        "--raw %s; --raw fail bisects the drift\n",
                b->bad, (unsigned long long)r.first_raw, cli_raw_verdict_note(b->raw), cli_raw_policy_name(b->raw));
    else
        fprintf(stderr, "detgate bisect: the bad revision %s (records the same as the good one: nothing to bisect)\n",
                b->bad);
}

static int bisect_run(bisect_ctx *b, dg_report *rep, const char *scenario_arg)
{
    char good_rec[PATH_CAP], good_hl[PATH_CAP], log[PATH_CAP];
    snprintf(good_rec, sizeof good_rec, "%s/good.%s", b->work, rec_ext(b->rply));
    snprintf(good_hl, sizeof good_hl, "%s/good.hashlog", b->work);
    snprintf(log, sizeof log, "%s/bisect.log", b->work);
    char *wt_add[] = {"git", "-C", b->repo, "worktree", "add", "-q", "--detach", b->wt, b->good, NULL};
    if (run(wt_add, NULL, log) != 0) {
        fprintf(stderr, "detgate bisect: cannot create a worktree of %s (see %s)\n", b->repo, log);
        return CLI_UNTESTED;
    }
    /* 1. the good recording, once */
    char bdir[WORK_CAP * 2], bin[PATH_CAP];
    snprintf(bdir, sizeof bdir, "%s/build-good", b->work);
    built_binary(bdir, bin, sizeof bin);
    fprintf(stderr, "detgate bisect: building the good revision %.12s\n", b->good);
    if (!build_tree(b->wt, bdir, b->type, NULL, NULL, log) || !record_with(bin, b->scn, good_rec, good_hl, b->rply, log)) {
        fprintf(stderr, "detgate bisect: the good revision %.12s cannot be built or cannot record %s (see %s)\n",
                b->good, scenario_arg, log);
        return CLI_UNTESTED;
    }
    /* 2. the bad end must really differ, or there is nothing to bisect */
    fprintf(stderr, "detgate bisect: testing the bad revision %.12s\n", b->bad);
    int vb = test_revision(b, b->bad, good_rec, good_hl);
    if (vb != CLI_DIVERGED) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        if (vb == CLI_EQUAL)
            bad_end_equal(b, rep, scenario_arg, good_rec, good_hl);
        else
            fprintf(stderr, "detgate bisect: the bad revision %s (cannot be built or tested)\n", b->bad);
        return vb == CLI_EQUAL ? CLI_EQUAL : CLI_UNTESTED;
    }
    /* 3. git bisect run, each step built in its own folder */
    char *start[] = {"git", "-C", b->wt, "bisect", "start", b->bad, b->good, NULL};
    char *runv[] = {"git", "-C", b->wt, "bisect", "run", b->self, "bisect-step", "--work", b->work, "--scenario",
                    b->scn, "--good-rec", good_rec, "--repo", b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)rec_ext(b->rply), "--good-log", good_hl,
                    "--raw", (char *)cli_raw_policy_name(b->raw), NULL};
    char *reset[] = {"git", "-C", b->wt, "bisect", "reset", "-q", NULL};
    fprintf(stderr, "detgate bisect: git bisect run over %.12s..%.12s (log: %s)\n", b->good, b->bad, log);
    bool ran = run(start, NULL, log) == 0 && run(runv, NULL, log) == 0;
    char first_bad[64] = "";
    bool found = ran && find_first_bad(log, first_bad, sizeof first_bad);
    run(reset, NULL, log);
    if (!found) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        fprintf(stderr, "detgate bisect: git bisect did not name a first bad commit (see %s)\n", log);
        return CLI_UNTESTED;
    }
    /* 4. the first bad commit, its first divergent tick and the field diff */
    char subject[300] = "";
    git_line(b->repo, subject, sizeof subject, "show", "-s", "--format=%s", first_bad);
    char rec[PATH_CAP], hl[PATH_CAP];
    snprintf(rec, sizeof rec, "%s/rec-%s.%s", b->work, first_bad, rec_ext(b->rply));
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", b->work, first_bad);
    dg_error err;
    dg_error_clear(&err);
    bisect_cmp r = compare_into(rep, scenario_arg, good_rec, rec, good_hl, b->rply ? NULL : hl, b->rply, b->raw, &err);
    load_steps(rep, b->work, first_bad);
    dg_report_set_bisect(rep, scenario_arg, first_bad, subject, b->good, b->bad, r.first);
    printf("first bad commit: %s %s\n", first_bad, subject);
    if (r.first != DG_REPORT_TICK_NONE)
        printf("first divergent tick: %llu\n", (unsigned long long)r.first);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        printf("raw floats first differ at tick %llu%s\n", (unsigned long long)r.first_raw,
               r.first == DG_REPORT_TICK_NONE ? " (quantized state identical: a sub-quantum drift)" : "");
    return CLI_DIVERGED;
}

int cli_bisect(int argc, char **argv)
{
    static const struct option opts[] = {{"good", 1, 0, S_GOODREV}, {"bad", 1, 0, S_BADREV},
                                         {"scenario", 1, 0, S_SCN}, {"repo", 1, 0, S_REPO},
                                         {"work", 1, 0, S_WORK}, {"keep", 0, 0, S_KEEP},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         CLI_REPORT_OPTS, CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *good = NULL, *bad = NULL, *scn = NULL, *repo = ".", *work = NULL;
    bool keep = false;
    cli_reports rp = {0};
    bisect_ctx b;
    memset(&b, 0, sizeof b);
    b.type = "Release";
    b.raw = cli_raw_policy_default();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        int rc = cli_raw_opt("bisect", c, optarg, &b.raw);
        if (rc > 0)
            return rc;
        if (rc == 0)
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
    if (!make_work_dir(work, b.work, sizeof b.work) || !self_exe(b.self, sizeof b.self)) {
        fprintf(stderr, "detgate bisect: cannot create a work folder: %s\n", strerror(errno));
        return CLI_UNTESTED;
    }
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
    char *wt_rm[] = {"git", "-C", b.repo, "worktree", "remove", "--force", b.wt, NULL};
    run(wt_rm, NULL, "/dev/null");
    if (!keep && !work)
        remove_tree(b.work);
    else
        fprintf(stderr, "detgate bisect: work folder kept: %s\n", b.work);
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
static int matrix_pair(dg_report *rep, const mconf *x, const mconf *y, cli_raw_policy raw)
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
    cli_raw_apply(ck, raw); /* a raw-only pair: WARN, FAIL or PASS by the policy */
    dg_report_check_set_message(ck, "first divergent tick %s; raw floats first differ %s", a, r);
    printf("%-18s %-18s %-24s %s\n", x->label, y->label, a, r);
    return ck->status == DG_REPORT_FAIL ? CLI_DIVERGED : CLI_EQUAL;
}

static int matrix_pairs(dg_report *rep, const mconf *cf, size_t n, cli_raw_policy raw)
{
    int code = CLI_EQUAL;
    printf("%-18s %-18s %-24s %s\n", "A", "B", "first divergent tick", "raw floats first differ");
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int c = matrix_pair(rep, &cf[i], &cf[j], raw);
            if (c == CLI_DIVERGED || (c == CLI_UNTESTED && code == CLI_EQUAL))
                code = c;
        }
    return code;
}

int cli_matrix(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", 1, 0, S_SCN}, {"configs", 1, 0, S_GOOD},
                                         {"work", 1, 0, S_WORK}, {"keep", 0, 0, S_KEEP},
                                         {"source", 1, 0, S_REPO}, CLI_REPORT_OPTS, CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *scn = NULL, *configs = NULL, *work = NULL, *source = NULL;
    bool keep = false;
    cli_reports rp = {0};
    cli_raw_policy raw = cli_raw_policy_default();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        int rc = cli_raw_opt("matrix", c, optarg, &raw);
        if (rc > 0)
            return rc;
        if (rc == 0)
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
    int code = rep ? matrix_pairs(rep, cf, n, raw) : CLI_UNTESTED;
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
