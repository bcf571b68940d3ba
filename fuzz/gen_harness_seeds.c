/* fuzz/gen_harness_seeds.c — the harness fuzz targets' generated seeds, written at build time (the
 * repository keeps only what cannot be made): hash logs of every version through the real writer,
 * plain and zstd, for hash_log; and for states_file each state stream of a committed folder both as
 * it is and zstd-compressed (what `--states run.jsonl.zst` reads).
 *
 *   gen_harness_seeds OUTDIR STATES_SEED_DIR */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "detgate/hash.h"
#include "fuzz_common.h"

static void make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen_harness_seeds: cannot create %s\n", dir);
        exit(1);
    }
}

/* A log of three ticks (entity lines with ids 1, 2, 5 when entities) in the shape h asks for. */
static void write_log(const char *path, const dg_hash_log_header *h)
{
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_hash_log_writer_open(&w, path, h, &err) != DG_OK) {
        fprintf(stderr, "gen_harness_seeds: %s: %s\n", path, err.msg);
        exit(1);
    }
    static const uint32_t ids[3] = {1, 2, 5};
    uint64_t hashes[3], raw_hashes[3], bits[3 * 2];
    for (uint32_t tick = 0; tick < 3; tick++) {
        for (int i = 0; i < 3; i++) {
            hashes[i] = 0x9e3779b97f4a7c15ull * (tick * 3 + i + 1);
            raw_hashes[i] = hashes[i] ^ 0xff00ff00ff00ff00ull;
            bits[2 * i] = 0x3ff0000000000000ull + tick; /* 1.0 and a few ulps */
            bits[2 * i + 1] = 0x4000000000000000ull + i;
        }
        dg_hash_log_tick t = {.tick = tick * 2, .entity_count = h->entities ? 3 : 2, .state = hashes[0],
                              .events = hashes[1], .raw = hashes[2], .has_raw = h->raw};
        if (h->entities) {
            t.ids = ids;
            t.hashes = hashes;
            t.raw_hashes = h->entity_raw ? raw_hashes : NULL;
            t.raw_bits = h->n_values ? bits : NULL;
        }
        if (dg_hash_log_writer_write(w, &t, &err) != DG_OK) {
            fprintf(stderr, "gen_harness_seeds: %s: %s\n", path, err.msg);
            exit(1);
        }
    }
    if (dg_hash_log_writer_close(w, &err) != DG_OK) {
        fprintf(stderr, "gen_harness_seeds: %s: %s\n", path, err.msg);
        exit(1);
    }
}

static void hash_log_seeds(const char *out)
{
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/hash_log", out);
    make_dir(dir);
    static const struct {
        const char *name;
        bool entities, raw, entity_raw;
        const char *values;
    } kinds[] = {
        {"v1-ticks", false, false, false, NULL},
        {"v1-raw", false, true, false, NULL},
        {"v1-entities", true, true, false, NULL},
        {"v2-entity-raw", true, true, true, NULL},
        {"v3-values", true, true, true, "pos.x,health"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        dg_hash_log_header h = {.entities = kinds[k].entities, .raw = kinds[k].raw,
                                .entity_raw = kinds[k].entity_raw};
        snprintf(h.scenario, sizeof h.scenario, "seed-%zu", k);
        snprintf(h.format, sizeof h.format, "states");
        if (kinds[k].values) {
            snprintf(h.values, sizeof h.values, "%s", kinds[k].values);
            h.n_values = 2;
        }
        for (int zst = 0; zst < 2; zst++) {
            snprintf(path, sizeof path, "%s/%s.hashlog%s", dir, kinds[k].name, zst ? ".zst" : "");
            write_log(path, &h);
        }
    }
}

/* Each regular file of src as it is and zstd-compressed into OUT/states_file. */
static void states_file_seeds(const char *out, const char *src)
{
    char dir[1024], path[1400];
    snprintf(dir, sizeof dir, "%s/states_file", out);
    make_dir(dir);
    DIR *d = opendir(src);
    if (!d) {
        fprintf(stderr, "gen_harness_seeds: cannot open %s\n", src);
        exit(1);
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", src, e->d_name);
        size_t len = 0;
        uint8_t *buf = dg_fuzz_slurp(path, &len);
        if (!buf) {
            fprintf(stderr, "gen_harness_seeds: cannot read %s\n", path);
            exit(1);
        }
        size_t cap = ZSTD_compressBound(len);
        uint8_t *z = malloc(cap);
        size_t zn = z ? ZSTD_compress(z, cap, buf, len, 3) : 0;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        bool ok = dg_fuzz_write_file(path, buf, len);
        snprintf(path, sizeof path, "%s/%s.zst", dir, e->d_name);
        ok = ok && z && !ZSTD_isError(zn) && dg_fuzz_write_file(path, z, zn);
        free(z);
        free(buf);
        if (!ok) {
            fprintf(stderr, "gen_harness_seeds: cannot write %s\n", path);
            exit(1);
        }
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_harness_seeds OUTDIR STATES_SEED_DIR\n");
        return 2;
    }
    make_dir(argv[1]);
    hash_log_seeds(argv[1]);
    states_file_seeds(argv[1], argv[2]);
    return 0;
}
