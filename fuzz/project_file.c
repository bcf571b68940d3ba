/* fuzz/project_file.c — fuzz target: the project file parser (harness/project.c, inih underneath) on
 * arbitrary bytes. Every input is accepted or refused with an error; nothing else may happen. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 16))
        return 0;
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f)
        return 0;
    static harness__project p;
    dg_error err;
    dg_error_clear(&err);
    dg_harness__project_parse(&p, f, "fuzz/detgate.ini", &err);
    fclose(f);
    return 0;
}
