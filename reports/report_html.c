/* reports/report_html.c — the report room's wall display: one self-contained HTML page (inline
 * CSS and SVG drawn here, no network; one small inline script only to switch between followed
 * entities) with the summary, failures first, and per failing check a timeline of divergent
 * entities per tick, the spread of the divergence, the followed entities' trajectories on both
 * sides at one scale, and the diff tables. Markup is XHTML-compatible (every tag closed, attributes quoted) so it
 * parses as XML too. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report_internal.h"

#define HT_DEFAULT_ROWS 200u
#define HT_DEFAULT_SECTIONS 100u
#define HT_W 960.0
#define HT_TL_H 170.0
#define HT_TR_H 440.0
#define HT_ML 56.0 /* left margin: y-axis labels */
#define HT_MR 20.0
#define HT_MT 26.0
#define HT_MB 34.0
#define HT_COL_A "#1f6fb4"
#define HT_COL_B "#e8710a"
#define HT_COL_BAR "#c9302c"

static const char ht__css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d2125;"
    "background:#f6f7f9}"
    "main{max-width:1000px;margin:0 auto;padding:16px 20px 40px}"
    "h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #d0d4d9;"
    "padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    ".meta{color:#5a6270;margin:0 0 12px}"
    "table{border-collapse:collapse;background:#fff;margin:6px 0 10px;font-size:13px}"
    "th,td{border:1px solid #d0d4d9;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#eceef1}td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums;"
    "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}"
    ".badge{display:inline-block;border-radius:4px;padding:0 7px;font-weight:600;font-size:12px;color:#fff}"
    ".pass{background:#2e7d32}.fail{background:#c62828}.error{background:#b26a00}"
    ".warn{background:#ffb300;color:#1a1a1a}"
    ".note{color:#5a6270;font-size:12px}.headline{font-weight:600}"
    "section.check{background:#fff;border:1px solid #d0d4d9;border-radius:6px;padding:4px 16px 12px;"
    "margin:18px 0}"
    "svg{display:block;background:#fff;max-width:100%;height:auto}"
    "svg text{font:11px system-ui,sans-serif;fill:#333}"
    "details{margin:6px 0}summary{cursor:pointer;color:#1f4f8b}"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}"
    "footer{color:#8a919c;font-size:12px;margin-top:30px}"
    ".why{font-weight:600;margin:4px 0 6px}select{font:inherit;max-width:100%}"
    "td.q{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;white-space:nowrap}";

/* Shows the picked entity's picture, hides the others of that check. No '<' or '&' in it, so the
 * page stays well-formed XML; the page reads fine without it (the first entity is shown). */
static const char ht__script[] =
    "function dgPick(sel){var d=document.querySelectorAll('div.traj[data-check=\\''+sel.getAttribute('data-check')+"
    "'\\']');for(var i=0;i!==d.length;i++){d[i].hidden=String(i)!==sel.value;}}";

/* ---- small output helpers --------------------------------------------------------------------- */

static void ht__esc(dg_rsink *s, const char *str)
{
    dg_rep__xml_text(s, str);
}

/* SVG coordinates: two decimals, '.' whatever the locale. */
static void ht__num(dg_rsink *s, double v)
{
    char b[48];
    if (!isfinite(v))
        v = 0;
    snprintf(b, sizeof b, "%.2f", v);
    for (char *p = b; *p; p++)
        if (*p == ',')
            *p = '.';
    dg_rep__sink_puts(s, b);
}

static void ht__attr_num(dg_rsink *s, const char *name, double v)
{
    dg_rep__sink_printf(s, " %s=\"", name);
    ht__num(s, v);
    dg_rep__sink_puts(s, "\"");
}

static const char *ht__status_word(dg_report_status st)
{
    return st == DG_REPORT_PASS ? "PASS" : st == DG_REPORT_WARN ? "WARN" : st == DG_REPORT_FAIL ? "FAIL" : "ERROR";
}

static void ht__badge(dg_rsink *s, dg_report_status st)
{
    dg_rep__sink_printf(s, "<span class=\"badge %s\">%s</span>", dg_report_status_name(st),
                    ht__status_word(st));
}

static void ht__text_el(dg_rsink *s, double x, double y, const char *anchor, const char *extra, const char *text)
{
    dg_rep__sink_puts(s, "<text");
    ht__attr_num(s, "x", x);
    ht__attr_num(s, "y", y);
    dg_rep__sink_printf(s, " text-anchor=\"%s\"%s>", anchor, extra ? extra : "");
    ht__esc(s, text);
    dg_rep__sink_puts(s, "</text>\n");
}

/* Text turned a quarter left about its own anchor (a y-axis title). */
static void ht__vtext(dg_rsink *s, double x, double y, const char *text)
{
    dg_rep__sink_puts(s, "<text");
    ht__attr_num(s, "x", x);
    ht__attr_num(s, "y", y);
    dg_rep__sink_puts(s, " text-anchor=\"middle\" transform=\"rotate(-90 ");
    ht__num(s, x);
    dg_rep__sink_puts(s, " ");
    ht__num(s, y);
    dg_rep__sink_puts(s, ")\">");
    ht__esc(s, text);
    dg_rep__sink_puts(s, "</text>\n");
}

static void ht__line(dg_rsink *s, double x1, double y1, double x2, double y2, const char *style)
{
    dg_rep__sink_puts(s, "<line");
    ht__attr_num(s, "x1", x1);
    ht__attr_num(s, "y1", y1);
    ht__attr_num(s, "x2", x2);
    ht__attr_num(s, "y2", y2);
    dg_rep__sink_printf(s, " %s/>\n", style);
}

static void ht__svg_open(dg_rsink *s, double h, const char *label)
{
    dg_rep__sink_puts(s, "<svg viewBox=\"0 0 ");
    ht__num(s, HT_W);
    dg_rep__sink_puts(s, " ");
    ht__num(s, h);
    dg_rep__sink_puts(s, "\" width=\"");
    ht__num(s, HT_W);
    dg_rep__sink_puts(s, "\" height=\"");
    ht__num(s, h);
    dg_rep__sink_puts(s, "\" role=\"img\" aria-label=\"");
    ht__esc(s, label);
    dg_rep__sink_puts(s, "\">\n");
}

/* ---- timeline --------------------------------------------------------------------------------- */

static uint64_t ht__timeline_span(const dg_report_scenario *sc, const dg_report_check *c)
{
    uint64_t span = sc->ticks;
    if (c->n_buckets && c->buckets[c->n_buckets - 1].last >= span)
        span = c->buckets[c->n_buckets - 1].last + 1;
    return span ? span : 1;
}

static void ht__timeline_axes(dg_rsink *s, uint64_t span, uint32_t max_ent)
{
    const double pw = HT_W - HT_ML - HT_MR, base = HT_TL_H - HT_MB;
    ht__line(s, HT_ML, base, HT_ML + pw, base, "stroke=\"#555\" stroke-width=\"1\"");
    ht__line(s, HT_ML, HT_MT, HT_ML, base, "stroke=\"#555\" stroke-width=\"1\"");
    char b[48];
    for (int i = 0; i <= 5; i++) {
        uint64_t tk = (uint64_t)((double)span * i / 5.0);
        double x = HT_ML + pw * i / 5.0;
        ht__line(s, x, base, x, base + 4, "stroke=\"#555\"");
        snprintf(b, sizeof b, "%llu", (unsigned long long)tk);
        ht__text_el(s, x, base + 16, i == 0 ? "start" : i == 5 ? "end" : "middle", NULL, b);
    }
    ht__text_el(s, HT_ML + pw / 2, HT_TL_H - 4, "middle", NULL, "tick");
    snprintf(b, sizeof b, "%u", (unsigned)max_ent);
    ht__text_el(s, HT_ML - 6, HT_MT + 4, "end", NULL, b);
    ht__text_el(s, HT_ML - 6, base, "end", NULL, "0");
    ht__vtext(s, 14, HT_MT + (base - HT_MT) / 2, "entities");
}

