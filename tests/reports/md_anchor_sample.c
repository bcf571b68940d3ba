/* tests/reports/md_anchor_sample.c — writes the Markdown report of scenarios with odd names (or of
 * N failures under a small size cap) to a file, for md_anchor_test.sh to check every summary link
 * against the anchors GitHub and GitLab generate from the headings.
 * Usage: md_anchor_sample FILE odd | FILE many N CAP */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/report.h"

static void failing(dg_report *r, const char *name, uint64_t tick)
{
    dg_report_scenario *s = dg_report_add_scenario(r, name, "flrep");
    if (!s)
        exit(1);
    dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS);
    dg_report_check *c = dg_report_add_check(s, "golden", DG_REPORT_FAIL);
    if (!c || dg_report_check_add_divergent(c, tick, 1) != DG_OK)
        exit(1);
}

static dg_report *odd_names(void)
{
    static const char *const names[] = {
        "Crash Test", "über Größe/Ωmega", "a -- b", "x · y", "A", "a", "🚀", "a_b|c@d*e`f[g]", "Bisect",
        "ÀÉÎ ĀĂĹ ЖЯЀ ΣΩ", "trailing  ", "  leading", "tab\there", "scenario-3", "emoji ⚠️ warn", "日本語 テスト",
        "x--y", "-lead", "&amp; <b>bold</b> #hash", "1.2.3 (rc)", "snake_case_name", "a", "a-1", "Scenario 4"};
    dg_report *r = dg_report_new("gate", "test", NULL, NULL);
    if (!r)
        exit(1);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        failing(r, names[i], 10 + i);
    char longname[400];
    memset(longname, 'L', 300);
    longname[300] = 0;
    failing(r, longname, 99);
    dg_report_scenario *ok = dg_report_add_scenario(r, "all good", "flrep");
    dg_report_scenario *er = dg_report_add_scenario(r, "could not test", "flrep");
    if (!ok || !er)
        exit(1);
    dg_report_add_check(ok, "golden", DG_REPORT_PASS);
    dg_report_add_check(er, "golden", DG_REPORT_ERROR);
    if (dg_report_set_bisect(r, "Bisect", NULL, NULL, "v1", "v2", DG_REPORT_TICK_NONE) != DG_OK)
        exit(1);
    return r;
}

static dg_report *many(unsigned n)
{
    dg_report *r = dg_report_new("gate", "test", NULL, NULL);
    if (!r)
        exit(1);
    for (unsigned i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, i % 3 ? "case %u" : "Case %u", i / 3); /* every third a twin */
        failing(r, name, 100 + i);
    }
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: md_anchor_sample FILE odd | FILE many N CAP\n");
        return 2;
    }
    bool is_many = strcmp(argv[2], "many") == 0 && argc == 5;
    dg_report *r = is_many ? many((unsigned)strtoul(argv[3], NULL, 10)) : odd_names();
    dg_report_opts o = {0};
    if (is_many)
        o.markdown_max_bytes = (size_t)strtoul(argv[4], NULL, 10);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_report_write_file(r, DG_REPORT_MARKDOWN, argv[1], &o, &err);
    dg_report_free(r);
    return st == DG_OK ? 0 : 1;
}
