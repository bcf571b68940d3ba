/* harness/cli_main.c — the `detgate` front door: finds the subcommand, prints help (every
 * subcommand has one, with an example), and returns the subcommand's exit code. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#define REPORT_FLAGS_HELP                                                                                  \
    "Reports (any combination):\n"                                                                         \
    "  --report-dir DIR   write DIR/report.{txt,json,xml,md,html}\n"                                       \
    "  --text FILE  --json FILE  --junit FILE  --markdown FILE  --html FILE   (FILE - : stdout)\n"        \
    "  --markdown-append FILE   append the Markdown report (e.g. \"$GITHUB_STEP_SUMMARY\")\n"             \
    "  -q, --quiet        no text summary on stdout\n"

#define RAW_HELP                                                                                           \
    "Raw-float drift (quantized state equal, raw float hashes differ: below one quantum):\n"             \
    "  --raw warn|fail|ignore  WARN, exit 0 (default) | FAIL, exit 1 | PASS, noted in JSON only\n"       \
    "  --strict-raw            the same as --raw fail\n"

#define EXIT_HELP "Exit: 0 all equal, 1 divergence found, 2 bad input or usage, 125 could not test.\n"

const cli_cmd cli_commands[] = {
    {"info", cli_info, "header, sections, tick range, chunks and sizes of a recording",
     "usage: detgate info FILE [--check]\n"
     "Prints what a recording holds: header, sections, tick range and duration, keyframes, chunk count\n"
     "and sizes, bytes per tick, and whether the index trailer was recovered by a forward scan.\n"
     "--check also decodes every chunk and tick (checksums, tick order, records) and names the first\n"
     "bad chunk with its byte offset; without it the chunks are not decoded (the last line says so).\n"
     "The format is detected by its magic ({format_magics}).\n"
     "Exit: 0 ok, 2 unreadable input or --check found a bad chunk (the error on stderr).\n"
     "Example: detgate info --check build/rec/dogfight-40.flrep\n"},
    {"dump", cli_dump, "JSON Lines dump of every tick of a recording",
     "usage: detgate dump FILE --json [--partial]\n"
     "One JSON object per line: the header, each section, then one line per tick with its entity\n"
     "records (rebuilt quantized values) and events. The whole file is validated first, so a bad\n"
     "file prints nothing on stdout; --partial prints what was read before the error.\n"
     "Exit: 0 ok, 2 unreadable input (the error on stderr).\n"
     "Example: detgate dump rec.flrep --json | jq -c 'select(.type==\"tick\") | .tick'\n"},
    {"record", cli_record, "record a scenario (or a state stream) to a recording",
     "usage: detgate record SCENARIO -o FILE [--format {formats}] [--keyframe-interval N] [--inject SPEC]\n"
     "                      [--hash-log LOG[.zst]] [--log-entities] [--log-raw] [--fsync close|chunk|none]\n"
     "       detgate record --states STREAM -o FILE ...\n"
     "SCENARIO is a .scn path or a name in corpus/scenarios. Each tick goes through the real\n"
     "quantizer and writer; --hash-log also writes the record-side hash log (with raw float\n"
     "hashes). --inject breaks determinism on purpose (sim_stub switches, docs/SCENARIOS.md):\n"
     "  bitflip:tick=T,entity=ID,field=pos.x,bit=B | fma | libm-trig | pointer-order | clock-seed |\n"
     "  racy-threads   (several separated by ';')\n"
     "--replay-fault self-check:TICK makes the writer's self-check fail there (a test hook).\n"
     "--fsync: when the file is forced to disk — close (default), every chunk, or none.\n"
     "Exit: 0 written, 1 the writer's self-check failed (a codec bug), 2 bad input or usage.\n"
     "Example: detgate record dogfight-40 -o /tmp/d.flrep --inject 'bitflip:tick=300,entity=7,field=pos.x,bit=40'\n"},
    {"hash", cli_hash, "print the per-tick hash log of a recording (replay side)",
     "usage: detgate hash FILE [-o LOG[.zst]] [--entities] [--jobs N]      (FILE: {format_labels})\n"
     "Reads the recording, rebuilds every tick and prints its hash log (docs/STATE-HASH.md §7):\n"
     "one T line per tick; with --entities one e line per entity. -o writes to a file (.zst\n"
     "compresses). Two equal runs print byte-identical logs, so plain `diff` compares them.\n"
     "--jobs N (-j N) replays a .flrep on up to N threads (default 1; 0 = one per online CPU): the\n"
     "log is byte-identical whatever N.\n"
     "Exit: 0 ok, 2 unreadable input.\n"
     "Example: detgate hash a.flrep > a.log && detgate hash b.flrep | diff a.log -\n"},
    {"verify", cli_verify, "record, replay, compare; check seek and crash recovery",
     "usage: detgate verify SCENARIO [--format {formats}] [--inject SPEC] [--keyframe-interval N] [--keep FILE]\n"
     "       detgate verify --states STREAM [...]\n"
     "  [--seek-samples N] [--seek-edges N] [--no-recovery] [--repeat N] [--project FILE]\n"
     "  [--replay-fault double-delta:TICK|seek-drop-delta:TICK|self-check:TICK] [--jobs N]\n"
     "Runs the session through sim_stub and the real codec (record side hashes exactly what was\n"
     "written), reads the file back and hashes every rebuilt tick (replay side), and compares the\n"
     "two streams tick by tick; on a mismatch it diffs the states behind the hashes down to entity\n"
     "and field. Then seeks forwards and backwards to chunk edges, first, last and N random ticks\n"
     "(default 32; --seek-edges caps the chunk edges, 0 = all) and cuts the trailer off (and the\n"
     "last chunk short) to check crash recovery. --states reads an engine's per-tick state stream\n"
     "(CSV or JSON Lines, docs/STATES-STREAM.md) instead of a scenario. --replay-fault is a test\n"
     "hook: double-delta makes the reader apply that tick's delta records twice (linear replay and\n"
     "seek); seek-drop-delta makes a seek landing on that tick drop the delta before it (seek only);\n"
     "self-check makes the writer's self-check fail there (the record check fails: exit 1). A hook\n"
     "past the last tick is refused (exit 2).\n"
     "--format rply records through the RPLY\n"
     "writer and replays with the RPLY player (record-vs-replay and seek; RPLY has no trailer to lose).\n"
     "--jobs N (-j N): up to N threads (default 1; 0 = one per online CPU) — the writer beside the\n"
     "simulation, the replay side cut by chunks, recovery beside replay + seek; the report is the same.\n"
     "--repeat N runs the scenario N times (2..1000): every run must record what the first did (a\n"
     "\"repeat\" check, diffed to entity and field). --states - reads the stream from standard input; a\n"
     "STREAM.zst, or any stream starting with zstd's frame magic, is decompressed on the fly. With a\n"
     "project file (detgate.ini, docs/ENGINES.md) SCENARIO may name one of its scenarios and runs\n"
     "through its engine.\n"
     "--raw is accepted for one command line everywhere; the replay side is rebuilt from quantized\n"
     "state and carries no raw floats, so verify alone never sees a raw drift (gate's golden does).\n"
     REPORT_FLAGS_HELP RAW_HELP EXIT_HELP
     "Example: detgate verify dogfight-40 --report-dir build/reports/verify\n"},
    {"diff", cli_diff, "compare two recordings (or two hash logs) tick by tick",
     "usage: detgate diff A B [--log-a LA --log-b LB] [--raw POLICY | --strict-raw] [--jobs N] [report flags]\n"
     "A is the reference. Two recordings of one format ({format_labels}) are replayed in lockstep:\n"
     "hash first, and on every divergent\n"
     "tick the states are diffed (entities added, lost, changed; fields with both values in quanta\n"
     "and in metres / degrees / m/s). Hash logs are compared by hash (and raw hash: a sub-quantum\n"
     "drift is reported); a recording against a hash log (e.g. a .hashlog.zst golden) is replayed\n"
     "and compared by hash (--jobs N: that replay on up to N threads; the report is the same).\n"
     "Raw floats are in hash logs only: diff of two recordings ({format_labels}) cannot see a raw drift:\n"
     "diff two hash logs (record --hash-log), or give the recordings' logs with --log-a LA --log-b LB.\n"
     REPORT_FLAGS_HELP RAW_HELP EXIT_HELP
     "Example: detgate diff corpus/golden/dogfight-40.flrep /tmp/d.flrep --html diff.html\n"},
    {"gate", cli_gate, "verify every scenario and compare it with its golden",
     "usage: detgate gate [--corpus DIR] [--golden DIR] [--scenario NAME]... [--shard I/N | --plan N] [--jobs N]\n"
     "                    [--raw POLICY | --strict-raw] [--inject SPEC] [--format {formats}] [--replay-fault KIND:TICK]\n"
     "                    [report flags]\n"
     "For every scenario in the corpus (default corpus/scenarios): verify (record vs replay, seek,\n"
     "recovery), then compare the recording with the golden in corpus/golden: NAME.flrep (state\n"
     "diff) and NAME.hashlog.zst (hashes, raw float hashes). Any divergence fails the run.\n"
     "--format rply records through the RPLY v3 writer instead and compares with NAME.rply and\n"
     "NAME.rply.hashlog.zst.\n"
     "A raw-only (sub-quantum) drift is WARN (exit 0) unless --raw fail / --strict-raw. --inject records\n"
     "every scenario with sim_stub's injection switch: what a broken build would record.\n"
     "--shard I/N (1 <= I <= N) runs shard I of a plan every machine computes alike: scenarios longest\n"
     "first (entity-ticks of the golden hash log), each to the least loaded shard. --plan N prints\n"
     "that plan for N shards (shard, cost, share, scenarios) and exits 0 without running anything.\n"
     "--jobs N (-j N) runs at most N threads (default 1; 0 = one per online CPU, at most 32):\n"
     "scenarios first, and threads a finished worker frees go to the recordings still running;\n"
     "the reports and the exit code are the same as with one.\n"
     "A corpus without scenarios, or a --scenario the --shard excludes, is refused (exit 2); an empty\n"
     "shard of a non-empty corpus passes and its reports say so. --replay-fault: as for verify.\n"
     "Reports go to build/reports unless --report-dir (or another report flag) is given.\n" REPORT_FLAGS_HELP
     RAW_HELP EXIT_HELP "Example: detgate gate --shard 1/2 --junit build/gate-1.xml\n"},
    {"merge", cli_merge, "one report from the JSON reports of every shard of a gate run",
     "usage: detgate merge REPORT.json... [report flags]\n"
     "Reads the JSON report of every shard of one `detgate gate --shard I/N` run and writes one report\n"
     "of the whole corpus in every format asked for (scenarios in name order; default --report-dir\n"
     "build/reports). The set must be whole: the same corpusId and shard count N in every report, and\n"
     "the shards 1..N each exactly once; a missing or repeated shard, shards of another corpus or\n"
     "plan, or a file that is not a gate report is refused (exit 2) and nothing is written.\n"
     "Exit: the merged verdict, as gate's: 0 all equal, 1 divergence, 125 could not test; 2 bad input.\n"
     "Example: detgate merge shard-*/report.json --report-dir build/reports/all\n"},
    {"bless", cli_bless, "re-record goldens on purpose, with a reason in the bless log",
     "usage: detgate bless SCENARIO... --reason \"why\" [--corpus DIR] [--golden DIR] [--all]\n"
     "                     [--flrep-max-bytes N] [--format {formats}] [-j N | --jobs N]\n"
     "Records each scenario, refuses if it does not verify, writes corpus/golden/NAME.hashlog.zst\n"
     "(every tick: hashes and raw float hashes) and NAME.flrep when the recording is at most\n"
     "--flrep-max-bytes (default 2097152), else NAME.entities.hashlog.zst (entity hashes of every\n"
     "K-th tick, at most 100000 lines: the gate's spread view), and appends one line per scenario to\n"
     "corpus/golden/BLESS.log: time, who (git user), scenario, the first tick that changed against\n"
     "the old golden, revision, reason. Commit the goldens and the log together.\n"
     "--format rply blesses RPLY goldens (NAME.rply.hashlog.zst, NAME.rply when small enough).\n"
     "--all and SCENARIO names together are refused. --jobs N (default: the project's [gate] jobs,\n"
     "else 1): threads inside each scenario's recording and checks, as verify's; scenarios one at a time.\n"
     "Exit: 0 blessed, 1 a scenario failed verify (nothing blessed for it), 2 usage.\n"
     "Example: detgate bless dogfight-40 --reason \"new drag model (#123)\"\n"},
    {"bisect", cli_bisect, "find the commit that broke determinism of a scenario",
     "usage: detgate bisect --good REV --bad REV --scenario S [--repo DIR] [--work DIR] [--keep] [--project FILE]\n"
     "                      [--format {formats}] [--raw POLICY | --strict-raw] [report flags]\n"
     "Records S at the good revision once, then drives `git bisect run` in a separate worktree:\n"
     "each step builds that revision in its own build folder (cmake), records S with that build\n"
     "and compares it with the good recording: 0 same, 1 diverged, 125 cannot build/test.\n"
     "Ends by naming the first bad commit and its first divergent tick with the field diff.\n"
     "Your working tree is not touched. The scenario file is taken from the current tree.\n"
     "Under --raw fail a step whose raw floats differ from the good hash log is bad too: the bisection\n"
     "finds the first commit whose raw floats changed and names the tick (.flrep only: RPLY records\n"
     "keep no raw hashes). Under warn/ignore a raw-only bad end is \"nothing to bisect\" (WARN shown).\n"
     "A process project (detgate.ini, --project FILE) is built with its [build] command and recorded\n"
     "through its [engine] run command, in each revision's copy of the project folder (docs/ENGINES.md).\n"
     REPORT_FLAGS_HELP RAW_HELP EXIT_HELP "Example: detgate bisect --good v0.3 --bad HEAD --scenario dogfight-40\n"},
    {"bisect-step", cli_bisect_step, NULL,
     "usage: detgate bisect-step --work DIR --scenario FILE --good-rec FILE [--good-log LOG] [--raw POLICY] --repo DIR\n"
     "                           [--project FILE --src DIR]\n"
     "Internal: one `git bisect run` step (build HEAD of the worktree, record, compare).\n"},
    {"engine-host", cli_engine_host, NULL,
     "usage: detgate engine-host LIBRARY SCENARIO\n"
     "Internal: runs a library engine (include/detgate/engine.h) on SCENARIO in this process and writes\n"
     "its binary state stream on stdout, for a project with [engine] kind = library (docs/ENGINES.md).\n"
     "Exit: 0 done, 2 usage, 3 the engine's open or step failed, 4 the library could not be loaded.\n"},
    {"matrix", cli_matrix, "which toolchain configurations record a scenario identically",
     "usage: detgate matrix --scenario S [--configs LIST] [--config SPEC]... [--strict-raw] [--dry-run]\n"
     "                      [--source DIR] [--work DIR] [--keep] [--project FILE] [report flags]\n"
     "Builds sim_stub in several configurations (default: gcc and clang x -O0 -O2 -O3 x\n"
     "-ffp-contract=off/fast, 12 builds), records S with each, groups the configurations that record\n"
     "identically into classes, and prints the first divergent tick for one pair per pair of classes.\n"
     "SPEC is CC:FLAGS:off|fast: FLAGS any compiler flags, space separated (quote them), may be empty;\n"
     "LIST is comma separated SPECs (--config takes one SPEC, commas and all; both may repeat).\n"
     "Raw-float drift with the same quanta is judged by --raw: WARN (exit 0) by default, FAIL (exit 1)\n"
     "under --raw fail / --strict-raw, PASS under --raw ignore.\n"
     "--dry-run prints the configurations as parsed and builds nothing.\n"
     "A process project (detgate.ini, --project FILE) builds its own engine with its [build] command\n"
     "({cc} and {cflags} from SPEC) in --source DIR (default its folder) instead of sim_stub.\n" REPORT_FLAGS_HELP RAW_HELP EXIT_HELP
     "Example: detgate matrix --scenario dogfight-40 --configs 'gcc:-O2:off,gcc:-O3 -march=native:off'\n"},
    {"init", cli_init, "write a project file (detgate.ini) for your engine",
     "usage: detgate init [--run CMD] [--scenarios GLOB] [-o FILE]\n"
     "Writes a commented project file (default detgate.ini; never overwrites one) saying how to run one\n"
     "scenario through your engine (CMD, with {scenario}; its standard output is the state stream of\n"
     "docs/STATES-STREAM.md) and where the scenarios (a folder or a glob) and goldens live. Every command\n"
     "finds the nearest detgate.ini from the current folder upward, or takes --project FILE (before or\n"
     "after the command). See docs/ENGINES.md.\n"
     "Exit: 0 written, 2 usage or the file exists.\n"
     "Example: detgate init --run './build/sim --scenario {scenario} --dump-states -' --scenarios 'scenarios/*.json'\n"},
    {NULL, NULL, NULL, NULL},
};