/* marker_id: the first drawn section's marker is id="first-divergence" (a stable anchor for
 * readers and tests), the others' "first-divergence-N". */
static void ht__timeline(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c, const char *marker_id)
{
    if (c->n_buckets == 0)
        return;
    const double pw = HT_W - HT_ML - HT_MR, base = HT_TL_H - HT_MB, ph = base - HT_MT;
    uint64_t span = ht__timeline_span(sc, c);
    uint32_t max_ent = 1;
    for (uint32_t i = 0; i < c->n_buckets; i++)
        if (c->buckets[i].entities > max_ent)
            max_ent = c->buckets[i].entities;
    dg_rep__sink_printf(s, "<h3>Timeline: divergent entities per tick%s</h3>\n",
                    c->bucket_width > 1 ? " (each bar the most in its bucket)" : "");
    ht__svg_open(s, HT_TL_H, "timeline of divergent entities per tick");
    ht__timeline_axes(s, span, max_ent);
    for (uint32_t i = 0; i < c->n_buckets; i++) {
        const dg_report_bucket *b = &c->buckets[i];
        double x0 = HT_ML + pw * (double)b->first / (double)span;
        double x1 = HT_ML + pw * (double)(b->last + 1) / (double)span;
        double h = ph * (double)b->entities / (double)max_ent;
        if (h < 2)
            h = 2; /* an events-only divergence still shows */
        dg_rep__sink_puts(s, "<rect");
        ht__attr_num(s, "x", x0);
        ht__attr_num(s, "y", base - h);
        ht__attr_num(s, "width", x1 - x0 < 1 ? 1 : x1 - x0);
        ht__attr_num(s, "height", h);
        dg_rep__sink_printf(s, " fill=\"%s\"><title>ticks %llu..%llu: %u divergent tick%s, up to %u entit%s</title></rect>\n",
                        HT_COL_BAR, (unsigned long long)b->first, (unsigned long long)b->last, (unsigned)b->ticks,
                        dg_report_plural_s(b->ticks), (unsigned)b->entities, b->entities == 1 ? "y" : "ies");
    }
    double fx = HT_ML + pw * (double)c->first_tick / (double)span;
    dg_rep__sink_printf(s, "<g id=\"%s\" class=\"first-divergence\" data-tick=\"%llu\">\n", marker_id,
                    (unsigned long long)c->first_tick);
    ht__line(s, fx, HT_MT - 14, fx, base, "stroke=\"#111\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"");
    char label[64];
    snprintf(label, sizeof label, "first divergent tick %llu", (unsigned long long)c->first_tick);
    bool right_half = fx > HT_ML + pw * 0.6;
    ht__text_el(s, right_half ? fx - 4 : fx + 4, HT_MT - 6, right_half ? "end" : "start", " font-weight=\"bold\"",
                label);
    dg_rep__sink_puts(s, "</g>\n</svg>\n");
}

/* ---- trajectory ------------------------------------------------------------------------------- */

typedef struct ht_proj {
    int h, v;            /* axis indices (0 x, 1 y, 2 z) drawn horizontally / vertically */
    double lo[3], hi[3]; /* data bounds per axis */
    double scale, ox, oy; /* pixels per metre (both axes), pixel of the origin */
    double box_w, box_h;  /* the plot box, pixels */
    double view_lo[2], view_hi[2]; /* metres the box shows across (0) and up (1) */
} ht_proj;

static double ht__coord(const dg_report_point *p, int axis)
{
    return axis == 0 ? p->x : axis == 1 ? p->y : p->z;
}

static void ht__bounds(const dg_report_trajectory *t, ht_proj *pj)
{
    for (int a = 0; a < 3; a++) {
        pj->lo[a] = INFINITY;
        pj->hi[a] = -INFINITY;
    }
    for (int side = 0; side < 2; side++) {
        const dg_report_point *p = side ? t->b : t->a;
        uint32_t n = side ? t->n_b : t->n_a;
        for (uint32_t i = 0; i < n; i++)
            for (int a = 0; a < 3; a++) {
                double v = ht__coord(&p[i], a);
                if (!isfinite(v))
                    continue;
                if (v < pj->lo[a])
                    pj->lo[a] = v;
                if (v > pj->hi[a])
                    pj->hi[a] = v;
            }
    }
    for (int a = 0; a < 3; a++)
        if (!(pj->lo[a] <= pj->hi[a]))
            pj->lo[a] = pj->hi[a] = 0;
}

#define HT_TR_BOX_W (HT_W - HT_ML - HT_MR - 180) /* widest plot box; the legend sits right of it */
#define HT_TR_BOX_H 380.0                        /* tallest plot box */
#define HT_TR_BOX_MIN 120.0                      /* the narrow side of a box is never thinner */

/* The two axes with the largest spread, kept in x, y, z order (x right, y up for a top-down view
 * when the motion is mostly horizontal). One scale for both axes (a metre is as long across as
 * up), and the plot box sized from the data's aspect ratio: as large as fits HT_TR_BOX_W x
 * HT_TR_BOX_H, the narrow side clamped to HT_TR_BOX_MIN by showing more metres on that axis. */
static void ht__project(const dg_report_trajectory *t, ht_proj *pj)
{
    ht__bounds(t, pj);
    double sp[3];
    for (int a = 0; a < 3; a++)
        sp[a] = pj->hi[a] - pj->lo[a];
    int drop = 2; /* prefer a top-down view (drop z), then a side view */
    if (sp[1] < sp[drop])
        drop = 1;
    if (sp[0] < sp[drop])
        drop = 0;
    pj->h = drop == 0 ? 1 : 0;
    pj->v = drop == 2 ? 1 : 2;
    double sh = sp[pj->h] > 1e-9 ? sp[pj->h] : 0, sv = sp[pj->v] > 1e-9 ? sp[pj->v] : 0;
    if (sh == 0 && sv == 0)
        pj->scale = HT_TR_BOX_MIN; /* a body at rest: one metre fills the smallest box */
    else if (sh == 0 || sv == 0)
        pj->scale = sh ? HT_TR_BOX_W / sh : HT_TR_BOX_H / sv;
    else
        pj->scale = HT_TR_BOX_W / sh < HT_TR_BOX_H / sv ? HT_TR_BOX_W / sh : HT_TR_BOX_H / sv;
    pj->box_w = sh * pj->scale < HT_TR_BOX_MIN ? HT_TR_BOX_MIN : sh * pj->scale;
    pj->box_h = sv * pj->scale < HT_TR_BOX_MIN ? HT_TR_BOX_MIN : sv * pj->scale;
    /* Centre the data in the box; y grows upwards. The box shows these metres on each axis: */
    double ch = (pj->lo[pj->h] + pj->hi[pj->h]) / 2, cv = (pj->lo[pj->v] + pj->hi[pj->v]) / 2;
    pj->view_lo[0] = ch - pj->box_w / 2 / pj->scale;
    pj->view_hi[0] = ch + pj->box_w / 2 / pj->scale;
    pj->view_lo[1] = cv - pj->box_h / 2 / pj->scale;
    pj->view_hi[1] = cv + pj->box_h / 2 / pj->scale;
    pj->ox = HT_ML + pj->box_w / 2 - ch * pj->scale;
    pj->oy = HT_MT + pj->box_h / 2 + cv * pj->scale;
}

/* The grid step in metres: 1, 2 or 5 times a power of ten, about 80 pixels apart. */
static double ht__grid_step(double scale)
{
    double want = 80.0 / scale, p = pow(10.0, floor(log10(want)));
    double step = p;
    if (want > 5 * p)
        step = 10 * p;
    else if (want > 2 * p)
        step = 5 * p;
    else if (want > p)
        step = 2 * p;
    return step;
}

static double ht__px(const ht_proj *pj, const dg_report_point *p)
{
    return pj->ox + ht__coord(p, pj->h) * pj->scale;
}

static double ht__py(const ht_proj *pj, const dg_report_point *p)
{
    return pj->oy - ht__coord(p, pj->v) * pj->scale;
}

static void ht__polyline(dg_rsink *s, const ht_proj *pj, const dg_report_point *p, uint32_t n, const char *style)
{
    if (n == 0)
        return;
    dg_rep__sink_puts(s, "<polyline fill=\"none\" points=\"");
    for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(p[i].x) || !isfinite(p[i].y) || !isfinite(p[i].z))
            continue;
        if (i)
            dg_rep__sink_puts(s, " ");
        ht__num(s, ht__px(pj, &p[i]));
        dg_rep__sink_puts(s, ",");
        ht__num(s, ht__py(pj, &p[i]));
    }
    dg_rep__sink_printf(s, "\" %s/>\n", style);
}

