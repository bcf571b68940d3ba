/* harness/cli_file.c — the recording-inspection commands: `detgate info`, `detgate dump --json`
 * and `detgate hash`. The format is detected by its magic; RPLY files go to harness/rply_dump.h.
 * Nothing goes to stdout for a file that fails validation (unless --partial). */
#include "cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "rply_dump.h"

static const char *section_name(uint16_t id)
{
    switch (id) {
    case 1: return "entity-type manifest";
    case 2: return "faction table";
    case 3: return "roster / name table";
    case 4: return "camera track (reserved)";
    case 5: return "entity schema";
    default: return "unknown (skipped)";
    }
}

static void print_str(FILE *f, dg_flrep_str s) { fprintf(f, "%.*s", (int)s.len, s.s ? s.s : ""); }

/* ---- what `info` and `dump` print, per format ------------------------------------------------------ */

/* The formats table's rows hold no printing (the harness never prints): the CLI's side of a format is
 * its row here, found by the format's name. */
typedef struct cli_inspector {
    const char *format;
    int (*info)(const char *path, bool check);
    int (*dump)(const char *path, bool partial);
    /* Before `hash` replays it: says on stderr when the recording's index trailer had to be
     * recovered. NULL: the format has no trailer to lose. */
    dg_status (*warn_recovered)(const char *path, dg_error *err);
} cli_inspector;

static int flrep_info(const char *path, bool check);
static int flrep_dump(const char *path, bool partial);
static dg_status hash_warn_recovered(const char *path, dg_error *err);
static int rply_info(const char *path, bool check);
static int rply_dump(const char *path, bool partial);

static const cli_inspector cli_inspectors[] = {
    {"flrep", flrep_info, flrep_dump, hash_warn_recovered},
    {"rply", rply_info, rply_dump, NULL},
};

/* The inspector of a recording of format fmt (NULL: none, or no recording). */
static const cli_inspector *inspector_for(const harness__format *fmt)
{
    for (size_t i = 0; fmt && i < sizeof cli_inspectors / sizeof cli_inspectors[0]; i++)
        if (strcmp(cli_inspectors[i].format, fmt->name) == 0)
            return &cli_inspectors[i];
    return NULL;
}

static int not_a_recording(const char *cmd, const char *path)
{
    fprintf(stderr, "detgate %s: %s: not a recording (expected magic ", cmd, path);
    for (size_t i = 0; dg_harness__formats[i]; i++)
        fprintf(stderr, "%s%.4s", i == 0 ? "" : dg_harness__formats[i + 1] ? ", " : " or ",
                dg_harness__formats[i]->magic);
    fputs(")\n", stderr);
    return CLI_USAGE;
}

/* The inspector of the recording at path: 0, or the exit code of an unreadable file or one that is no
 * recording (printed). */
static int inspector_of(const char *cmd, const char *path, const cli_inspector **out)
{
    dg_error err;
    dg_error_clear(&err);
    cli_kind kind;
    const harness__format *fmt;
    if (cli_detect(path, &kind, &fmt, &err) < 0) {
        cli_print_error(cmd, &err);
        return CLI_USAGE;
    }
    *out = inspector_for(fmt);
    return *out ? 0 : not_a_recording(cmd, path);
}

/* ---- RPLY ---------------------------------------------------------------------------------------- */

static int rply_command(const char *cmd, const char *path, bool json, bool partial)
{
    dg_error err;
    dg_error_clear(&err);
    size_t len = 0;
    uint8_t *buf = cli_slurp(path, &len, &err);
    if (!buf) {
        cli_print_error(cmd, &err);
        return CLI_USAGE;
    }
    int rc = json ? dg_rply_dump_json(buf, len, stdout, partial, 0, &err) : dg_rply_print_info(buf, len, stdout, &err);
    free(buf);
    fflush(stdout);
    if (rc != 0) {
        cli_print_error(cmd, &err);
        return CLI_USAGE;
    }
    return CLI_EQUAL;
}

