/* tests/codec/flrep2_sample_writer.c — writes the two files old_reader_test.sh hands to detgate
 * readers of two builds: LEGACY (no schema: format 1.0, with events and churn) and V2 (the
 * flrep2_fixture.h schema: format 2.0). Usage: flrep2_sample_writer LEGACY.flrep V2.flrep */
#include <stdio.h>
#include <string.h>

#include "detgate/flrep.h"
#include "flrep2_fixture.h"
#include "flrep_testlib.h"

static int fail(const char *what, const dg_error *err)
{
    char line[512];
    dg_error_format(err, line, sizeof line);
    fprintf(stderr, "flrep2_sample_writer: %s: %s\n", what, line);
    return 1;
}

static int write_v2(const char *path)
{
    dg_schema s = f2_schema();
    dg_flrep_header h = f2_header(&s, 60);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_open(&w, path, &h, NULL, &err) != DG_OK)
        return fail(path, &err);
    for (uint64_t t = 0; t < 200; t++) {
        dg_entity_in e[8];
        int64_t x[8 * F2_NF];
        for (size_t i = 0; i < 8; i++)
            f2_body(i, t, &e[i], x + i * F2_NF);
        if (dg_flrep_writer_tick_x(w, t, e, x, 8, NULL, 0, NULL, NULL, &err) != DG_OK) {
            dg_flrep_writer_abort(w);
            return fail(path, &err);
        }
    }
    return dg_flrep_writer_close(w, &err) == DG_OK ? 0 : fail(path, &err);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: flrep2_sample_writer LEGACY.flrep V2.flrep\n");
        return 2;
    }
    tl_params p;
    memset(&p, 0, sizeof p);
    p.seed = 14;
    p.ticks = 400;
    p.entities = 24;
    p.churn = true;
    p.events = true;
    tl_session s;
    tl_record(argv[1], &p, &s);
    tl_session_free(&s);
    return write_v2(argv[2]);
}