/* The point at the first divergent tick (or the first one after it). */
static const dg_report_point *ht__at_tick(const dg_report_point *p, uint32_t n, uint64_t tick)
{
    for (uint32_t i = 0; i < n; i++)
        if (p[i].tick >= tick)
            return &p[i];
    return NULL;
}

static void ht__marker(dg_rsink *s, const ht_proj *pj, const dg_report_point *p, const char *colour)
{
    if (!p)
        return;
    dg_rep__sink_puts(s, "<circle");
    ht__attr_num(s, "cx", ht__px(pj, p));
    ht__attr_num(s, "cy", ht__py(pj, p));
    dg_rep__sink_printf(s, " r=\"5\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"><title>tick %llu</title></circle>\n",
                    colour, (unsigned long long)p->tick);
}

/* A grid line and its label every ht__grid_step metres, the same step across and up. */
static void ht__traj_grid(dg_rsink *s, const ht_proj *pj)
{
    double step = ht__grid_step(pj->scale), base = HT_MT + pj->box_h;
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    char b[48];
    for (int axis = 0; axis < 2; axis++) {
        double k0 = ceil(pj->view_lo[axis] / step), k1 = floor(pj->view_hi[axis] / step);
        for (double k = k0; k <= k1 && k - k0 < 64; k++) {
            double m = k * step;
            snprintf(b, sizeof b, "%.*f", decimals, m == 0 ? 0.0 : m); /* plain metres, no exponent */
            for (char *p = b; *p; p++)
                if (*p == ',')
                    *p = '.';
            if (axis == 0) {
                double x = pj->ox + m * pj->scale;
                ht__line(s, x, HT_MT, x, base, "class=\"grid\" stroke=\"#e3e6ea\"");
                ht__text_el(s, x, base + 14, "middle", NULL, b);
            } else {
                double y = pj->oy - m * pj->scale;
                ht__line(s, HT_ML, y, HT_ML + pj->box_w, y, "class=\"grid\" stroke=\"#e3e6ea\"");
                ht__text_el(s, HT_ML + 3, y - 3, "start", " fill=\"#777\"", b); /* inside: long numbers fit */
            }
        }
    }
}

static void ht__traj_axes(dg_rsink *s, const ht_proj *pj)
{
    static const char *const axis_name[3] = {"x", "y", "z"};
    const double base = HT_MT + pj->box_h;
    ht__traj_grid(s, pj);
    dg_rep__sink_puts(s, "<rect class=\"plot\"");
    ht__attr_num(s, "x", HT_ML);
    ht__attr_num(s, "y", HT_MT);
    ht__attr_num(s, "width", pj->box_w);
    ht__attr_num(s, "height", pj->box_h);
    char mpp[40];
    dg_rep__double_buf(mpp, sizeof mpp, 1.0 / pj->scale, true);
    dg_rep__sink_printf(s, " data-m-per-px=\"%s\" fill=\"none\" stroke=\"#bbb\"/>\n", mpp);
    char b[160], step[40];
    dg_rep__double_buf(step, sizeof step, ht__grid_step(pj->scale), false);
    snprintf(b, sizeof b, "%s (m) · grid %s m on both axes", axis_name[pj->h], step);
    ht__text_el(s, HT_ML + pj->box_w / 2, base + 30, "middle", NULL, b);
    snprintf(b, sizeof b, "%s (m, up)", axis_name[pj->v]);
    ht__vtext(s, 12, HT_MT + pj->box_h / 2, b);
}

static void ht__legend(dg_rsink *s, const dg_report_trajectory *t, uint64_t first_tick)
{
    const double x = HT_W - HT_MR - 170, y = HT_MT + 6;
    char b[96];
    ht__line(s, x, y + 6, x + 28, y + 6, "stroke=\"" HT_COL_A "\" stroke-width=\"4\" stroke-opacity=\"0.6\"");
    snprintf(b, sizeof b, "A (reference), %u pts", (unsigned)t->n_a);
    ht__text_el(s, x + 34, y + 10, "start", NULL, b);
    ht__line(s, x, y + 26, x + 28, y + 26, "stroke=\"" HT_COL_B "\" stroke-width=\"2\" stroke-dasharray=\"5 3\"");
    snprintf(b, sizeof b, "B, %u pts", (unsigned)t->n_b);
    ht__text_el(s, x + 34, y + 30, "start", NULL, b);
    dg_rep__sink_puts(s, "<circle");
    ht__attr_num(s, "cx", x + 14);
    ht__attr_num(s, "cy", y + 46);
    dg_rep__sink_puts(s, " r=\"5\" fill=\"none\" stroke=\"#111\" stroke-width=\"2\"/>\n");
    snprintf(b, sizeof b, "tick %llu (diverges)", (unsigned long long)first_tick);
    ht__text_el(s, x + 34, y + 50, "start", NULL, b);
}

/* ---- separation: |B - A| per tick --------------------------------------------------------------- */

#define HT_SEP_H 150.0

/* Walks both sides' points (each in tick order) and calls fn for every tick present on both. */
typedef void (*ht_pair_fn)(void *ctx, uint64_t tick, double dist);

static void ht__pairs(const dg_report_trajectory *t, ht_pair_fn fn, void *ctx)
{
    uint32_t i = 0, j = 0;
    while (i < t->n_a && j < t->n_b) {
        const dg_report_point *a = &t->a[i], *b = &t->b[j];
        if (a->tick < b->tick) {
            i++;
        } else if (b->tick < a->tick) {
            j++;
        } else {
            double dx = b->x - a->x, dy = b->y - a->y, dz = b->z - a->z;
            double d = sqrt(dx * dx + dy * dy + dz * dz);
            if (isfinite(d))
                fn(ctx, a->tick, d);
            i++, j++;
        }
    }
}

typedef struct ht_sep_range {
    uint64_t t0, t1;
    double max;
    uint32_t n;
} ht_sep_range;

static void ht__sep_range(void *ctx, uint64_t tick, double d)
{
    ht_sep_range *r = ctx;
    if (r->n == 0 || tick < r->t0)
        r->t0 = tick;
    if (r->n == 0 || tick > r->t1)
        r->t1 = tick;
    if (d > r->max)
        r->max = d;
    r->n++;
}

typedef struct ht_sep_draw {
    dg_rsink *s;
    const ht_sep_range *r;
    bool first;
} ht_sep_draw;

static double ht__sep_x(const ht_sep_range *r, uint64_t tick)
{
    double span = r->t1 > r->t0 ? (double)(r->t1 - r->t0) : 1.0;
    return HT_ML + (HT_W - HT_ML - HT_MR) * (double)(tick - r->t0) / span;
}