/* The formats table's lists a help text names, so a third format is in every help without an edit
 * here: {formats} the names as a usage line's alternatives (a|b), {format_labels} the labels and
 * {format_magics} the magics as a message's list (a or b). Any other brace ({scenario},
 * report.{txt,json}) is the text's own. */
static void put_help(FILE *f, const char *text)
{
    const char *names[16], *labels[16], *magics[16];
    char magic[16][5];
    size_t n = 0;
    for (; dg_harness__formats[n] && n < 16; n++) {
        names[n] = dg_harness__formats[n]->name;
        labels[n] = dg_harness__formats[n]->label;
        snprintf(magic[n], sizeof magic[n], "%.4s", dg_harness__formats[n]->magic);
        magics[n] = magic[n];
    }
    static const char *const tokens[3] = {"{formats}", "{format_labels}", "{format_magics}"};
    char lists[3][256];
    dg_harness__join_names(lists[0], sizeof lists[0], names, n, "|", "|");
    dg_harness__join_names(lists[1], sizeof lists[1], labels, n, ", ", " or ");
    dg_harness__join_names(lists[2], sizeof lists[2], magics, n, ", ", " or ");
    for (const char *s = text; *s;) {
        const char *brace = strchr(s, '{');
        size_t k = 0;
        while (brace && k < 3 && strncmp(brace, tokens[k], strlen(tokens[k])) != 0)
            k++;
        if (!brace) {
            fputs(s, f);
            return;
        }
        fwrite(s, 1, (size_t)(brace - s), f);
        fputs(k < 3 ? lists[k] : "{", f);
        s = brace + (k < 3 ? strlen(tokens[k]) : 1);
    }
}

