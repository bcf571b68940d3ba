/* tests/sim/sim_test_util.h — shared helpers for the sim tests: load a bundled scenario, run two
 * worlds in lockstep and compare their full state bitwise every tick. The comparison is a plain
 * memcmp of the entity arrays (the sim zeroes all padding) plus a field-wise event compare, so it
 * does not depend on the state hash module; swap sim_state_digest for the real hash when wired. */
#ifndef SIM_TEST_UTIL_H
#define SIM_TEST_UTIL_H

#include "detgate/sim.h"

#include <stdint.h>

#define SIM_NO_DIFF UINT64_MAX

/* Parses corpus/scenarios/<name>.scn (fails the test on error). */
dg_sim_scenario *sim_load_bundled(const char *name);
/* Parses scenario text (fails the test on error). */
dg_sim_scenario *sim_parse_text(const char *text);
dg_sim *sim_make(const dg_sim_scenario *scn, const dg_sim_inject *inj);

/* True when both worlds hold bit-identical entities and events for their current tick. */
int sim_states_equal(const dg_sim *a, const dg_sim *b);
/* Steps two worlds (injection a vs b, NULL = none) side by side for up to max_ticks ticks and
 * returns the first tick whose state differs, or SIM_NO_DIFF. */
uint64_t sim_first_diff(const dg_sim_scenario *scn, const dg_sim_inject *a, const dg_sim_inject *b,
                        uint64_t max_ticks);
/* Running digest of a whole run (up to max_ticks ticks). */
uint64_t sim_run_digest(const dg_sim_scenario *scn, const dg_sim_inject *inj, uint64_t max_ticks);
/* Asserts that every padding field of the current entities and events is zero. */
void sim_assert_padding_zero(const dg_sim *sim);

#endif