static void ht__sep_point(void *ctx, uint64_t tick, double d)
{
    ht_sep_draw *w = ctx;
    double base = HT_SEP_H - HT_MB, ph = base - HT_MT;
    double max = w->r->max > 0 ? w->r->max : 1.0;
    if (!w->first)
        dg_rep__sink_puts(w->s, " ");
    w->first = false;
    ht__num(w->s, ht__sep_x(w->r, tick));
    dg_rep__sink_puts(w->s, ",");
    ht__num(w->s, base - ph * d / max);
}

/* On a map of hundreds of metres a divergence of a few quanta is invisible; this shows it. */
static void ht__separation(dg_rsink *s, const dg_report_trajectory *t, uint64_t first_tick)
{
    ht_sep_range r = {0, 0, 0, 0};
    ht__pairs(t, ht__sep_range, &r);
    if (r.n < 2)
        return;
    if (!(r.max > 0)) {
        dg_rep__sink_puts(s, "<p class=\"note\">The two sides' paths coincide at every tick drawn (the difference is "
                         "elsewhere: see the table).</p>\n");
        return;
    }
    const double base = HT_SEP_H - HT_MB, pw = HT_W - HT_ML - HT_MR;
    dg_rep__sink_puts(s, "<h3>Separation between the sides, |B − A| in metres</h3>\n");
    ht__svg_open(s, HT_SEP_H, "distance between side A and side B per tick");
    ht__line(s, HT_ML, base, HT_ML + pw, base, "stroke=\"#555\"");
    ht__line(s, HT_ML, HT_MT, HT_ML, base, "stroke=\"#555\"");
    char b[64];
    if (r.max >= 1000) /* an axis label, not a value: plain digits that fit the margin */
        snprintf(b, sizeof b, "%.0f", r.max);
    else
        snprintf(b, sizeof b, "%.4g", r.max);
    for (char *p = b; *p; p++)
        if (*p == ',')
            *p = '.';
    ht__text_el(s, HT_ML - 6, HT_MT + 4, "end", NULL, b);
    ht__text_el(s, HT_ML - 6, base, "end", NULL, "0");
    snprintf(b, sizeof b, "%llu", (unsigned long long)r.t0);
    ht__text_el(s, HT_ML, base + 16, "start", NULL, b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)r.t1);
    ht__text_el(s, HT_ML + pw, base + 16, "end", NULL, b);
    ht__text_el(s, HT_ML + pw / 2, HT_SEP_H - 4, "middle", NULL, "tick");
    ht__vtext(s, 14, HT_MT + (base - HT_MT) / 2, "m");
    if (first_tick >= r.t0 && first_tick <= r.t1) {
        double fx = ht__sep_x(&r, first_tick);
        ht__line(s, fx, HT_MT - 10, fx, base, "stroke=\"#111\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"");
        snprintf(b, sizeof b, "tick %llu", (unsigned long long)first_tick);
        bool right_half = fx > HT_ML + pw * 0.6;
        ht__text_el(s, right_half ? fx - 4 : fx + 4, HT_MT - 2, right_half ? "end" : "start", NULL, b);
    }
    dg_rep__sink_puts(s, "<polyline fill=\"none\" stroke=\"" HT_COL_BAR "\" stroke-width=\"2\" points=\"");
    ht_sep_draw w = {s, &r, true};
    ht__pairs(t, ht__sep_point, &w);
    dg_rep__sink_puts(s, "\"/>\n</svg>\n");
}

/* "Δ pos 0.53 m", "present on side B only", "Δ flags +256": an entity's largest difference. */
static void ht__why_delta(dg_rsink *s, const dg_report_trajectory *t)
{
    if (strcmp(t->why_field, "added") == 0 || strcmp(t->why_field, "lost") == 0) {
        dg_rep__sink_printf(s, "present on side %s only", t->why_field[0] == 'a' ? "B" : "A");
        return;
    }
    if (t->why_unit[0] == '\0') { /* flags, type, faction: which one, the table says how */
        ht__esc(s, t->why_field);
        dg_rep__sink_puts(s, " differ");
        return;
    }
    dg_rep__sink_puts(s, "Δ ");
    ht__esc(s, t->why_field);
    dg_rep__sink_puts(s, " ");
    dg_rep__double(s, t->why_delta, false);
    if (t->why_unit[0]) {
        dg_rep__sink_puts(s, " ");
        ht__esc(s, t->why_unit);
    }
}

/* How many entities diverged at the check's first divergent tick (0 when not known). */
static uint32_t ht__first_tick_entities(const dg_report_check *c)
{
    if (c->n_ticks == 0 || c->ticks[0]->tick != c->first_tick)
        return 0;
    const dg_report_tick *t = c->ticks[0];
    return t->added + t->lost + t->changed;
}

static void ht__entity_label(dg_rsink *s, const dg_report_trajectory *t)
{
    dg_rep__sink_printf(s, "entity %u", (unsigned)t->entity_id);
    if (t->name[0]) {
        dg_rep__sink_puts(s, " (");
        ht__esc(s, t->name);
        dg_rep__sink_puts(s, ")");
    }
}

/* "entity 7 (Viper 7): first to diverge, at tick 300, largest Δ pos 0.53 m" (main) or
 * "entity 3: diverged at tick 542, largest Δ pos 0.015625 m" (another one). */
static void ht__why(dg_rsink *s, const dg_report_check *c, const dg_report_trajectory *t, bool main)
{
    dg_rep__sink_puts(s, "<p class=\"why\">");
    ht__entity_label(s, t);
    if (t->first_tick == DG_REPORT_TICK_NONE) {
        dg_rep__sink_puts(s, main ? ": the first divergent entity</p>\n" : "</p>\n");
        return;
    }
    bool first = t->first_tick == c->first_tick;
    dg_rep__sink_printf(s, ": %s, at tick %llu", first ? "first to diverge" : "diverged", (unsigned long long)t->first_tick);
    uint32_t with = first ? ht__first_tick_entities(c) : 0;
    if (main && with > 1)
        dg_rep__sink_printf(s, " (with %u other%s; it differs most)", (unsigned)(with - 1), dg_report_plural_s(with - 1));
    if (t->why_field[0]) {
        dg_rep__sink_puts(s, ", ");
        if (main && t->why_unit[0])
            dg_rep__sink_puts(s, "largest ");
        ht__why_delta(s, t);
    }
    dg_rep__sink_puts(s, "</p>\n");
}

/* One entity's picture: the path on both sides (equal scale) and the separation per tick. */
static void ht__trajectory_one(dg_rsink *s, const dg_report_check *c, const dg_report_trajectory *t, bool main)
{
    uint64_t first = t->first_tick != DG_REPORT_TICK_NONE ? t->first_tick : c->first_tick;
    ht__why(s, c, t, main);
    if (t->n_a == 0 && t->n_b == 0) {
        dg_rep__sink_puts(s, "<p class=\"note\">no points on either side</p>\n");
        return;
    }
    ht_proj pj;
    ht__project(t, &pj);
    double h = HT_MT + pj.box_h + HT_MB + 12;
    if (h < HT_MT + 70)
        h = HT_MT + 70; /* room for the legend */
    ht__svg_open(s, h, "trajectory of the divergent entity, side A and side B");
    ht__traj_axes(s, &pj);
    ht__polyline(s, &pj, t->a, t->n_a,
                 "stroke=\"" HT_COL_A "\" stroke-width=\"4\" stroke-opacity=\"0.6\" stroke-linejoin=\"round\"");
    ht__polyline(s, &pj, t->b, t->n_b, "stroke=\"" HT_COL_B "\" stroke-width=\"2\" stroke-dasharray=\"5 3\"");
    ht__marker(s, &pj, ht__at_tick(t->a, t->n_a, first), HT_COL_A);
    ht__marker(s, &pj, ht__at_tick(t->b, t->n_b, first), HT_COL_B);
    ht__legend(s, t, first);
    dg_rep__sink_puts(s, "</svg>\n");
    ht__separation(s, t, first);
    if (t->cut_a || t->cut_b)
        dg_rep__sink_printf(s, "<p class=\"note\">%u points on side A and %u on side B beyond the cap are not drawn.</p>\n",
                        (unsigned)t->cut_a, (unsigned)t->cut_b);
}