/* A file read through a recovered index is not the whole story: said on stderr (the exit stays 0). */
static void warn_recovered(const char *cmd, const char *path, dg_flrep_reader *r)
{
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    if (in->recovered)
        fprintf(stderr, "detgate %s: %s: trailer missing or invalid; recovered %" PRIu64 " tick%s from %zu chunk%s\n",
                cmd, path, in->tick_count, dg_report_plural_s(in->tick_count), in->chunk_count,
                dg_report_plural_s(in->chunk_count));
    if (in->recovered && in->recovery_stop[0])
        fprintf(stderr, "detgate %s: %s: %s\n", cmd, path, in->recovery_stop);
}

/* ---- info ---------------------------------------------------------------------------------------- */

/* A declared schema (format 2.0): the standard fields present, the quanta, every extra field. */
static void print_schema(const dg_schema *s)
{
    static const char *const std[] = {"type", "faction", "pos", "vel", "rot", "health", "flags"};
    static const char *const types[] = {"?", "int", "uint", "float", "bool", "enum", "bytes"};
    printf("schema:             standard fields");
    for (int i = 0, n = 0; i < 7; i++)
        if (s->std_mask & (1u << i))
            printf("%s %s", n++ ? "," : "", std[i]);
    if (!(s->std_mask & DG_STD_ALL))
        printf(" none");
    if (s->std_mask & DG_STD_POS)
        printf("; position quantum %.17g m", s->pos_quantum_m);
    if (s->std_mask & DG_STD_VEL)
        printf("; velocity quantum %.17g m/s", s->vel_quantum_mps);
    printf("\n");
    for (size_t f = 0; f < s->field_count; f++) {
        const dg_field_def *d = &s->fields[f];
        printf("  field %-20s %s", d->name, d->type <= 6 ? types[d->type] : "?");
        if (d->type == DG_FIELD_FLOAT)
            printf(", quantum %.17g", d->quantum);
        else if (d->type == DG_FIELD_INT || d->type == DG_FIELD_UINT)
            printf(", %u bits", d->bits);
        else if (d->type == DG_FIELD_BYTES)
            printf(", %u bytes", d->bits);
        else if (d->type == DG_FIELD_ENUM)
            for (size_t k = 0; k < d->enum_count; k++)
                printf("%s%s", k ? "," : ": ", d->enum_names[k]);
        if (d->unit && d->unit[0])
            printf(", unit %s", d->unit);
        printf("\n");
    }
}

