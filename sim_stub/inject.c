/* sim_stub/inject.c — the text form of the determinism-breaking switches ("bitflip:tick=300,
 * entity=7,field=pos.x,bit=3;fma;libm-trig;pointer-order;clock-seed;racy-threads"), so the CLI,
 * CI jobs and tests all name an injection the same way. */
#include "detgate/sim.h"

#include <stdio.h>
#include <string.h>

static const char *const field_names[DG_SIM_FIELD_COUNT_] = {
    "pos.x", "pos.y", "pos.z", "vel.x", "vel.y", "vel.z", "rot.w", "rot.x", "rot.y", "rot.z", "health", "flags"};

typedef struct inj_word {
    const char *word;
    uint32_t flag;
} inj_word;

static const inj_word inj_words[] = {
    {"bitflip", DG_SIM_INJ_BITFLIP},         {"fma", DG_SIM_INJ_FMA},
    {"libm-trig", DG_SIM_INJ_LIBM_TRIG},     {"pointer-order", DG_SIM_INJ_POINTER_ORDER},
    {"clock-seed", DG_SIM_INJ_CLOCK_SEED},   {"racy-threads", DG_SIM_INJ_RACY_THREADS},
};

const char *dg_sim_field_name(dg_sim_field field)
{
    return (unsigned)field < DG_SIM_FIELD_COUNT_ ? field_names[field] : NULL;
}

static int word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && memcmp(p, w, n) == 0; }

static dg_status inj_fail(dg_error *err, size_t col, const char *p, size_t n, const char *expected)
{
    char where[32];
    snprintf(where, sizeof where, "inject:%zu", col);
    if (n > 40)
        n = 40;
    return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, where, "expected %s, found '%.*s'", expected, (int)n,
                        p ? p : "");
}