static const dg_report_trajectory *ht__traj_at(const dg_report_check *c, uint32_t i)
{
    return i == 0 ? &c->trajectory : &c->more_trajectories[i - 1];
}

/* The picker: a plain <select>; every entity's picture is already in the page, dgPick shows one. */
static void ht__traj_picker(dg_rsink *s, const dg_report_check *c, uint32_t idx)
{
    dg_rep__sink_printf(s, "<p><label>Divergent entity: <select class=\"traj-pick\" data-check=\"check-%u\" "
                       "onchange=\"dgPick(this)\">\n",
                    (unsigned)idx);
    for (uint32_t i = 0; i <= c->n_more_trajectories; i++) {
        const dg_report_trajectory *t = ht__traj_at(c, i);
        dg_rep__sink_printf(s, "<option value=\"%u\"%s>", (unsigned)i, i == 0 ? " selected=\"selected\"" : "");
        ht__entity_label(s, t);
        if (t->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(s, " — tick %llu", (unsigned long long)t->first_tick);
        if (t->why_field[0]) {
            dg_rep__sink_puts(s, ", ");
            ht__why_delta(s, t);
        }
        dg_rep__sink_puts(s, "</option>\n");
    }
    dg_rep__sink_puts(s, "</select></label>");
    if (c->trajectories_cut)
        dg_rep__sink_printf(s, " <span class=\"note\">(%u more divergent entit%s not drawn: cap %u)</span>",
                        (unsigned)c->trajectories_cut, c->trajectories_cut == 1 ? "y" : "ies",
                        (unsigned)(c->n_more_trajectories + 1));
    dg_rep__sink_puts(s, "</p>\n");
}

static void ht__trajectory(dg_rsink *s, const dg_report_check *c, uint32_t idx)
{
    const dg_report_trajectory *t = &c->trajectory;
    if (!t->present)
        return;
    /* a comparison with a hash log has states on one side only (harness/hash_views.c) */
    dg_rep__sink_puts(s, t->n_a && !t->n_b   ? "<h3>Trajectory on side A (side B has no states)</h3>\n"
                     : t->n_b && !t->n_a ? "<h3>Trajectory on side B (side A has no states)</h3>\n"
                                         : "<h3>Trajectory on both sides</h3>\n");
    if (c->n_more_trajectories == 0) {
        ht__trajectory_one(s, c, t, true);
        return;
    }
    ht__traj_picker(s, c, idx);
    for (uint32_t i = 0; i <= c->n_more_trajectories; i++) {
        dg_rep__sink_printf(s, "<div class=\"traj\" data-check=\"check-%u\" data-entity=\"%u\"%s>\n", (unsigned)idx,
                        (unsigned)ht__traj_at(c, i)->entity_id, i ? " hidden=\"hidden\"" : "");
        ht__trajectory_one(s, c, ht__traj_at(c, i), i == 0);
        dg_rep__sink_puts(s, "</div>\n");
    }
}

/* ---- spread: entities diverged so far, per tick --------------------------------------------------- */

#define HT_SP_H 160.0

static double ht__sp_x(uint64_t t0, uint64_t t1, uint64_t tick)
{
    double span = t1 > t0 ? (double)(t1 - t0) : 1.0;
    return HT_ML + (HT_W - HT_ML - HT_MR) * (double)(tick - t0) / span;
}

static void ht__spread_axes(dg_rsink *s, uint64_t t0, uint64_t t1, uint32_t max)
{
    const double base = HT_SP_H - HT_MB, pw = HT_W - HT_ML - HT_MR;
    char b[48];
    ht__line(s, HT_ML, base, HT_ML + pw, base, "stroke=\"#555\"");
    ht__line(s, HT_ML, HT_MT, HT_ML, base, "stroke=\"#555\"");
    snprintf(b, sizeof b, "%u", (unsigned)max);
    ht__text_el(s, HT_ML - 6, HT_MT + 4, "end", NULL, b);
    ht__text_el(s, HT_ML - 6, base, "end", NULL, "0");
    snprintf(b, sizeof b, "%llu", (unsigned long long)t0);
    ht__text_el(s, HT_ML, base + 16, "start", NULL, b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)t1);
    ht__text_el(s, HT_ML + pw, base + 16, "end", NULL, b);
    ht__text_el(s, HT_ML + pw / 2, HT_SP_H - 4, "middle", NULL, "tick");
    ht__vtext(s, 14, HT_MT + (base - HT_MT) / 2, "entities");
}

/* A step line: how many distinct entities had diverged by each tick after the first, so a reader
 * sees one entity's divergence infect the world, or many break at once. */
static void ht__spread(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c)
{
    if (c->n_spread == 0)
        return;
    const dg_report_spread_point *p = c->spread;
    uint32_t n = c->n_spread, max = p[n - 1].entities ? p[n - 1].entities : 1;
    uint64_t t0 = p[0].tick, t1 = p[n - 1].tick;
    if (c->n_ranges && c->ranges[c->n_ranges - 1].last > t1)
        t1 = c->ranges[c->n_ranges - 1].last;
    dg_rep__sink_puts(s, "<h3>Spread: entities diverged so far</h3>\n<p class=\"spread-line\">");
    dg_rep__sink_printf(s, "%u entit%s at tick %llu", (unsigned)p[0].entities, p[0].entities == 1 ? "y" : "ies",
                    (unsigned long long)t0);
    if (n > 1)
        dg_rep__sink_printf(s, "; %u by tick %llu", (unsigned)p[n - 1].entities, (unsigned long long)p[n - 1].tick);
    if (sc->ticks && sc->entity_ticks)
        dg_rep__sink_printf(s, " (about %llu live at a time)",
                        (unsigned long long)((sc->entity_ticks + sc->ticks / 2) / sc->ticks));
    dg_rep__sink_puts(s, n > 1 && p[0].entities * 2 <= p[n - 1].entities ? ": it spread" : "");
    dg_rep__sink_puts(s, ".</p>\n");
    ht__svg_open(s, HT_SP_H, "spread: distinct entities diverged by each tick");
    ht__spread_axes(s, t0, t1, max);
    const double base = HT_SP_H - HT_MB, ph = base - HT_MT;
    dg_rep__sink_puts(s, "<polyline class=\"spread\" fill=\"none\" stroke=\"" HT_COL_BAR "\" stroke-width=\"2\" points=\"");
    double prev_y = base;
    for (uint32_t i = 0; i < n; i++) {
        double x = ht__sp_x(t0, t1, p[i].tick), y = base - ph * (double)p[i].entities / (double)max;
        if (i)
            dg_rep__sink_puts(s, " ");
        ht__num(s, x);
        dg_rep__sink_puts(s, ",");
        ht__num(s, prev_y);
        dg_rep__sink_puts(s, " ");
        ht__num(s, x);
        dg_rep__sink_puts(s, ",");
        ht__num(s, y);
        prev_y = y;
    }
    dg_rep__sink_puts(s, " ");
    ht__num(s, ht__sp_x(t0, t1, t1));
    dg_rep__sink_puts(s, ",");
    ht__num(s, prev_y);
    dg_rep__sink_puts(s, "\"/>\n</svg>\n");
    if (c->spread_cut)
        dg_rep__sink_printf(s, "<p class=\"note\">%u later step%s folded into the last (cap).</p>\n",
                        (unsigned)c->spread_cut, dg_report_plural_s(c->spread_cut));
}

/* ---- tables ----------------------------------------------------------------------------------- */

static void ht__td_num(dg_rsink *s, double v, bool show)
{
    dg_rep__sink_puts(s, "<td class=\"num\">");
    if (show)
        dg_rep__double(s, v, false);
    dg_rep__sink_puts(s, "</td>");
}