static void print_flrep_info(const char *path, dg_flrep_reader *r)
{
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    printf("file:               %s (%" PRIu64 " bytes)\n", path, in->file_size);
    printf("format:             .flrep %u.%u, recorded by ", h->major, h->minor);
    print_str(stdout, h->engine_version);
    printf("\ntick rate:          %u Hz\n", h->tick_rate_hz);
    const dg_schema *sc = h->schema && !dg_schema_is_legacy(h->schema) ? h->schema : NULL;
    if (sc)
        print_schema(sc);
    if (!sc || h->planet_radius_m > 0) /* a declared schema without a planet shows none */
        printf("planet radius:      %.3f m\n", h->planet_radius_m);
    printf("start:              %" PRIu64 " (unix seconds)\n", h->start_unix_seconds);
    printf("mission:            ");
    print_str(stdout, h->mission_id);
    printf("%s\nsession flags:      0x%08x\n", h->mission_id.len ? "" : "(free flight)", h->session_flags);
    printf("keyframe interval:  %u ticks\n", h->keyframe_interval_ticks);
    if (!sc || (sc->std_mask & (DG_STD_TYPE | DG_STD_FACTION)) == (DG_STD_TYPE | DG_STD_FACTION))
        printf("tables:             %zu type%s, %zu faction%s, %zu participant%s, %zu mission object%s\n",
               h->type_count, dg_report_plural_s(h->type_count), h->faction_count,
               dg_report_plural_s(h->faction_count), h->participant_count, dg_report_plural_s(h->participant_count),
               h->mission_object_count, dg_report_plural_s(h->mission_object_count));
    else /* only the tables of the fields the schema has */
        printf("tables:             %s%zu participant%s, %zu mission object%s\n",
               sc->std_mask & DG_STD_TYPE ? "types, " : sc->std_mask & DG_STD_FACTION ? "factions, " : "",
               h->participant_count, dg_report_plural_s(h->participant_count), h->mission_object_count,
               dg_report_plural_s(h->mission_object_count));
    printf("sections:           %zu\n", in->section_count);
    for (size_t i = 0; i < in->section_count; i++)
        printf("  0x%04x %-26s %8u bytes at %" PRIu64 "\n", in->sections[i].id, section_name(in->sections[i].id),
               in->sections[i].length, in->sections[i].offset);
    if (in->tick_count == 0) {
        printf("ticks:              none\n");
    } else {
        double dur = h->tick_rate_hz ? (double)(in->last_tick - in->first_tick + 1) / h->tick_rate_hz : 0;
        printf("ticks:              %" PRIu64 " .. %" PRIu64 " (%" PRIu64 " tick%s, %.3f s)\n", in->first_tick,
               in->last_tick, in->tick_count, dg_report_plural_s(in->tick_count), dur);
    }
    uint64_t csum = 0, dsum = 0, cmin = UINT64_MAX, cmax = 0;
    for (size_t i = 0; i < in->chunk_count; i++) {
        uint64_t c = in->chunks[i].compressed_size;
        csum += c;
        dsum += in->chunks[i].decompressed_size;
        cmin = c < cmin ? c : cmin;
        cmax = c > cmax ? c : cmax;
    }
    printf("keyframes:          %zu (one per chunk)\n", in->chunk_count);
    if (in->chunk_count) {
        printf("chunks:             %zu, compressed %" PRIu64 " bytes (min %" PRIu64 ", avg %.0f, max %" PRIu64
               "), decompressed %" PRIu64 " bytes (ratio %.2f)\n",
               in->chunk_count, csum, cmin, (double)csum / (double)in->chunk_count, cmax, dsum,
               csum ? (double)dsum / (double)csum : 0.0);
    } else {
        printf("chunks:             0\n");
    }
    if (in->tick_count)
        printf("bytes per tick:     %.1f (whole file), %.1f (chunks only)\n",
               (double)in->file_size / (double)in->tick_count, (double)csum / (double)in->tick_count);
    if (in->recovered) {
        printf("index:              RECOVERED by a forward scan (%s)\n", in->recovery_reason);
        if (in->recovery_stop[0])
            printf("recovery:           %s\n", in->recovery_stop);
    } else {
        printf("index:              trailer valid\n");
    }
}

/* --check: every chunk decompressed and every tick decoded (checksums, tick order, records), the
 * reader's own validation. Prints the verdict line; returns the exit code. */
static int check_flrep(dg_flrep_reader *r)
{
    dg_error err;
    dg_error_clear(&err);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    if (dg_flrep_reader_validate(r, &err) != DG_OK) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        printf("check:              FAILED: %s\n", buf);
        fflush(stdout);
        cli_print_error("info", &err);
        return CLI_USAGE;
    }
    printf("check:              OK: %zu chunk%s and %" PRIu64 " tick%s decoded (checksums, tick order, records)\n",
           in->chunk_count, dg_report_plural_s(in->chunk_count), in->tick_count, dg_report_plural_s(in->tick_count));
    return CLI_EQUAL;
}

int cli_info(int argc, char **argv)
{
    static const struct option opts[] = {{"check", 0, 0, 'c'}, {0, 0, 0, 0}};
    bool check = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'c')
            check = true;
        else
            return cli_usage_error("info", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_usage_error("info", "expected exactly one FILE");
    const char *path = argv[optind];
    const cli_inspector *in = NULL;
    int rc = inspector_of("info", path, &in);
    return rc ? rc : in->info(path, check);
}

static int rply_info(const char *path, bool check)
{
    (void)check; /* the RPLY summary validates every op before it prints */
    int rc = rply_command("info", path, false, false);
    if (rc == CLI_EQUAL)
        printf("check:              OK: every op decoded (the whole file is validated before the summary)\n");
    return rc;
}

