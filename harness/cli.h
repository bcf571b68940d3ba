/* harness/cli.h — the `detgate` command line's private wiring: one function per subcommand, the
 * shared report flags, exit codes, progress line and messages. Only the CLI prints. */
#ifndef DETGATE_HARNESS_CLI_H
#define DETGATE_HARNESS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engines.h"
#include "format.h"
#include "harness_internal.h"
#include "project.h"

/* Exit codes (docs/CLI.md): the same meaning for every subcommand, and the ones git bisect run
 * understands. */
enum {
    CLI_EQUAL = 0,     /* everything compared equal */
    CLI_DIVERGED = 1,  /* a divergence was found */
    CLI_USAGE = 2,     /* bad input or usage */
    CLI_UNTESTED = 125 /* could not test (build failed, missing golden, internal error) */
};

typedef struct cli_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *help; /* full --help text, with an example */
} cli_cmd;

extern const cli_cmd cli_commands[];

/* Subcommands. argv[0] is the subcommand name. */
int cli_info(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_hash(int argc, char **argv);
int cli_record(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_gate(int argc, char **argv);
int cli_bless(int argc, char **argv);
int cli_bisect(int argc, char **argv);
int cli_bisect_step(int argc, char **argv);
int cli_matrix(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_init(int argc, char **argv);
/* The hidden child a library engine runs in (cli_engine_host.c). */
int cli_engine_host(int argc, char **argv);

/* Prints the help of a subcommand to f. */
void cli_print_help(FILE *f, const char *cmd);
/* "detgate <cmd>: <message>" on stderr, then a hint to --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* "detgate <cmd>: <formatted dg_error>" on stderr. */
void cli_print_error(const char *cmd, const dg_error *err);

/* ---- outputs (cli_output.c; docs/CLI.md "Outputs") --------------------------------------------- */
#define CLI_PATH_CAP 4096
#define CLI_OUTS_MAX 16
typedef enum cli_out_how {
    CLI_OUT_RENAME,  /* a regular file (or a link's regular target): temp beside it, then rename */
    CLI_OUT_INPLACE, /* "-", a character device, a FIFO: temp in TMPDIR, then copied into it */
    CLI_OUT_APPEND   /* appended to (a CI step summary): temp in TMPDIR, then appended */
} cli_out_how;
typedef struct cli_out {
    const char *what;         /* the flag, for messages: "-o", "--json", ... */
    const char *given;        /* the path as given; "-" is standard output */
    bool append, to_stdout;
    bool folder_later; /* its folder is made when it is written (--report-dir); prepare checked a parent */
    cli_out_how how;
    char final[CLI_PATH_CAP]; /* the name renamed onto or written into */
    char work[CLI_PATH_CAP];  /* what the writer writes: a temp removed on SIGINT/SIGTERM */
} cli_out;
typedef struct cli_outs {
    cli_out o[CLI_OUTS_MAX];
    size_t n;
} cli_outs;
/* Adds an output (NULL path: none; returns NULL). */
cli_out *cli_outs_add(cli_outs *s, const char *what, const char *path, bool append);
/* Checks every output before the command runs: its folder exists and is writable, it is not a folder,
 * a block device or one of the inputs (same device and inode), no two name the same file. Then gives
 * each a registered temp work name. Returns 0, or CLI_USAGE with the reason on stderr. */
int cli_outs_prepare(cli_outs *s, const char *cmd, const char *const *inputs, size_t n_inputs);
/* Puts every finished work file in place (rename, or copy into stdout/device/FIFO, or append); an
 * output whose work file was never written (its writer failed) is skipped. False with a message on
 * failure. */
bool cli_outs_commit(cli_outs *s, const char *cmd);
/* Removes every work file (a failed run). */
void cli_outs_discard(cli_outs *s);
bool cli_outs_to_stdout(const cli_outs *s);
/* Writes a whole buffer as o's work file. */
bool cli_out_write_buf(cli_out *o, const void *p, size_t n, dg_error *err);

/* ---- reports ---------------------------------------------------------------------------------- */
typedef struct cli_reports {
    const char *dir;  /* --report-dir: report.{txt,json,xml,md,html} */
    const char *text, *json, *junit, *markdown, *html;
    const char *markdown_append; /* --markdown-append: a CI step summary */
    bool quiet;       /* --quiet: no summary on stdout */
    bool no_summary;  /* the command prints something else on stdout */
    bool prepared;    /* cli_reports_prepare ran (and succeeded) */
    cli_outs outs;
    int kinds[CLI_OUTS_MAX]; /* dg_report_kind of each of outs; -1: the command's own output */
} cli_reports;

/* Long options shared by every reporting command; returns true when opt was one of them. */
#define CLI_REPORT_OPTS                                                                          \
    {"report-dir", 1, 0, 0x100}, {"text", 1, 0, 0x101}, {"json", 1, 0, 0x102}, {"junit", 1, 0, 0x103}, \
        {"markdown", 1, 0, 0x104}, {"html", 1, 0, 0x105}, {"markdown-append", 1, 0, 0x106}, {"quiet", 0, 0, 'q'}
bool cli_report_opt(cli_reports *r, int opt, const char *arg);
/* Checks the report folder (it, or the nearest existing folder above it, writable; it is made when
 * the reports are written) and every report output (cli_outs_prepare) before the run, with
 * any of the command's own outputs already added to r->outs (e.g. verify --keep; they are committed
 * with the reports). Returns 0 or CLI_USAGE (printed). */
int cli_reports_prepare(cli_reports *r, const char *cmd, const char *const *inputs, size_t n_inputs);
/* Writes every requested rendering (all to temps, then all put in place, or none) and the text
 * summary on stdout (not when a report goes to stdout). Returns false when a report could not be
 * written (message on stderr). */
bool cli_write_reports(const dg_report *rep, cli_reports *r, const char *cmd);
/* A new report for command cmd: the tool's version, and the time the command started. NULL on out of
 * memory (err filled). */
dg_report *cli_report_new(const char *cmd, dg_error *err);
/* Exit code for a finished report: 0 pass, 1 any fail, 125 any error (and no fail). */
int cli_exit_for(const dg_report *rep);

/* ---- the raw-float drift policy (cli_raw.c, docs/CLI.md "Raw-float drift") ---------------------------- */
/* How a raw-only (sub-quantum) drift is judged: quantized state equal, raw float hashes differ. */
typedef enum cli_raw_policy {
    CLI_RAW_WARN = 0,  /* WARN: exit 0, the report shows it (the default) */
    CLI_RAW_FAIL = 1,  /* FAIL: exit 1 (--raw fail, --strict-raw) */
    CLI_RAW_IGNORE = 2 /* PASS: not a status (JSON still carries firstRawDivergentTick, subQuantum) */
} cli_raw_policy;
/* "fail", "warn", "ignore" into *out; false (out untouched) for anything else. */
bool cli_raw_policy_parse(const char *s, cli_raw_policy *out);
const char *cli_raw_policy_name(cli_raw_policy p);
/* The policy a command starts from before its own --raw / --strict-raw: warn until set (a project
 * file's `raw` key sets it here, before the command parses its options). */
void cli_raw_policy_set_default(cli_raw_policy p);
cli_raw_policy cli_raw_policy_default(void);
/* Long options of every comparing command: --raw POLICY, --strict-raw (= --raw fail). */
enum { CLI_OPT_RAW = 0x110, CLI_OPT_STRICT_RAW = 0x111 };
#define CLI_RAW_OPTS {"raw", 1, 0, CLI_OPT_RAW}, {"strict-raw", 0, 0, CLI_OPT_STRICT_RAW}
/* -1: opt is not a raw option; 0: *p set; CLI_USAGE: a bad POLICY (message printed). */
int cli_raw_opt(const char *cmd, int opt, const char *arg, cli_raw_policy *p);
/* The status of a comparison: FAIL when the quantized state diverged (first_tick), else by the
 * policy when raw floats drifted (first_raw_tick), else PASS. TICK_NONE = none. */
dg_report_status cli_raw_status(cli_raw_policy p, uint64_t first_tick, uint64_t first_raw_tick);
/* A PASS check flagged sub_quantum gets its status from the policy; any other check is left alone. */
void cli_raw_apply(dg_report_check *c, cli_raw_policy p);
/* cli_raw_apply on every check of every scenario of rep. */
void cli_raw_apply_report(dg_report *rep, cli_raw_policy p);
/* "a warning under --raw warn, the default" etc.: the policy's word in a check message. */
const char *cli_raw_verdict_note(cli_raw_policy p);

/* ---- progress (a single updating line on a TTY, nothing otherwise) ----------------------------- */
typedef struct cli_progress {
    bool on;
    const char *label;
    double last;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
void cli_progress_cb(void *user, uint64_t tick, uint64_t total);
void cli_progress_done(cli_progress *p);

/* ---- files --------------------------------------------------------------------------------------- */
typedef enum cli_kind { CLI_KIND_UNKNOWN, CLI_KIND_RECORDING, CLI_KIND_HASHLOG } cli_kind;
/* Detects a file by its first bytes: a recording of a format of the table (its magic: *fmt set, else
 * NULL), a hash log or zstd. -1 when unreadable. */
int cli_detect(const char *path, cli_kind *kind, const harness__format **fmt, dg_error *err);
/* Whole file into memory (for the RPLY dump, which takes a buffer). */
uint8_t *cli_slurp(const char *path, size_t *len, dg_error *err);
bool cli_file_exists(const char *path);
bool cli_is_dir(const char *path);
/* mkdir -p */
bool cli_mkdirs(const char *path);
/* Parses an unsigned decimal; false on anything else. */
bool cli_parse_u64(const char *s, uint64_t *out);

/* ---- lengths: a recording that ends early is told as such ------------------------------------------- */
typedef struct cli_span {
    bool known;     /* the file's index (or header) was read */
    uint64_t ticks; /* ticks it holds */
    uint64_t last;  /* its last tick (meaningless when ticks is 0) */
} cli_span;
/* From a recording's index or header (the format's span), or a hash stream. */
cli_span cli_file_span(const char *path, const harness__format *f);
cli_span cli_stream_span(const harness__stream *s);
/* "B ends at tick 999, A at 1499; " (names as given) when both are known and end at different
 * ticks, else "". */
void cli_length_note(char *buf, size_t cap, const char *name_a, cli_span a, const char *name_b, cli_span b);

/* The scenario argument: a path to a .scn, or a bare name looked up in corpus_dir. */
bool cli_resolve_scenario(const char *arg, const char *corpus_dir, char *out, size_t cap);

/* ---- shared run pieces (cli_run.c) ------------------------------------------------------------------ */
typedef struct cli_run_opts {
    const char *inject;
    uint32_t keyframe;
    const char *states;        /* --states FILE instead of a scenario */
    uint64_t fault_tick;       /* --replay-fault double-delta:T */
    uint64_t seek_fault_tick;  /* --replay-fault seek-drop-delta:T */
    uint64_t self_check_fault_tick; /* --replay-fault self-check:T (the writer's self-check fails) */
    size_t seek_random, seek_max_edges;
    bool skip_recovery;
    const char *keep;          /* keep the recording here */
    const char *hash_log;      /* also write the record-side hash log */
    bool log_entities;
    const harness__format *format; /* --format NAME (the default format until given) */
    bool log_raw; /* --log-raw: the log's entity lines carry the raw floats too (version 3) */
    const harness__engine *engine; /* what opens the source: sim_stub, a project's process, --states */
    bool no_progress;          /* no per-tick progress line (`gate --jobs N`: several run at once) */
    unsigned jobs;             /* --jobs: threads at most for the checks and the replay inside one recording */
    const char *project;       /* --project FILE */
    const harness__project *proj; /* the project file loaded (record, verify), NULL = none */
    const char *run, *run_dir; /* a process engine's command template and folder (the project's) */
    double time_limit;         /* its seconds per scenario, 0 = none */
    unsigned repeat;           /* verify --repeat N: runs that must record the same (0 = one run) */
    const char *raw_log;       /* a temporary version 3 log of this run's raw floats (verify --repeat) */
    bool scratch;              /* the recording is removed when the run ends: not forced to disk (no fsync) */
} cli_run_opts;

void cli_run_opts_init(cli_run_opts *o);
/* An error that the user's input caused (syntax, range, usage, UTF-8, malformed): exit 2. */
bool cli_bad_input(dg_status st);
/* --format NAME through the formats table into *out; 0, or the exit code of a usage error naming the
 * table's formats (printed). */
int cli_parse_format(const char *cmd, const char *arg, const harness__format **out);
/* A --replay-fault hook given for a format that has none: 0, or the exit code of a usage error
 * (printed, with `what` saying whose hooks they are). */
int cli_check_replay_faults(const char *cmd, const cli_run_opts *o, const char *what);
/* --replay-fault KIND:TICK into o; 0, or the exit code of a usage error (printed). */
int cli_parse_replay_fault(const char *cmd, const char *arg, cli_run_opts *o);
/* --jobs N of verify, hash and diff: 1..CLI_JOBS_MAX, or 0 for one per online CPU (capped the same way). */
#define CLI_JOBS_MAX 32
bool cli_parse_jobs(const char *s, unsigned *out);
/* Opens the source for a scenario path (or the states file). */
dg_status cli_open_source(const char *scenario, const cli_run_opts *o, harness__source **out, dg_error *err);
/* Records src to path, then verifies it into a new scenario of rep. rec receives the record-side
 * stream. Returns -1 when it could not run (error check added, err filled), else failed checks. */
int cli_record_and_verify(dg_report *rep, harness__source *src, const char *path, const cli_run_opts *o,
                          harness__stream *rec, dg_report_scenario **sc_out, dg_error *err);

/* ---- the project (cli_init.c) --------------------------------------------------------------------- */
/* --project FILE, in every command that runs an engine (its option value is CLI_OPT_PROJECT). */
enum { CLI_OPT_PROJECT = 0x1f0 };
#define CLI_PROJECT_OPT {"project", 1, 0, CLI_OPT_PROJECT}
/* Loads FILE (given) or the nearest detgate.ini upward into p; *have false when there is none. 0, or
 * the exit code of an unreadable or bad project file (printed). */
int cli_project_load(const char *cmd, const char *given, harness__project *p, bool *have);
/* What the project sets that the options left unset: the format, the keyframe interval, the engine.
 * 0, or CLI_USAGE (printed) when an option given does not reach the project's engine (--inject). */
int cli_project_apply(const char *cmd, const harness__project *p, cli_run_opts *o, bool format_given);
/* A SCENARIO argument: a file, or the name of one of the project's scenarios. 0 or CLI_USAGE (printed). */
int cli_project_scenario(const char *cmd, const harness__project *p, const char *arg, char *out, size_t cap);
/* verify --repeat (cli_repeat.c): runs scenario o->repeat - 1 more times and adds a "repeat" check to sc
 * comparing each with the first run (first_path, first). 0 all the same, 1 one differs, -1 could not run. */
int cli_verify_repeat(dg_report_scenario *sc, const char *scenario, const cli_run_opts *o, const char *first_path,
                      const harness__stream *first);
/* An engine's failures are its own (a process engine's), never the user's input: exit 125, not 2. */
#define CLI_BAD_INPUT(o, st) (cli_bad_input(st) && !(o)->engine->own_failures)

#endif