/* A rotation cell: the orientation's unit quaternion, w x y z (6 decimals: 0.001 deg shows). */
static void ht__td_quat(dg_rsink *s, const double q[4])
{
    char b[96];
    dg_rep__quat_buf(b, sizeof b, q);
    dg_rep__sink_printf(s, "<td class=\"q\" title=\"quaternion w, x, y, z\">%s</td>", b);
}

static void ht__td_hex(dg_rsink *s, int64_t v)
{
    dg_rep__sink_printf(s, "<td class=\"num\">0x%04llX</td>", (unsigned long long)v);
}

/* span > 0: this is the entity's first row, its id/name/kind cells span `span` rows. */
static void ht__field_row(dg_rsink *s, const dg_report_entity *e, const dg_report_field *f, uint32_t span)
{
    dg_rep__sink_puts(s, "<tr>");
    if (span) {
        dg_rep__sink_printf(s, "<td class=\"num\" rowspan=\"%u\">%u</td><td rowspan=\"%u\">", (unsigned)span,
                        (unsigned)e->id, (unsigned)span);
        ht__esc(s, e->name);
        dg_rep__sink_printf(s, "</td><td rowspan=\"%u\">%s</td>", (unsigned)span, dg_report_entity_kind_name(e->kind));
    }
    if (!f) {
        dg_rep__sink_puts(s, "<td>—</td><td></td><td></td><td></td><td></td><td></td></tr>\n");
        return;
    }
    char fb[400];
    bool bits = dg_rep__flag_bits(fb, sizeof fb, f);
    dg_rep__sink_puts(s, "<td><code>");
    ht__esc(s, f->name);
    dg_rep__sink_puts(s, "</code></td>");
    if (f->has_text) { /* a declared field, as its schema shows it */
        dg_rep__sink_puts(s, "<td class=\"num\">");
        ht__esc(s, f->a_text);
        dg_rep__sink_puts(s, "</td><td class=\"num\">");
        ht__esc(s, f->b_text);
        dg_rep__sink_puts(s, "</td>");
    } else if (f->has_quats) {
        ht__td_quat(s, f->quat_a);
        ht__td_quat(s, f->quat_b);
    } else if (bits) {
        ht__td_hex(s, f->a_q);
        ht__td_hex(s, f->b_q);
    } else {
        ht__td_num(s, f->a, f->has_values);
        ht__td_num(s, f->b, f->has_values);
    }
    dg_rep__sink_puts(s, "<td class=\"num\">");
    if (bits) {
        ht__esc(s, fb);
    } else if (f->has_text && !f->has_values) {
        dg_rep__sink_puts(s, "—");
    } else {
        if (f->delta > 0)
            dg_rep__sink_puts(s, "+");
        dg_rep__double(s, f->delta, false);
    }
    dg_rep__sink_puts(s, "</td><td>");
    ht__esc(s, f->unit);
    dg_rep__sink_puts(s, "</td><td class=\"num\">");
    if (f->has_quanta)
        dg_rep__sink_printf(s, "%lld → %lld (%+lld)", (long long)f->a_q, (long long)f->b_q, (long long)f->delta_q);
    dg_rep__sink_puts(s, "</td></tr>\n");
}

static void ht__events(dg_rsink *s, const dg_report_tick *t)
{
    if (t->n_event_diffs == 0 && t->event_diffs_cut == 0)
        return;
    dg_rep__sink_puts(s, "<ul class=\"events\">\n");
    for (uint32_t i = 0; i < t->n_event_diffs; i++) {
        dg_rep__sink_puts(s, "<li>");
        dg_rep__event_diff_line(s, &t->event_diffs[i], t, ht__esc);
        dg_rep__sink_puts(s, "</li>\n");
    }
    if (t->event_diffs_cut)
        dg_rep__sink_printf(s, "<li class=\"note\">… %u more differing events</li>\n", (unsigned)t->event_diffs_cut);
    dg_rep__sink_puts(s, "</ul>\n");
}

/* A check's differing header/table values, then its own lines (one per case). */
static void ht__check_lines(dg_rsink *s, const dg_report_check *c)
{
    if (c->n_values) {
        dg_rep__sink_puts(s, "<table><thead><tr><th>Field</th><th>A</th><th>B</th></tr></thead><tbody>\n");
        for (uint32_t i = 0; i < c->n_values; i++) {
            const dg_report_value *v = &c->values[i];
            dg_rep__sink_puts(s, "<tr><td><code>");
            ht__esc(s, v->field);
            dg_rep__sink_puts(s, "</code></td><td>");
            ht__esc(s, v->a ? v->a : "(none)");
            dg_rep__sink_puts(s, "</td><td>");
            ht__esc(s, v->b ? v->b : "(none)");
            dg_rep__sink_puts(s, "</td></tr>\n");
        }
        dg_rep__sink_puts(s, "</tbody></table>\n");
    }
    if (c->values_cut)
        dg_rep__sink_printf(s, "<p class=\"note\">… %u more differing values</p>\n", (unsigned)c->values_cut);
    if (c->n_details == 0 && c->details_cut == 0)
        return;
    dg_rep__sink_puts(s, "<ul class=\"details\">\n");
    for (uint32_t i = 0; i < c->n_details; i++) {
        dg_rep__sink_puts(s, "<li>");
        ht__esc(s, c->details[i]);
        dg_rep__sink_puts(s, "</li>\n");
    }
    if (c->details_cut)
        dg_rep__sink_printf(s, "<li class=\"note\">… %u more lines</li>\n", (unsigned)c->details_cut);
    dg_rep__sink_puts(s, "</ul>\n");
}

static void ht__tick_table(dg_rsink *s, const dg_report_tick *t, uint32_t max_rows)
{
    dg_rep__sink_printf(s, "<p>tick %llu: %u changed, %u added, %u lost", (unsigned long long)t->tick, (unsigned)t->changed,
                    (unsigned)t->added, (unsigned)t->lost);
    if (t->events_differ)
        dg_rep__sink_printf(s, "; events differ (A %u, B %u)", (unsigned)t->events_a, (unsigned)t->events_b);
    dg_rep__sink_puts(s, "</p>\n");
    ht__events(s, t);
    if (t->n_entities == 0)
        return;
    dg_rep__sink_puts(s, "<table><thead><tr><th>Entity</th><th>Name</th><th>Kind</th><th>Field</th><th>A</th><th>B</th>"
                     "<th>Δ</th><th>Unit</th><th>Quanta A → B (Δ)</th></tr></thead><tbody>\n");
    uint64_t rows = 0, shown = 0;
    for (uint32_t i = 0; i < t->n_entities; i++) {
        const dg_report_entity *e = &t->entities[i];
        uint32_t nf = e->n_fields ? e->n_fields : 1;
        uint64_t room = max_rows > shown ? max_rows - shown : 0;
        uint32_t span = nf < room ? nf : (uint32_t)room; /* rows of this entity that will be shown */
        for (uint32_t j = 0; j < nf; j++, rows++)
            if (shown < max_rows) {
                ht__field_row(s, e, e->n_fields ? &e->fields[j] : NULL, j == 0 ? span : 0);
                shown++;
            }
    }
    dg_rep__sink_puts(s, "</tbody></table>\n");
    if (rows > shown)
        dg_rep__sink_printf(s, "<p class=\"note\">… %llu more row%s</p>\n", (unsigned long long)(rows - shown),
                        dg_report_plural_s(rows - shown));
    if (t->entities_cut)
        dg_rep__sink_printf(s, "<p class=\"note\">… %u more entit%s beyond the per-tick cap</p>\n",
                        (unsigned)t->entities_cut, t->entities_cut == 1 ? "y" : "ies");
}