static int flrep_info(const char *path, bool check)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK) {
        cli_print_error("info", &err);
        return CLI_USAGE;
    }
    print_flrep_info(path, r);
    int rc = CLI_EQUAL;
    if (check)
        rc = check_flrep(r);
    else
        printf("check:              header, sections and index read; chunks not decoded (use --check)\n");
    dg_flrep_reader_close(r);
    return rc;
}

/* ---- dump ---------------------------------------------------------------------------------------- */

static void json_fstr(FILE *f, dg_flrep_str s) { dg_json_fput_str(f, s.s ? s.s : "", s.len); }

static void dump_header(FILE *f, const dg_flrep_reader *r)
{
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    fprintf(f, "{\"type\":\"header\",\"format\":\"flrep\",\"major\":%u,\"minor\":%u,\"engineVersion\":", h->major,
            h->minor);
    json_fstr(f, h->engine_version);
    fprintf(f, ",\"tickRateHz\":%u,\"planetRadiusM\":", h->tick_rate_hz);
    if (h->schema && !dg_schema_is_legacy(h->schema) && h->planet_radius_m == 0) /* no planet: not a 0 m one */
        fputs("null", f);
    else
        fprintf(f, "%.17g", h->planet_radius_m);
    fprintf(f, ",\"startUnixSeconds\":%" PRIu64 ",\"missionId\":", h->start_unix_seconds);
    json_fstr(f, h->mission_id);
    fprintf(f, ",\"sessionFlags\":%u,\"keyframeIntervalTicks\":%u,\"ticks\":%" PRIu64 ",\"firstTick\":%" PRIu64
               ",\"lastTick\":%" PRIu64 ",\"chunks\":%zu,\"recovered\":%s}\n",
            h->session_flags, h->keyframe_interval_ticks, in->tick_count, in->first_tick, in->last_tick,
            in->chunk_count, in->recovered ? "true" : "false");
    for (size_t i = 0; i < in->section_count; i++) {
        const dg_flrep_section_info *s = &in->sections[i];
        fprintf(f, "{\"type\":\"section\",\"id\":%u,\"name\":\"%s\",\"length\":%u,\"offset\":%" PRIu64, s->id,
                section_name(s->id), s->length, s->offset);
        if (s->id == 1) {
            fputs(",\"types\":[", f);
            for (size_t k = 0; k < h->type_count; k++) {
                fprintf(f, "%s{\"index\":%u,\"id\":", k ? "," : "", h->types[k].index);
                json_fstr(f, h->types[k].id);
                fputs(",\"name\":", f);
                json_fstr(f, h->types[k].name);
                fprintf(f, ",\"category\":%u,\"projectileKind\":%u}", h->types[k].category, h->types[k].projectile_kind);
            }
            fputc(']', f);
        } else if (s->id == 2) {
            fputs(",\"factions\":[", f);
            for (size_t k = 0; k < h->faction_count; k++) {
                fprintf(f, "%s{\"index\":%u,\"id\":", k ? "," : "", h->factions[k].index);
                json_fstr(f, h->factions[k].id);
                fputs(",\"name\":", f);
                json_fstr(f, h->factions[k].name);
                fputc('}', f);
            }
            fputc(']', f);
        } else if (s->id == 3) {
            fputs(",\"participants\":[", f);
            for (size_t k = 0; k < h->participant_count; k++) {
                fprintf(f, "%s{\"participantId\":%u,\"entityId\":%u,\"callsign\":", k ? "," : "",
                        h->participants[k].participant_id, h->participants[k].entity_id);
                json_fstr(f, h->participants[k].callsign);
                fputc('}', f);
            }
            fputs("],\"missionObjects\":[", f);
            for (size_t k = 0; k < h->mission_object_count; k++) {
                fprintf(f, "%s{\"objectId\":", k ? "," : "");
                json_fstr(f, h->mission_objects[k].object_id);
                fprintf(f, ",\"entityId\":%u}", h->mission_objects[k].entity_id);
            }
            fputc(']', f);
        }
        fputs("}\n", f);
    }
}

