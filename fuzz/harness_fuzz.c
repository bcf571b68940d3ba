/* fuzz/harness_fuzz.c — the harness fuzz targets' shared helpers (harness_fuzz.h): the input as a file
 * in a per-process temporary folder, and a frame's elements all read. */
#define _GNU_SOURCE
#include "harness_fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_FILES_MAX 8

static char g_dir[512];
static char g_files[FUZZ_FILES_MAX][600];
static int g_nfiles;

static void remove_files(void)
{
    for (int i = 0; i < g_nfiles; i++)
        unlink(g_files[i]);
    if (g_dir[0])
        rmdir(g_dir);
}

static bool make_dir(void)
{
    if (g_dir[0])
        return true;
    const char *t = getenv("TMPDIR");
    struct stat st;
    if (!t || !*t)
        t = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/detgate-fuzz.XXXXXX", t);
    if (!mkdtemp(g_dir)) {
        g_dir[0] = 0;
        return false;
    }
    atexit(remove_files);
    return true;
}

static const char *file_path(const char *name)
{
    for (int i = 0; i < g_nfiles; i++) {
        const char *base = strrchr(g_files[i], '/') + 1;
        if (strcmp(base, name) == 0)
            return g_files[i];
    }
    if (g_nfiles == FUZZ_FILES_MAX)
        return NULL;
    snprintf(g_files[g_nfiles], sizeof g_files[0], "%s/%s", g_dir, name);
    return g_files[g_nfiles++];
}

const char *dg_fuzz_input_file(const char *name, const uint8_t *data, size_t size)
{
    const char *path = make_dir() ? file_path(name) : NULL;
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (fd < 0)
        return NULL;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    close(fd);
    return done == size ? path : NULL;
}

uint64_t dg_fuzz_touch_frame(const harness__frame *f, size_t field_count)
{
    uint64_t sum = f->tick;
    for (size_t i = 0; i < f->n; i++) {
        const dg_entity_in *e = &f->ents[i];
        sum = sum * 31 + e->id + e->type_index + e->faction_index + e->flags;
        for (size_t k = 0; f->extras && k < field_count; k++)
            sum += (uint64_t)f->extras[i * field_count + k];
        for (size_t k = 0; f->xraw && k < f->nxraw; k++)
            sum += f->xraw[i * f->nxraw + k] == 0.0;
    }
    for (size_t i = 0; i < f->nev; i++) {
        const dg_event *e = &f->events[i];
        sum = sum * 31 + e->kind + e->a + e->b;
        for (size_t k = 0; e->text && k < e->text_len; k++)
            sum += (uint8_t)e->text[k];
    }
    return sum;
}