static void ht__ranges(dg_rsink *s, const dg_report_check *c)
{
    dg_rep__sink_printf(s, "<p>%llu divergent tick%s in %u range%s:", (unsigned long long)c->divergent_ticks,
                    dg_report_plural_s(c->divergent_ticks), (unsigned)c->n_ranges, dg_report_plural_s(c->n_ranges));
    for (uint32_t i = 0; i < c->n_ranges && i < 40; i++) {
        const dg_report_range *g = &c->ranges[i];
        if (g->first == g->last)
            dg_rep__sink_printf(s, " <code>%llu</code>", (unsigned long long)g->first);
        else
            dg_rep__sink_printf(s, " <code>%llu..%llu</code>", (unsigned long long)g->first, (unsigned long long)g->last);
    }
    if (c->n_ranges > 40)
        dg_rep__sink_printf(s, " … %u more", (unsigned)(c->n_ranges - 40));
    if (c->ranges_coalesced)
        dg_rep__sink_puts(s, " <span class=\"note\">(range cap reached: the last range holds gaps)</span>");
    dg_rep__sink_puts(s, "</p>\n");
}

static void ht__check_section(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c, uint32_t idx,
                              uint32_t max_rows, bool first_drawn)
{
    char marker_id[40];
    if (first_drawn)
        snprintf(marker_id, sizeof marker_id, "first-divergence");
    else
        snprintf(marker_id, sizeof marker_id, "first-divergence-%u", (unsigned)idx);
    dg_rep__sink_printf(s, "<section class=\"check\" id=\"check-%u\">\n<h2>", (unsigned)idx);
    ht__badge(s, c->status);
    dg_rep__sink_puts(s, " ");
    ht__esc(s, sc->name);
    dg_rep__sink_puts(s, " · ");
    ht__esc(s, c->name);
    dg_rep__sink_puts(s, "</h2>\n<p class=\"headline\">");
    dg_rep__check_headline(s, c, ht__esc);
    dg_rep__sink_puts(s, "</p>\n");
    if (c->message && c->first_tick != DG_REPORT_TICK_NONE) {
        dg_rep__sink_puts(s, "<p>");
        ht__esc(s, c->message);
        dg_rep__sink_puts(s, "</p>\n");
    }
    ht__check_lines(s, c);
    if (c->first_tick != DG_REPORT_TICK_NONE) {
        ht__ranges(s, c);
        ht__timeline(s, sc, c, marker_id);
        ht__spread(s, sc, c);
    }
    ht__trajectory(s, c, idx);
    for (uint32_t i = 0; i < c->n_ticks; i++) {
        if (i == 0) {
            dg_rep__sink_printf(s, "<h3>Tick %llu</h3>\n", (unsigned long long)c->ticks[0]->tick);
            ht__tick_table(s, c->ticks[0], max_rows);
            continue;
        }
        dg_rep__sink_printf(s, "<details><summary>tick %llu</summary>\n", (unsigned long long)c->ticks[i]->tick);
        ht__tick_table(s, c->ticks[i], max_rows);
        dg_rep__sink_puts(s, "</details>\n");
    }
    if (c->ticks_cut)
        dg_rep__sink_printf(s, "<p class=\"note\">%llu further divergent tick%s %s not detailed (cap %u).</p>\n",
                        (unsigned long long)c->ticks_cut, dg_report_plural_s(c->ticks_cut),
                        c->ticks_cut == 1 ? "is" : "are", (unsigned)c->n_ticks);
    dg_rep__sink_puts(s, "</section>\n");
}

/* ---- page ------------------------------------------------------------------------------------- */

/* The scenario's cells span all its check rows (rowspan), so each scenario reads as one block. */
/* The scenario's own cells, spanning its `span` rows. */
static void ht__scenario_cells(dg_rsink *s, const dg_report_scenario *sc, unsigned span)
{
    dg_rep__sink_printf(s, "<td rowspan=\"%u\">", span);
    ht__esc(s, sc->name);
    dg_rep__sink_printf(s, "</td><td rowspan=\"%u\">", span);
    ht__esc(s, dg_rep__str_or(sc->format, ""));
    dg_rep__sink_printf(s, "</td><td class=\"num\" rowspan=\"%u\">%llu</td><td class=\"num\" rowspan=\"%u\">%llu</td>",
                    span, (unsigned long long)sc->ticks, span, (unsigned long long)sc->entity_ticks);
}

/* The passing checks of a scenario in one row: "3 more checks pass: seek, recovery, header".
 * span > 0: this is the scenario's first row. */
static void ht__passed_checks_row(dg_rsink *s, const dg_report_scenario *sc, uint32_t n_pass, bool all, unsigned span)
{
    dg_rep__sink_printf(s, "<tr class=\"pass-row\">");
    if (span)
        ht__scenario_cells(s, sc, span);
    dg_rep__sink_printf(s, "<td>%u%s check%s pass%s: ", (unsigned)n_pass, all ? "" : " more", dg_report_plural_s(n_pass),
                    n_pass == 1 ? "es" : "");
    bool any = false, noted = false;
    for (uint32_t j = 0; j < sc->n_checks; j++) {
        if (sc->checks[j]->status != DG_REPORT_PASS)
            continue;
        dg_rep__sink_puts(s, any ? ", " : "");
        ht__esc(s, sc->checks[j]->name);
        any = true;
    }
    dg_rep__sink_puts(s, "</td><td>");
    ht__badge(s, DG_REPORT_PASS);
    dg_rep__sink_puts(s, "</td><td></td><td>");
    for (uint32_t j = 0; j < sc->n_checks && !noted; j++) /* a pass can carry a note: sub-quantum drift */
        if (sc->checks[j]->status == DG_REPORT_PASS && sc->checks[j]->sub_quantum) {
            ht__esc(s, sc->checks[j]->name);
            dg_rep__sink_puts(s, ": ");
            dg_rep__check_headline(s, sc->checks[j], ht__esc);
            noted = true;
        }
    dg_rep__sink_puts(s, "</td></tr>\n");
}

static void ht__summary_row(dg_rsink *s, const dg_report_scenario *sc, const dg_report_check *c, uint32_t idx,
                            bool linked, unsigned span)
{
    dg_rep__sink_puts(s, "<tr>");
    if (span) {
        ht__scenario_cells(s, sc, span);
    }
    dg_rep__sink_puts(s, "<td>");
    if (!c) {
        dg_rep__sink_puts(s, "—</td><td></td><td></td><td>no checks</td></tr>\n");
        return;
    }
    if (c->status == DG_REPORT_FAIL && linked) {
        dg_rep__sink_printf(s, "<a href=\"#check-%u\">", (unsigned)idx);
        ht__esc(s, c->name);
        dg_rep__sink_puts(s, "</a>");
    } else {
        ht__esc(s, c->name);
    }
    dg_rep__sink_puts(s, "</td><td>");
    ht__badge(s, c->status);
    dg_rep__sink_puts(s, "</td><td class=\"num\">");
    if (c->first_tick != DG_REPORT_TICK_NONE)
        dg_rep__sink_printf(s, "%llu", (unsigned long long)c->first_tick);
    dg_rep__sink_puts(s, "</td><td>");
    if (c->status != DG_REPORT_PASS || c->sub_quantum || c->message)
        dg_rep__check_headline(s, c, ht__esc);
    dg_rep__sink_puts(s, "</td></tr>\n");
}

/* One scenario's rows: each check that did not pass (failing ones linked to their sections when
 * drawn), then its passing checks folded into one row. *idx / *failing count checks / failing
 * checks in report order. */
