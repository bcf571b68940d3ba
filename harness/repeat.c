/* harness/repeat.c — run k of a repeat against run 1 (`detgate verify --repeat N` and
 * dg_harness_repeat): the hash streams first, then, where they differ, the two recordings' state diff
 * down to tick, entity and field, as any other divergence. */
#include "format.h"

/* Run k drifted below the quantum from tick `tick` (the first run to): with both runs' raw logs, the
 * entity, field and both raw values, in the message and detail lines. */
static void repeat__raw_drift(dg_report_check *c, unsigned k, uint64_t tick, const char *const raw_logs[2],
                              harness__raw_first *rf)
{
    dg_report_check_set_raw_divergence(c, tick);
    char field[200] = "", ent[260] = "";
    uint32_t who = raw_logs ? dg_harness__raw_locate(c, raw_logs[0], raw_logs[1], tick, field, sizeof field, rf) : 0;
    if (!who)
        return; /* the message stays dg_harness__repeat_conclude's */
    snprintf(ent, sizeof ent, ", first in entity %u%s%s", (unsigned)who, field[0] ? ", " : "", field);
    dg_report_check_set_message(c, "run %u: quantized state identical to run 1; raw floats differ from tick %llu%s "
                                   "(sub-quantum)", k, (unsigned long long)tick, ent);
}

int dg_harness__repeat_compare(dg_report_check *c, const char *first_path, const harness__stream *first,
                            const char *path, const harness__stream *rec, unsigned k,
                            const harness__format *f, const char *const raw_logs[2], harness__raw_first *rf)
{
    uint64_t ft[1], first_raw;
    size_t nf;
    uint64_t nd = dg_harness__compare_streams(NULL, first, rec, DG_REPORT_TICK_NONE, ft, 1, &nf, &first_raw);
    if (nd == 0) {
        if (first_raw != DG_REPORT_TICK_NONE && c->status == DG_REPORT_PASS && c->first_raw_tick == DG_REPORT_TICK_NONE)
            repeat__raw_drift(c, k, first_raw, raw_logs, rf);
        return 0;
    }
    dg_error err;
    dg_error_clear(&err);
    /* the state diff of the two recordings: entity and field of every divergent tick (the first ones) */
    uint64_t n = f->compare_files(c, NULL, first_path, path, &err);
    if (n == UINT64_MAX) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "run %u could not be compared with run 1: %s", k, buf);
        return -1;
    }
    if (n == 0) /* the hashes differ where the states do not: count the ticks by hash */
        dg_harness__compare_streams(c, first, rec, DG_REPORT_TICK_NONE, ft, 1, &nf, &first_raw);
    if (raw_logs) /* a one-quantum step the raw values explain */
        dg_harness__raw_edges(c, raw_logs[0], raw_logs[1]);
    c->status = DG_REPORT_FAIL;
    dg_report_check_set_message(c, "run %u recorded another state than run 1: %llu tick%s differ%s; first at tick %llu "
                                   "(the engine is not deterministic from run to run)",
                                k, (unsigned long long)c->divergent_ticks, dg_report_plural_s(c->divergent_ticks),
                                c->divergent_ticks == 1 ? "s" : "", (unsigned long long)c->first_tick);
    return 1;
}

void dg_harness__repeat_conclude(dg_report_check *c, unsigned runs, const harness__stream *first, int result)
{
    if (result == 0 && c->first_raw_tick != DG_REPORT_TICK_NONE) {
        if (!c->message) /* else repeat__raw_drift's, naming the entity and field */
            dg_report_check_set_message(c, "%u runs: quantized state identical; raw floats differ from tick %llu "
                                           "(sub-quantum)", runs, (unsigned long long)c->first_raw_tick);
    } else if (result == 0)
        dg_report_check_set_message(c, "%u runs, %zu tick%s each: every run recorded the same state", runs, first->n,
                                    dg_report_plural_s(first->n));
}
