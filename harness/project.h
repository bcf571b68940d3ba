/* harness/project.h — the project file (detgate.ini, read with inih: docs/ENGINES.md) that says which
 * engine runs the scenarios and where they and their goldens live, and the process engine that runs a
 * scenario through the project's `run` command and reads its state stream from a pipe. Private to
 * harness/; names carry the harness__ prefix. */
#ifndef DETGATE_HARNESS_PROJECT_H
#define DETGATE_HARNESS_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#include "harness_internal.h"
#include "schema_decl.h"

#define HARNESS_PROJECT_FILE "detgate.ini"
#define HARNESS_PROJECT_PATH_MAX 4096

/* Every path value is already joined to the project file's folder (left as written when that folder
 * is the current one), so it can be used from the current folder as is. */
typedef struct harness__project {
    char path[HARNESS_PROJECT_PATH_MAX]; /* the project file */
    char dir[HARNESS_PROJECT_PATH_MAX];  /* its folder: the `run` command starts there */
    /* [engine] kind: a row of the engines table (engines.h). A library engine's run holds its
     * engine-host command, so everything that runs a process engine runs it. */
    const struct harness__engine *engine;
    char scenarios[HARNESS_PROJECT_PATH_MAX]; /* a folder or a glob */
    char golden[HARNESS_PROJECT_PATH_MAX];
    char run[HARNESS_PROJECT_PATH_MAX];   /* command template with {scenario}; process engines */
    char build[HARNESS_PROJECT_PATH_MAX]; /* command template with {src} {build} {cc} {cflags}: bisect, matrix */
    char library[HARNESS_PROJECT_PATH_MAX]; /* [engine] library, as written (the command runs in dir) */
    const struct harness__format *format;  /* format = NAME: a row of the formats table (format.h) */
    uint32_t keyframe;                     /* 0 = the engine's / the format's default */
    double time_limit_s;                   /* per scenario; 0 = none */
    unsigned jobs;                         /* 0 = not set */
    char raw[16];                          /* raw drift policy (warn | fail | ignore): gate's default */
    harness__decl decl;                    /* [schema] / [field NAME]: declared false when none */
} harness__project;

/* Reads and checks a project file. An unknown section or key, or a bad value, is DG_E_SYNTAX with
 * "file:line" in err->where, the nearest known key or the expected form in the message. */
dg_status dg_harness__project_load(harness__project *p, const char *path, dg_error *err);
/* The same from an open file (not closed); path names it and gives the folder paths are joined to. */
dg_status dg_harness__project_parse(harness__project *p, FILE *f, const char *path, dg_error *err);
/* The nearest detgate.ini from the current folder upward (as git finds .git), as a path relative to
 * the current folder ("detgate.ini", "../detgate.ini", ...). False when there is none. */
bool dg_harness__project_find(char *out, size_t cap);

/* One scenario of a project: its name (the file stem, a hash-log token) and its path. */
typedef struct harness__scenario_ref {
    char name[DG_HASH_LOG_NAME_MAX + 1];
    char *path;
} harness__scenario_ref;
/* The project's scenarios in name order: every regular file of the folder, or what the glob matches,
 * whose name ends in the engine's scenario_ext (sim_stub: *.scn; a process engine: any). Two with the
 * same name are refused. */
dg_status dg_harness__project_scenarios(const harness__project *p, harness__scenario_ref **out, size_t *n,
                                     dg_error *err);
void dg_harness__scenario_refs_free(harness__scenario_ref *v, size_t n);

/* The process engine: starts `run` (via /bin/sh -c in dir, {scenario} replaced by the shell-quoted
 * path) and reads its standard output once as a state stream (docs/STATES-STREAM.md); its stderr's
 * last lines are kept for the message. A non-zero exit, a signal, time_limit_s exceeded (0 = none)
 * or a malformed stream fails the source with DG_E_IO and says which. */
dg_status dg_harness__source_process(harness__source **out, const char *run, const char *dir, const char *scenario,
                                  double time_limit_s, uint32_t keyframe, dg_error *err);
/* A stream read once from f (not closed by the source): the binary state stream when its first byte
 * is 0x89 (harness/source_binary.c), else CSV or JSON Lines (dg_harness__source_states_stream). */
dg_status dg_harness__source_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                 uint32_t keyframe, dg_error *err);
/* A way past f's buffer to the bytes behind it (the process engine's pipe): read returns what is
 * there now, up to n (blocking only while nothing is), 0 at the end, -1 on an error; total says how
 * many bytes read has returned so far, to f's buffer and to the parser together, so that the parser
 * takes what f holds first. A binary stream is then read in large pieces straight into its own
 * window (no copy through f's buffer, a read per window rather than per record); text is read
 * through f as before. */
typedef struct harness__raw_reader {
    ssize_t (*read)(void *cookie, char *buf, size_t n);
    uint64_t (*total)(void *cookie);
    void *cookie;
} harness__raw_reader;
dg_status dg_harness__source_stream_raw(harness__source **out, FILE *f, const harness__raw_reader *raw,
                                     const char *label, const char *name, uint32_t keyframe, dg_error *err);
/* Whether the file starts like a binary state stream (0x89); a binary stream file, read once. */
bool dg_harness__is_binary_stream(const char *path);
dg_status dg_harness__source_binary_file(harness__source **out, const char *path, uint32_t keyframe, dg_error *err);
/* A zstd-compressed state stream file, decompressed on the fly and read once (harness/source_zstd.c);
 * a corrupt or cut compression is DG_E_MALFORMED ("zstd: ..."). */
dg_status dg_harness__source_states_zst(harness__source **out, const char *path, uint32_t keyframe, dg_error *err);
/* The same over an open stream read once from its first byte (standard input; not closed with it). */
dg_status dg_harness__source_zstd_stream(harness__source **out, FILE *raw, const char *label, const char *name,
                                       uint32_t keyframe, dg_error *err);
/* Whether the file starts as the zstd frame magic does (its first byte 0x28, as dg_harness__zstd_ahead
 * tells a stream), whatever its name: the rest of the magic is then checked by the zstd source. */
bool dg_harness__is_zstd_file(const char *path);
/* Whether the stream's next byte is the magic's first (0x28, which starts no plain stream): peeked
 * and put back, so the stream is still read once. */
bool dg_harness__zstd_ahead(FILE *f);
/* Kills every running engine process group (SIGKILL). Only kill(): safe in a signal handler. */
void dg_harness__process_kill_all(void);

/* Writes a commented project file for a process engine (detgate init); refuses to overwrite. */
dg_status dg_harness__project_write_template(const char *path, const char *run, const char *scenarios,
                                          dg_error *err);

#endif
