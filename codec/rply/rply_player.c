/* codec/rply/rply_player.c — the RPLY player: file + iterator + state, tick-atomic advance,
 * checkpoints at keyframes (state just before the keyframe's TICK) and seek through them. */
#include <stdio.h>
#include <stdlib.h>

#include "rply_decode.h"

struct dg_rply_checkpoint {
    uint32_t kf;            /* keyframe index entry */
    dg_rply_iter it;        /* iterator positioned on the keyframe's TICK */
    uint32_t tick;
    bool started;
    uint32_t live_count, props_used, props_free, anims_used, anims_free;
    dg_rply__entity *live;
    dg_rply__prop *props;
    dg_rply__anim *anims;
    size_t bytes;
};

#define DEFAULT_BUDGET ((size_t)64 << 20)

dg_rply_player *dg_rply_player_new(const dg_rply_file *f, size_t cp_budget, dg_error *err)
{
    dg_rply_player *p = calloc(1, sizeof *p);
    if (!p) {
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply player", "player");
        return NULL;
    }
    p->f = f;
    p->cp_budget = cp_budget ? cp_budget : DEFAULT_BUDGET;
    dg_rply_iter_init(&p->it, f);
    if (dg_rply__state_init(&p->state, err) != DG_OK) {
        free(p);
        return NULL;
    }
    return p;
}

const dg_rply_state *dg_rply_player_state(const dg_rply_player *p) { return &p->state; }
uint64_t dg_rply_player_ops_applied(const dg_rply_player *p) { return p->ops_applied; }

static void cp_release(dg_rply_checkpoint *c)
{
    free(c->live);
    free(c->props);
    free(c->anims);
}

void dg_rply_player_free(dg_rply_player *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->cp_count; i++)
        cp_release(&p->cps[i]);
    free(p->cps);
    dg_rply__state_fini(&p->state);
    free(p);
}

static void *dup_bytes(const void *src, size_t n)
{
    if (n == 0)
        return NULL;
    void *d = malloc(n);
    if (d)
        memcpy(d, src, n);
    return d;
}

/* Keeps the state as it stands just before keyframe `kf`'s TICK. Best effort: a checkpoint that
 * does not fit the budget or memory is simply not kept (seek then starts from an earlier one). */
static void capture(dg_rply_player *p, uint32_t kf, const dg_rply_iter *it)
{
    if (p->cp_count && p->cps[p->cp_count - 1].kf >= kf)
        return;
    const dg_rply_state *s = &p->state;
    size_t bytes = s->live_count * sizeof *s->live + s->props_used * sizeof *s->props +
                   s->anims_used * sizeof *s->anims + sizeof(dg_rply_checkpoint);
    if (bytes > p->cp_budget - p->cp_bytes || p->cp_bytes > p->cp_budget)
        return;
    if (!dg_grow((void **)&p->cps, &p->cp_cap, (size_t)p->cp_count + 1, sizeof *p->cps))
        return;
    dg_rply_checkpoint c;
    memset(&c, 0, sizeof c);
    c.kf = kf;
    c.it = *it;
    c.tick = s->tick;
    c.started = s->started;
    c.live_count = s->live_count;
    c.props_used = s->props_used;
    c.props_free = s->props_free;
    c.anims_used = s->anims_used;
    c.anims_free = s->anims_free;
    c.live = dup_bytes(s->live, s->live_count * sizeof *s->live);
    c.props = dup_bytes(s->props, s->props_used * sizeof *s->props);
    c.anims = dup_bytes(s->anims, s->anims_used * sizeof *s->anims);
    if ((s->live_count && !c.live) || (s->props_used && !c.props) || (s->anims_used && !c.anims)) {
        cp_release(&c);
        return;
    }
    c.bytes = bytes;
    p->cps[p->cp_count++] = c;
    p->cp_bytes += bytes;
}

