/* harness/format.c — the formats table's rows in one list (the default first) and the look-ups by
 * name and by magic that --format, a project's `format` key and file detection go through. */
#include "format.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

const harness__format *const dg_harness__formats[] = {&dg_harness__format_flrep, &dg_harness__format_rply, NULL};

const harness__format *dg_harness__format_default(void) { return dg_harness__formats[0]; }

const harness__format *dg_harness__format_find(const char *name)
{
    for (size_t i = 0; name && dg_harness__formats[i]; i++)
        if (strcmp(dg_harness__formats[i]->name, name) == 0)
            return dg_harness__formats[i];
    return NULL;
}

const harness__format *dg_harness__format_of_magic(const unsigned char *m, size_t n)
{
    for (size_t i = 0; n >= 4 && dg_harness__formats[i]; i++)
        if (memcmp(dg_harness__formats[i]->magic, m, 4) == 0)
            return dg_harness__formats[i];
    return NULL;
}

harness__view_kind dg_harness__format_view(const harness__format *f)
{
    return !f ? HARNESS_VIEW_LOG : f->entity_views ? HARNESS_VIEW_FLREP : HARNESS_VIEW_OTHER;
}

/* Built once from the rows (a constant after that: threads may read it). */
static char format_names[256];

static void format_names_build(void)
{
    const char *names[16];
    size_t n = 0;
    while (dg_harness__formats[n] && n < 16)
        names[n] = dg_harness__formats[n]->name, n++;
    dg_harness__join_names(format_names, sizeof format_names, names, n, ", ", " or ");
}

const char *dg_harness__format_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, format_names_build);
    return format_names;
}
