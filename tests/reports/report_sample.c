/* tests/reports/report_sample.c — the report room's show window: writes the test bench's rich
 * report in all five kinds into a folder, to look at by eye (e.g. the HTML in a browser).
 * Usage: report_sample <folder> [N]   (not a test: ctest does not run it)
 * With N: a report of N failing scenarios instead (to see how the kinds cope with size). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "report_fixture.h"

int main(int argc, char **argv)
{
    static const char *const ext[5] = {"txt", "json", "junit.xml", "md", "html"};
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s <folder> [N]\n", argv[0]);
        return 2;
    }
    dg_report *r = argc == 3 ? fx_many_failures((uint32_t)strtoul(argv[2], NULL, 10)) : fx_rich_report(NULL);
    for (int k = 0; k < 5; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/report.%s", argv[1], ext[k]);
        dg_error err;
        dg_error_clear(&err);
        if (dg_report_write_file(r, (dg_report_kind)k, path, NULL, &err) != DG_OK) {
            char msg[512];
            dg_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "report_sample: %s\n", msg);
            dg_report_free(r);
            return 1;
        }
        printf("%s\n", path);
    }
    dg_report_free(r);
    return 0;
}