static dg_status restore(dg_rply_player *p, const dg_rply_checkpoint *c, dg_error *err)
{
    dg_rply_state *s = &p->state;
    if (!dg_grow((void **)&s->live, &s->live_cap, c->live_count, sizeof *s->live) ||
        !dg_grow((void **)&s->props, &s->props_cap, c->props_used, sizeof *s->props) ||
        !dg_grow((void **)&s->anims, &s->anims_cap, c->anims_used, sizeof *s->anims))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply player", "restoring a checkpoint");
    dg_rply_state_clear(s);
    if (c->live_count)
        memcpy(s->live, c->live, c->live_count * sizeof *s->live);
    if (c->props_used)
        memcpy(s->props, c->props, c->props_used * sizeof *s->props);
    if (c->anims_used)
        memcpy(s->anims, c->anims, c->anims_used * sizeof *s->anims);
    s->live_count = c->live_count;
    for (uint32_t i = 0; i < s->live_count; i++) {
        uint16_t id = s->live[i].pub.id;
        s->slot[id] = (uint16_t)(i + 1);
        s->bits[id / 64] |= 1ull << (id % 64);
    }
    s->props_used = c->props_used;
    s->props_free = c->props_free;
    s->anims_used = c->anims_used;
    s->anims_free = c->anims_free;
    s->tick = c->tick;
    s->started = c->started;
    p->it = c->it;
    p->has_pending = false;
    return DG_OK;
}

static void rewind_to_start(dg_rply_player *p)
{
    dg_rply_state_clear(&p->state);
    dg_rply_iter_init(&p->it, p->f);
    p->has_pending = false;
}

/* The latest checkpoint at or before stream offset `pos` (NULL if none). */
static const dg_rply_checkpoint *checkpoint_before(const dg_rply_player *p, uint32_t pos)
{
    const dg_rply_checkpoint *best = NULL;
    uint32_t lo = 0, hi = p->cp_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->cps[mid].it.pos <= pos) {
            best = &p->cps[mid];
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return best;
}

/* Decodes and applies ops while they belong to ticks <= limit and start before stop_pos. The op
 * that ends the run (the next tick's opener) is kept decoded for the next call. */
static dg_status run(dg_rply_player *p, uint32_t limit, uint32_t stop_pos, dg_error *err)
{
    /* The iterator lives in locals here: the state writes through pointers, and a copy inside the
     * player would have to be reloaded after every op. */
    dg_rply_iter cur = p->it, next;
    dg_rply_op op;
    uint64_t applied = 0;
    dg_status st = DG_OK;
    while (cur.pos < stop_pos) {
        if (p->has_pending) {
            op = p->pending;
            next = p->pending_it;
            p->has_pending = false;
        } else {
            next = cur;
            int r = rply__iter_next(&next, &op, err);
            if (r == 0)
                break;
            if (r < 0) {
                st = err && err->code != DG_OK ? err->code : DG_E_MALFORMED;
                break;
            }
        }
        if (op.tick > limit) {
            p->pending = op;
            p->pending_it = next;
            p->has_pending = true;
            break;
        }
        if (RPLY_UNLIKELY(next.next_kf != cur.next_kf))
            capture(p, cur.next_kf, &cur);
        st = rply__apply(&p->state, p->f, &op, err);
        if (RPLY_UNLIKELY(st != DG_OK))
            break;
        cur = next;
        applied++;
    }
    p->it = cur;
    p->ops_applied += applied;
    return st;
}

/* Puts the player back exactly where it was (iterator `it0`, state tick/started) after a failure:
 * from the latest checkpoint at or before that point, replay forward (ops that succeeded before). */
static void roll_back(dg_rply_player *p, const dg_rply_iter *it0, uint32_t tick0, bool started0)
{
    const dg_rply_checkpoint *c = checkpoint_before(p, it0->pos);
    if (!c || restore(p, c, NULL) != DG_OK)
        rewind_to_start(p);
    if (run(p, UINT32_MAX, it0->pos, NULL) != DG_OK || p->it.pos != it0->pos) {
        rewind_to_start(p); /* cannot happen for a prefix that applied before; fail closed */
        return;
    }
    p->it = *it0;
    p->has_pending = false;
    p->state.tick = tick0;
    p->state.started = started0;
}