static void ht__summary_block(dg_rsink *s, const dg_report_scenario *sc, uint32_t *idx, uint32_t *failing,
                              uint32_t max_sections)
{
    if (sc->n_checks == 0) {
        ht__summary_row(s, sc, NULL, 0, false, 1);
        return;
    }
    uint32_t n_pass = 0;
    for (uint32_t j = 0; j < sc->n_checks; j++)
        n_pass += sc->checks[j]->status == DG_REPORT_PASS;
    unsigned span = (unsigned)(sc->n_checks - n_pass + (n_pass > 0));
    for (uint32_t j = 0; j < sc->n_checks; j++, (*idx)++) {
        const dg_report_check *c = sc->checks[j];
        if (c->status == DG_REPORT_PASS)
            continue;
        bool fail = c->status == DG_REPORT_FAIL;
        /* link only to sections that are drawn (the first max_sections failing checks) */
        ht__summary_row(s, sc, c, *idx, fail && *failing < max_sections, span);
        span = 0;
        *failing += fail;
    }
    if (n_pass)
        ht__passed_checks_row(s, sc, n_pass, n_pass == sc->n_checks, span);
}

/* Scenarios that failed or could not be tested first (in report order), then the passing ones,
 * one row each: a 50-scenario run reads as its failures, then a list of what passed. Failing
 * checks link to their sections (#check-N, N counting checks in report order). */
static void ht__summary(dg_rsink *s, const dg_report *r, uint32_t max_sections)
{
    dg_rep__sink_puts(s, "<h2>Summary</h2>\n<table class=\"summary\"><thead><tr><th>Scenario</th><th>Format</th><th>Ticks</th>"
                     "<th>Entity-ticks</th><th>Check</th><th>Result</th><th>First divergent tick</th><th>Note</th>"
                     "</tr></thead><tbody>\n");
    for (int pass = 0; pass < 2; pass++) {
        uint32_t idx = 0, failing = 0;
        for (uint32_t i = 0; i < r->n_scenarios; i++) {
            const dg_report_scenario *sc = r->scenarios[i];
            bool ok = dg_report_scenario_status(sc) == DG_REPORT_PASS && sc->n_checks > 0;
            if (ok == (pass == 1)) {
                ht__summary_block(s, sc, &idx, &failing, max_sections);
                continue;
            }
            for (uint32_t j = 0; j < sc->n_checks; j++, idx++)
                failing += sc->checks[j]->status == DG_REPORT_FAIL;
        }
    }
    dg_rep__sink_puts(s, "</tbody></table>\n");
}

static void ht__bisect(dg_rsink *s, const dg_report_bisect *b)
{
    if (!b->present)
        return;
    dg_rep__sink_puts(s, "<section class=\"check\">\n<h2>Bisect");
    if (b->scenario) {
        dg_rep__sink_puts(s, " · ");
        ht__esc(s, b->scenario);
    }
    dg_rep__sink_puts(s, "</h2>\n<p class=\"headline\">");
    if (b->first_bad_commit) {
        dg_rep__sink_puts(s, "First bad commit <code>");
        ht__esc(s, b->first_bad_commit);
        dg_rep__sink_puts(s, "</code> ");
        ht__esc(s, b->subject);
        if (b->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(s, " — first divergent tick %llu", (unsigned long long)b->first_tick);
    } else {
        dg_rep__sink_puts(s, "No first bad commit found");
    }
    dg_rep__sink_puts(s, "</p>\n<p>good <code>");
    ht__esc(s, dg_rep__str_or(b->good_rev, "?"));
    dg_rep__sink_puts(s, "</code>, bad <code>");
    ht__esc(s, dg_rep__str_or(b->bad_rev, "?"));
    dg_rep__sink_puts(s, "</code></p>\n<table><thead><tr><th>Step</th><th>Commit</th><th>Verdict</th>"
                     "<th>First divergent tick</th></tr></thead><tbody>\n");
    for (uint32_t i = 0; i < b->n_steps; i++) {
        const dg_report_bisect_step *st = &b->steps[i];
        dg_rep__sink_printf(s, "<tr><td class=\"num\">%u</td><td><code>", (unsigned)(i + 1));
        ht__esc(s, st->commit);
        dg_rep__sink_printf(s, "</code></td><td>%s</td><td class=\"num\">",
                        st->verdict == DG_REPORT_GOOD ? "good" : st->verdict == DG_REPORT_SKIP ? "skip" : "bad");
        if (st->first_tick != DG_REPORT_TICK_NONE)
            dg_rep__sink_printf(s, "%llu", (unsigned long long)st->first_tick);
        dg_rep__sink_puts(s, "</td></tr>\n");
    }
    dg_rep__sink_puts(s, "</tbody></table>\n</section>\n");
}

/* Whether some failing check has more than one trajectory to choose from (then the page gets
 * dgPick). Checks beyond max_sections are not drawn, but a script too many does no harm. */
static bool ht__has_picker(const dg_report *r)
{
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        for (uint32_t j = 0; j < r->scenarios[i]->n_checks; j++) {
            const dg_report_check *c = r->scenarios[i]->checks[j];
            if (c->status == DG_REPORT_FAIL && c->trajectory.present && c->n_more_trajectories)
                return true;
        }
    return false;
}

static void ht__head(dg_rsink *s, const dg_report *r)
{
    dg_report_status st = dg_report_overall_status(r);
    dg_rep__sink_puts(s, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>detgate ");
    ht__esc(s, dg_rep__str_or(r->command, "report"));
    dg_rep__sink_printf(s, " — %s</title>\n<style>", ht__status_word(st));
    dg_rep__sink_puts(s, ht__css);
    dg_rep__sink_puts(s, "</style>\n");
    if (ht__has_picker(r))
        dg_rep__sink_printf(s, "<script>%s</script>\n", ht__script);
    dg_rep__sink_puts(s, "</head>\n<body>\n<main>\n<h1>detgate ");
    ht__esc(s, dg_rep__str_or(r->command, "report"));
    dg_rep__sink_puts(s, " ");
    ht__badge(s, st);
    dg_rep__sink_puts(s, "</h1>\n");
    dg_rep__sink_puts(s, "<p class=\"meta\">");
    dg_rep__tally_line(s, r);
    time_t tt = (time_t)r->started_unix;
    struct tm tmv;
    char when[40];
    if (r->started_unix != 0 && gmtime_r(&tt, &tmv) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tmv))
        dg_rep__sink_printf(s, " · started %s", when);
    if (r->nomem)
        dg_rep__sink_puts(s, " · <strong>incomplete: out of memory while building</strong>");
    dg_rep__sink_puts(s, "</p>\n");
    if (r->note) {
        dg_rep__sink_puts(s, "<p class=\"note\">");
        ht__esc(s, r->note);
        dg_rep__sink_puts(s, "</p>\n");
    }
}

void dg_rep__html(const dg_report *r, const dg_report_opts *o, dg_rsink *s)
{
    uint32_t max_rows = o->rows_per_check ? o->rows_per_check : HT_DEFAULT_ROWS;
    ht__head(s, r);
    uint32_t max_sections = o->max_sections ? o->max_sections : HT_DEFAULT_SECTIONS;
    ht__summary(s, r, max_sections);
    ht__bisect(s, &r->bisect);
    uint32_t idx = 0, shown = 0;
    uint64_t more = 0;
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        const dg_report_scenario *sc = r->scenarios[i];
        for (uint32_t j = 0; j < sc->n_checks; j++, idx++) {
            if (sc->checks[j]->status != DG_REPORT_FAIL)
                continue;
            if (shown++ < max_sections)
                ht__check_section(s, sc, sc->checks[j], idx, max_rows, shown == 1);
            else
                more++;
        }
    }
    if (more)
        dg_rep__sink_printf(s, "<p class=\"note\">%llu more failing checks are not drawn here (their first divergent "
                           "ticks are in the summary; the JSON report has every detail).</p>\n",
                        (unsigned long long)more);
    dg_rep__sink_puts(s, "<footer>detgate ");
    ht__esc(s, dg_rep__str_or(r->tool_version, ""));
    dg_rep__sink_printf(s, " · report schema %d · A is the reference side (recording, golden or first file), B the "
                       "other.</footer>\n</main>\n</body>\n</html>\n",
                    DG_REPORT_SCHEMA_VERSION);
}