/* The schema of a 2.0 file as one line: {"type":"schema", ...}. */
static void dump_schema(FILE *f, const dg_schema *s)
{
    static const char *const std[] = {"type", "faction", "pos", "vel", "rot", "health", "flags"};
    static const char *const types[] = {"?", "int", "uint", "float", "bool", "enum", "bytes"};
    fputs("{\"type\":\"schema\",\"standard\":[", f);
    for (int i = 0, n = 0; i < 7; i++)
        if (s->std_mask & (1u << i))
            fprintf(f, "%s\"%s\"", n++ ? "," : "", std[i]);
    fprintf(f, "],\"positionQuantum\":%.17g,\"velocityQuantum\":%.17g,\"fields\":[", s->pos_quantum_m,
            s->vel_quantum_mps);
    for (size_t k = 0; k < s->field_count; k++) {
        const dg_field_def *d = &s->fields[k];
        fprintf(f, "%s{\"name\":", k ? "," : "");
        dg_json_fput_str(f, d->name, strlen(d->name));
        fprintf(f, ",\"type\":\"%s\",\"unit\":", d->type <= 6 ? types[d->type] : "?");
        dg_json_fput_str(f, d->unit ? d->unit : "", d->unit ? strlen(d->unit) : 0);
        fprintf(f, ",\"bits\":%u,\"quantum\":%.17g,\"values\":[", d->bits, d->quantum);
        for (size_t e = 0; e < d->enum_count; e++) {
            fputs(e ? "," : "", f);
            dg_json_fput_str(f, d->enum_names[e], strlen(d->enum_names[e]));
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
}

/* A 2.0 tick: the standard fields the schema has, then each declared field by name (its slot; a
 * float's value = slot x quantum, a uint's and bytes' slot as unsigned). */
static void dump_tick_schema(FILE *f, const dg_flrep_tick *t, const dg_schema *s)
{
    fprintf(f, "{\"type\":\"tick\",\"tick\":%" PRIu64 ",\"keyframe\":%s,\"entities\":[", t->tick,
            t->keyframe ? "true" : "false");
    uint32_t m = s->std_mask;
    for (size_t i = 0; i < t->ent_count; i++) {
        const dg_qentity *e = &t->ents[i];
        fprintf(f, "%s{\"id\":%u", i ? "," : "", e->id);
        if (m & DG_STD_TYPE)
            fprintf(f, ",\"type\":%u", e->type_index);
        if (m & DG_STD_FACTION)
            fprintf(f, ",\"faction\":%u", e->faction_index);
        if (m & DG_STD_POS)
            fprintf(f, ",\"pos\":[%d,%d,%d]", e->pos[0], e->pos[1], e->pos[2]);
        if (m & DG_STD_VEL)
            fprintf(f, ",\"vel\":[%d,%d,%d]", e->vel[0], e->vel[1], e->vel[2]);
        if (m & DG_STD_ROT)
            fprintf(f, ",\"rot\":[%d,%d,%d],\"rotLargest\":%u", e->rot[0], e->rot[1], e->rot[2], e->rot_largest);
        if (m & DG_STD_HEALTH)
            fprintf(f, ",\"health\":%u", e->health);
        if (m & DG_STD_FLAGS)
            fprintf(f, ",\"flags\":%u", e->flags);
        for (size_t k = 0; t->extras && k < s->field_count; k++) {
            int64_t v = t->extras[i * s->field_count + k];
            uint8_t ty = s->fields[k].type;
            if (ty == DG_FIELD_UINT || ty == DG_FIELD_BYTES)
                fprintf(f, ",\"%s\":%" PRIu64, s->fields[k].name, (uint64_t)v);
            else
                fprintf(f, ",\"%s\":%" PRId64, s->fields[k].name, v);
        }
        fputc('}', f);
    }
    fputs("],\"events\":[", f);
    for (size_t i = 0; i < t->event_count; i++) {
        const dg_event *v = &t->events[i];
        fprintf(f, "%s{\"kind\":%u,\"tick\":%" PRIu64 ",\"a\":%u,\"b\":%u,\"c\":%u,\"d\":%u,\"text\":", i ? "," : "",
                v->kind, v->tick, v->a, v->b, v->c, v->d);
        dg_json_fput_str(f, v->text ? v->text : "", v->text_len);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static void dump_tick(FILE *f, const dg_flrep_tick *t)
{
    fprintf(f, "{\"type\":\"tick\",\"tick\":%" PRIu64 ",\"keyframe\":%s,\"entities\":[", t->tick,
            t->keyframe ? "true" : "false");
    for (size_t i = 0; i < t->ent_count; i++) {
        const dg_qentity *e = &t->ents[i];
        fprintf(f,
                "%s{\"id\":%u,\"type\":%u,\"faction\":%u,\"pos\":[%d,%d,%d],\"vel\":[%d,%d,%d],\"rot\":[%d,%d,%d],"
                "\"rotLargest\":%u,\"health\":%u,\"flags\":%u}",
                i ? "," : "", e->id, e->type_index, e->faction_index, e->pos[0], e->pos[1], e->pos[2], e->vel[0],
                e->vel[1], e->vel[2], e->rot[0], e->rot[1], e->rot[2], e->rot_largest, e->health, e->flags);
    }
    fputs("],\"events\":[", f);
    for (size_t i = 0; i < t->event_count; i++) {
        const dg_event *v = &t->events[i];
        fprintf(f, "%s{\"kind\":%u,\"tick\":%" PRIu64 ",\"a\":%u,\"b\":%u,\"c\":%u,\"d\":%u,\"text\":", i ? "," : "",
                v->kind, v->tick, v->a, v->b, v->c, v->d);
        dg_json_fput_str(f, v->text ? v->text : "", v->text_len);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

int cli_dump(int argc, char **argv)
{
    static const struct option opts[] = {{"json", 0, 0, 'j'}, {"partial", 0, 0, 'p'}, {0, 0, 0, 0}};
    bool json = false, partial = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'p')
            partial = true;
        else
            return cli_usage_error("dump", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_usage_error("dump", "expected exactly one FILE");
    if (!json)
        return cli_usage_error("dump", "the only output format is --json (JSON Lines)");
    const char *path = argv[optind];
    const cli_inspector *in = NULL;
    int rc = inspector_of("dump", path, &in);
    return rc ? rc : in->dump(path, partial);
}

static int rply_dump(const char *path, bool partial) { return rply_command("dump", path, true, partial); }

static int flrep_dump(const char *path, bool partial)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK) {
        cli_print_error("dump", &err);
        return CLI_USAGE;
    }
    warn_recovered("dump", path, r);
    /* Validate first: a bad file prints nothing on stdout (unless --partial asks for the prefix). */
    if (!partial && dg_flrep_reader_validate(r, &err) != DG_OK) {
        dg_flrep_reader_close(r);
        cli_print_error("dump", &err);
        return CLI_USAGE;
    }
    dump_header(stdout, r);
    const dg_schema *xs = dg_flrep_reader_header(r)->schema;
    xs = xs && !dg_schema_is_legacy(xs) ? xs : NULL; /* a 1.x file dumps as it always did */
    if (xs)
        dump_schema(stdout, xs);
    dg_flrep_tick t;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        if (xs)
            dump_tick_schema(stdout, &t, xs);
        else
            dump_tick(stdout, &t);
    }
    dg_flrep_reader_close(r);
    fflush(stdout);
    if (rc < 0) {
        cli_print_error("dump", &err);
        return CLI_USAGE;
    }
    return CLI_EQUAL;
}

/* ---- hash ---------------------------------------------------------------------------------------- */

/* One log line per tick of a replayed stream (no raw float hashes: the replay side has none). */
static dg_status write_stream_lines(dg_hash_log_writer *w, const harness__stream *s, dg_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        dg_hash_log_tick lt = {0};
        lt.tick = s->v[i].tick;
        lt.entity_count = s->v[i].count;
        lt.state = s->v[i].state;
        lt.events = s->v[i].events;
        if (dg_hash_log_writer_write(w, &lt, err) != DG_OK)
            return err->code;
    }
    return DG_OK;
}

/* Opens the file's index only, to say on stderr when its trailer had to be recovered. */
static dg_status hash_warn_recovered(const char *path, dg_error *err)
{
    dg_flrep_reader *r = NULL;
    dg_status st = dg_flrep_reader_open_file(&r, path, NULL, err);
    if (st == DG_OK)
        warn_recovered("hash", path, r);
    dg_flrep_reader_close(r);
    return st;
}

int cli_hash(int argc, char **argv)
{
    static const struct option opts[] = {{"output", 1, 0, 'o'}, {"entities", 0, 0, 'e'}, {"jobs", 1, 0, 'j'},
                                         {0, 0, 0, 0}};
    const char *out = NULL;
    bool entities = false;
    unsigned jobs = 1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:j:", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'e')
            entities = true;
        else if (c == 'j') {
            if (!cli_parse_jobs(optarg, &jobs))
                return cli_usage_error("hash", "--jobs: expected 0 (one per CPU) or 1..%d, found '%s'", CLI_JOBS_MAX,
                                       optarg);
        } else
            return cli_usage_error("hash", "unknown option or missing value '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_usage_error("hash", "expected exactly one FILE");
    const char *path = argv[optind];
    dg_error err;
    dg_error_clear(&err);
    cli_kind kind;
    const harness__format *fmt;
    if (cli_detect(path, &kind, &fmt, &err) < 0) {
        cli_print_error("hash", &err);
        return CLI_USAGE;
    }
    cli_outs outs = {0};
    cli_out *log_out = out && strcmp(out, "-") != 0 ? cli_outs_add(&outs, "-o", out, false) : NULL;
    int rc = cli_outs_prepare(&outs, "hash", &path, 1);
    if (rc)
        return rc;
    const cli_inspector *in = inspector_for(fmt);
    if (!in)
        return not_a_recording("hash", path);
    dg_harness__cpu_init(jobs);
    /* On stdout, replay (and so validate) before printing anything, so a bad file prints no partial
     * log; without entity lines the log is written from this pass's stream. A log file (-o) is
     * written in the one pass, to a registered temp that an error discards. */
    harness__stream probe = {0};
    harness__replay_opts ro = {UINT64_MAX, NULL, false, jobs, NULL, NULL};
    bool one_pass = log_out != NULL;
    dg_status st = in->warn_recovered ? in->warn_recovered(path, &err) : DG_OK;
    if (st == DG_OK && !one_pass)
        st = fmt->replay_hash(path, &ro, &probe, &err);
    if (st != DG_OK) {
        dg_harness__stream_free(&probe);
        cli_print_error("hash", &err);
        return CLI_USAGE;
    }
    dg_hash_log_header lh = {0};
    dg_harness__scenario_name(path, lh.scenario, sizeof lh.scenario);
    snprintf(lh.format, sizeof lh.format, "%s", fmt->name);
    lh.entities = entities;
    lh.raw = false;
    dg_hash_log_writer *w = NULL;
    /* -o: a registered temp, renamed into place (or copied into a device or FIFO) when complete */
    if (log_out)
        st = dg_hash_log_writer_open(&w, log_out->work, &lh, &err);
    else
        st = dg_hash_log_writer_open_fp(&w, stdout, false, &lh, &err);
    harness__stream s = {0};
    ro.log = w;
    ro.log_entities = entities;
    if (st == DG_OK && (entities || one_pass))
        st = fmt->replay_hash(path, &ro, &s, &err);
    else if (st == DG_OK)
        st = write_stream_lines(w, &probe, &err);
    dg_status cst = dg_hash_log_writer_close(w, st == DG_OK ? &err : NULL);
    if (st == DG_OK)
        st = cst;
    dg_harness__stream_free(&s);
    dg_harness__stream_free(&probe);
    fflush(stdout);
    if (st != DG_OK) {
        cli_outs_discard(&outs);
        cli_print_error("hash", &err);
        /* writing the log (a full disk, a closed pipe) is "could not test", as for every command;
         * with -o the one pass also reads, and a damaged recording is bad input */
        return st == DG_E_IO || st == DG_E_NOMEM ? CLI_UNTESTED : CLI_USAGE;
    }
    if (!cli_outs_commit(&outs, "hash"))
        return CLI_UNTESTED;
    return CLI_EQUAL;
}
