/* tests/reports/report_fixture.h — the report room's test bench: one rich report built by hand
 * (a passing scenario with a sub-quantum note, a failing one with enough divergent ticks to hit
 * every cap and fold ranges, an untestable one, a bare diff, a bisect section, and names that need
 * every kind of escaping), plus the figures the tests expect, derived from how it is built. */
#ifndef DETGATE_TESTS_REPORT_FIXTURE_H
#define DETGATE_TESTS_REPORT_FIXTURE_H

#include "detgate/report.h"

/* Names that must survive (or be neutralised by) every renderer. */
#define FX_EVIL_SCENARIO "convoy-12 \"night\" & <script>alert('x')</script> \xCE\xA9mega-\xF0\x9F\x9A\x80"
#define FX_CTRL_NAME "Viper\x01\x1b[31m"  /* control chars incl. an ANSI escape */
#define FX_BAD_UTF8_NAME "bad\xFF\xFEname" /* ill-formed UTF-8 */

#define FX_FIRST_TICK 4312u
#define FX_RUN1_LEN 9u    /* 4312..4320 */
#define FX_RUN2_FIRST 5000u
#define FX_RUN2_LEN 100u  /* 5000..5099 */
#define FX_RUN3_FIRST 6000u
#define FX_RUN3_STEP 3u
#define FX_RUN3_LEN 1000u /* 6000, 6003, ..., 8997: one range each until the range cap */
#define FX_DIVERGENT (FX_RUN1_LEN + FX_RUN2_LEN + FX_RUN3_LEN)
#define FX_ENTITIES_PER_TICK 40u /* entity diffs offered per detailed tick */
#define FX_RAW_TICK 1200u        /* dogfight-40 golden: raw hashes differ, quanta equal */
#define FX_TRAJ_ENTITY 7u

/* Builds the rich report with the given limits (NULL = defaults). Asserts on failure. */
dg_report *fx_rich_report(const dg_report_limits *limits);
/* A report with n failing scenarios, each with a detailed first tick (for size caps). */
dg_report *fx_many_failures(uint32_t n);

#endif