dg_status dg_rply_player_advance(dg_rply_player *p, uint32_t tick, dg_error *err)
{
    if (tick >= p->f->hdr.tick_count)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply player",
                            "tick %u is not < tickCount %u", tick, p->f->hdr.tick_count);
    if (p->state.started && tick < p->state.tick)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply player",
                            "advance to tick %u from tick %u goes backwards (use seek)", tick,
                            p->state.tick);
    dg_rply_iter it0 = p->it;
    uint32_t tick0 = p->state.tick;
    bool started0 = p->state.started;
    dg_status st = run(p, tick, UINT32_MAX, err);
    if (st != DG_OK) {
        roll_back(p, &it0, tick0, started0);
        return st;
    }
    p->state.tick = tick;
    p->state.started = true;
    return DG_OK;
}

/* Index of the last keyframe whose tick is <= tick, or -1. */
static int64_t keyframe_at_or_before(const dg_rply_file *f, uint32_t tick)
{
    int64_t lo = 0, hi = (int64_t)f->hdr.keyframe_count - 1, best = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (dg_rply_file_keyframe(f, (uint32_t)mid).tick <= tick) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

/* The checkpoint of the latest keyframe <= kf that was kept (NULL if none). */
static const dg_rply_checkpoint *checkpoint_for(const dg_rply_player *p, int64_t kf)
{
    const dg_rply_checkpoint *best = NULL;
    for (uint32_t i = 0; i < p->cp_count && (int64_t)p->cps[i].kf <= kf; i++)
        best = &p->cps[i];
    return best;
}

dg_status dg_rply_player_seek(dg_rply_player *p, uint32_t tick, dg_error *err)
{
    if (tick >= p->f->hdr.tick_count)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply player",
                            "tick %u is not < tickCount %u", tick, p->f->hdr.tick_count);
    dg_rply_iter it0 = p->it;
    uint32_t tick0 = p->state.tick;
    bool started0 = p->state.started;
    bool can_go_on = !p->state.started || tick >= p->state.tick;
    const dg_rply_checkpoint *c = checkpoint_for(p, keyframe_at_or_before(p->f, tick));
    if (c && (!can_go_on || c->it.pos > p->it.pos)) {
        if (restore(p, c, err) != DG_OK)
            return DG_E_NOMEM;
    } else if (!can_go_on) {
        rewind_to_start(p);
    }
    dg_status st = run(p, tick, UINT32_MAX, err);
    if (st != DG_OK) {
        roll_back(p, &it0, tick0, started0);
        return st;
    }
    p->state.tick = tick;
    p->state.started = true;
    return DG_OK;
}

dg_status dg_rply_player_prepare(dg_rply_player *p, dg_error *err)
{
    dg_status st = DG_OK;
    if (p->f->hdr.tick_count > 0) {
        rewind_to_start(p);
        st = run(p, UINT32_MAX, UINT32_MAX, err);
    }
    rewind_to_start(p);
    return st;
}

dg_status dg_rply_validate(const dg_rply_file *f, dg_error *err)
{
    dg_rply_state s;
    if (dg_rply__state_init(&s, err) != DG_OK)
        return DG_E_NOMEM;
    dg_rply_iter it;
    dg_rply_iter_init(&it, f);
    dg_rply_op op;
    dg_status st = DG_OK;
    int r;
    while ((r = rply__iter_next(&it, &op, err)) > 0)
        if ((st = rply__apply(&s, f, &op, err)) != DG_OK)
            break;
    if (r < 0)
        st = err ? err->code : DG_E_MALFORMED;
    dg_rply__state_fini(&s);
    return st;
}