void cli_print_help(FILE *f, const char *cmd)
{
    for (const cli_cmd *c = cli_commands; c->name; c++)
        if (strcmp(c->name, cmd) == 0) {
            put_help(f, c->help);
            return;
        }
}

static void main_help(FILE *f)
{
    fputs("usage: detgate COMMAND [options]   (detgate COMMAND --help for each)\n"
          "A determinism and regression gate for game/simulation replays.\n\nCommands:\n",
          f);
    for (const cli_cmd *c = cli_commands; c->name; c++)
        if (c->summary)
            fprintf(f, "  %-8s %s\n", c->name, c->summary);
    fputs("\nExit codes: 0 all equal, 1 divergence found, 2 bad input or usage, 125 could not test.\n"
          "Example: detgate gate            (from the repository root: the whole corpus vs goldens)\n",
          f);
}

/* An interrupted run (or one whose stdout reader went away) leaves no temp recording, recovery copy
 * or output work file behind; final names are only ever written by rename, so they are either
 * complete or absent. */
static void on_signal(int sig)
{
    dg_harness__temp_cleanup();
    dg_harness__process_kill_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_cleanup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL); /* `record -o - | head`: the reader left; the temp goes too */
}

/* A command whose standard output could not be written (a full disk, /dev/full) did not do what it
 * says: "could not test" (125), as for any other output, unless it already found a divergence or
 * bad input. */
