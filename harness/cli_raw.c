/* harness/cli_raw.c — the raw-float drift policy (`--raw fail|warn|ignore`, `--strict-raw`): how a
 * check whose quantized state stayed equal while its raw float hashes differed is judged, in one
 * place for every command that compares (docs/CLI.md "Raw-float drift"). */
#include "cli.h"

#include <string.h>

static const char *const raw__names[3] = {"warn", "fail", "ignore"}; /* by cli_raw_policy value */

/* Until a project file (or a test) sets it, the default is warn: CI stays green, the report amber. */
static cli_raw_policy raw__default = CLI_RAW_WARN;

bool cli_raw_policy_parse(const char *s, cli_raw_policy *out)
{
    for (int k = 0; s && k < 3; k++)
        if (strcmp(s, raw__names[k]) == 0) {
            *out = (cli_raw_policy)k;
            return true;
        }
    return false;
}

const char *cli_raw_policy_name(cli_raw_policy p) { return (unsigned)p < 3 ? raw__names[p] : "warn"; }

void cli_raw_policy_set_default(cli_raw_policy p)
{
    if ((unsigned)p < 3)
        raw__default = p;
}

cli_raw_policy cli_raw_policy_default(void) { return raw__default; }

int cli_raw_opt(const char *cmd, int opt, const char *arg, cli_raw_policy *p)
{
    if (opt == CLI_OPT_STRICT_RAW) {
        *p = CLI_RAW_FAIL;
        return 0;
    }
    if (opt != CLI_OPT_RAW)
        return -1;
    if (!cli_raw_policy_parse(arg, p))
        return cli_usage_error(cmd, "--raw: expected fail, warn or ignore, found '%s'", arg ? arg : "");
    return 0;
}

dg_report_status cli_raw_status(cli_raw_policy p, uint64_t first_tick, uint64_t first_raw_tick)
{
    if (first_tick != DG_REPORT_TICK_NONE)
        return DG_REPORT_FAIL; /* the quantized state diverged: the policy has nothing to say */
    if (first_raw_tick == DG_REPORT_TICK_NONE)
        return DG_REPORT_PASS;
    return p == CLI_RAW_FAIL ? DG_REPORT_FAIL : p == CLI_RAW_IGNORE ? DG_REPORT_PASS : DG_REPORT_WARN;
}

void cli_raw_apply(dg_report_check *c, cli_raw_policy p)
{
    if (!c || c->status != DG_REPORT_PASS || !c->sub_quantum)
        return; /* FAIL and ERROR stand; a check without a raw-only drift has nothing to judge */
    c->status = cli_raw_status(p, c->first_tick, c->first_raw_tick);
}

void cli_raw_apply_report(dg_report *rep, cli_raw_policy p)
{
    for (uint32_t i = 0; rep && i < rep->n_scenarios; i++)
        for (uint32_t j = 0; j < rep->scenarios[i]->n_checks; j++)
            cli_raw_apply(rep->scenarios[i]->checks[j], p);
}

const char *cli_raw_verdict_note(cli_raw_policy p)
{
    return p == CLI_RAW_FAIL ? "a failure under --raw fail"
           : p == CLI_RAW_IGNORE ? "ignored under --raw ignore"
                                 : "a warning under --raw warn, the default";
}