static int parse_u64(const char *p, size_t n, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (max - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* Parses "tick=..,entity=..,field=..,bit=.." starting at spec+pos; advances *pos past it. */
static dg_status parse_bitflip(const char *spec, size_t *pos, dg_sim_inject *o, dg_error *err)
{
    unsigned seen = 0;
    size_t i = *pos;
    for (;;) {
        size_t ks = i;
        while (spec[i] && spec[i] != '=' && spec[i] != ',' && spec[i] != ';')
            i++;
        if (spec[i] != '=')
            return inj_fail(err, ks + 1, spec + ks, i - ks, "a bitflip parameter tick=, entity=, field= or bit=");
        size_t kl = i - ks, vs = ++i;
        while (spec[i] && spec[i] != ',' && spec[i] != ';')
            i++;
        const char *v = spec + vs;
        size_t vl = i - vs;
        uint64_t u;
        unsigned bit;
        if (word_is(spec + ks, kl, "tick")) {
            if (!parse_u64(v, vl, UINT64_MAX, &u))
                return inj_fail(err, vs + 1, v, vl, "a tick number");
            o->bitflip_tick = u, bit = 1;
        } else if (word_is(spec + ks, kl, "entity")) {
            if (!parse_u64(v, vl, UINT32_MAX, &u) || u == 0)
                return inj_fail(err, vs + 1, v, vl, "an entity id 1..4294967295");
            o->bitflip_entity = (uint32_t)u, bit = 2;
        } else if (word_is(spec + ks, kl, "field")) {
            unsigned f = 0;
            while (f < DG_SIM_FIELD_COUNT_ && !word_is(v, vl, field_names[f]))
                f++;
            if (f == DG_SIM_FIELD_COUNT_)
                return inj_fail(err, vs + 1, v, vl, "a field (pos.x..z, vel.x..z, rot.w..z, health, flags)");
            o->bitflip_field = (uint8_t)f, bit = 4;
        } else if (word_is(spec + ks, kl, "bit")) {
            if (!parse_u64(v, vl, 63, &u))
                return inj_fail(err, vs + 1, v, vl, "a bit number 0..63");
            o->bitflip_bit = (uint8_t)u, bit = 8;
        } else {
            return inj_fail(err, ks + 1, spec + ks, kl, "a bitflip parameter tick=, entity=, field= or bit=");
        }
        if (seen & bit)
            return inj_fail(err, ks + 1, spec + ks, kl, "each bitflip parameter once");
        seen |= bit;
        if (seen == 15 || spec[i] != ',')
            break;
        i++;
    }
    if (seen != 15)
        return inj_fail(err, i + 1, spec + i, strlen(spec + i), "all of tick=, entity=, field=, bit= after 'bitflip:'");
    if (o->bitflip_field == DG_SIM_FIELD_FLAGS && o->bitflip_bit > 15)
        return inj_fail(err, *pos + 1, spec + *pos, i - *pos, "a bit 0..15 for field=flags");
    *pos = i;
    return DG_OK;
}

dg_status dg_sim_inject_parse(const char *spec, dg_sim_inject *out, dg_error *err)
{
    if (!out)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_sim_inject_parse", "NULL output");
    dg_sim_inject o;
    memset(&o, 0, sizeof o);
    if (!spec || !*spec || strcmp(spec, "none") == 0) {
        *out = o;
        return DG_OK;
    }
    size_t i = 0;
    for (;;) {
        size_t ws = i;
        while (spec[i] && spec[i] != ',' && spec[i] != ';' && spec[i] != ':')
            i++;
        size_t k = 0, n = sizeof inj_words / sizeof inj_words[0];
        while (k < n && !word_is(spec + ws, i - ws, inj_words[k].word))
            k++;
        if (k == n)
            return inj_fail(err, ws + 1, spec + ws, i - ws,
                            "an injection (bitflip:..., fma, libm-trig, pointer-order, clock-seed, racy-threads)");
        if (o.flags & inj_words[k].flag)
            return inj_fail(err, ws + 1, spec + ws, i - ws, "each injection once");
        o.flags |= inj_words[k].flag;
        if (inj_words[k].flag == DG_SIM_INJ_BITFLIP) {
            if (spec[i] != ':')
                return inj_fail(err, i + 1, spec + i, 1, "':' and the bitflip parameters after 'bitflip'");
            i++;
            dg_status st = parse_bitflip(spec, &i, &o, err);
            if (st)
                return st;
        } else if (spec[i] == ':') {
            return inj_fail(err, i + 1, spec + i, 1, "',' or ';' (only bitflip takes parameters)");
        }
        if (!spec[i])
            break;
        i++;
        if (!spec[i])
            return inj_fail(err, i + 1, "", 0, "an injection after the separator");
    }
    *out = o;
    return DG_OK;
}

size_t dg_sim_inject_format(const dg_sim_inject *inj, char *buf, size_t cap)
{
    char tmp[256];
    size_t o = 0;
    tmp[0] = '\0';
    for (size_t k = 0; inj && k < sizeof inj_words / sizeof inj_words[0]; k++) {
        if (!(inj->flags & inj_words[k].flag))
            continue;
        if (o)
            o += (size_t)snprintf(tmp + o, sizeof tmp - o, ";");
        if (inj_words[k].flag == DG_SIM_INJ_BITFLIP) {
            const char *f = dg_sim_field_name((dg_sim_field)inj->bitflip_field);
            o += (size_t)snprintf(tmp + o, sizeof tmp - o, "bitflip:tick=%llu,entity=%u,field=%s,bit=%u",
                                  (unsigned long long)inj->bitflip_tick, inj->bitflip_entity, f ? f : "?",
                                  inj->bitflip_bit);
        } else {
            o += (size_t)snprintf(tmp + o, sizeof tmp - o, "%s", inj_words[k].word);
        }
    }
    if (o == 0)
        o = (size_t)snprintf(tmp, sizeof tmp, "none");
    if (buf && cap)
        snprintf(buf, cap, "%s", tmp);
    return o;
}