static int check_stdout(const char *cmd, int code)
{
    errno = 0;
    bool flush_failed = fflush(stdout) != 0;
    if (!flush_failed && !ferror(stdout))
        return code;
    fprintf(stderr, "detgate %s: writing standard output failed: %s\n", cmd,
            flush_failed ? strerror(errno) : "an earlier write to it failed");
    return code == CLI_EQUAL ? CLI_UNTESTED : code;
}

int main(int argc, char **argv)
{
    install_cleanup();
    if (argc < 2) {
        main_help(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        if (argc > 2)
            cli_print_help(stdout, argv[2]);
        else
            main_help(stdout);
        return CLI_EQUAL;
    }
    if (argc > 3 && strcmp(argv[1], "--project") == 0) { /* a global option: moved after the command */
        char *f = argv[2];
        memmove(argv + 1, argv + 3, (size_t)(argc - 3) * sizeof *argv);
        argv[argc - 2] = "--project";
        argv[argc - 1] = f;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts(HARNESS_VERSION);
        return CLI_EQUAL;
    }
    for (const cli_cmd *c = cli_commands; c->name; c++) {
        if (strcmp(c->name, argv[1]) != 0)
            continue;
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                put_help(stdout, c->help);
                return CLI_EQUAL;
            }
        return check_stdout(c->name, c->run(argc - 1, argv + 1));
    }
    fprintf(stderr, "detgate: unknown command '%s'\n\n", argv[1]);
    main_help(stderr);
    return CLI_USAGE;
}
