/* reports/report_internal.h — the report room's back office: the in-memory output sink every
 * renderer writes into, the escapers for each target language, and number formatting.
 * Private to reports/ (prefix dg_rep__ / dg_rsink). */
#ifndef DETGATE_REPORTS_INTERNAL_H
#define DETGATE_REPORTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/report.h"

/* A growable byte buffer with a sticky out-of-memory flag: renderers write freely and check once. */
typedef struct dg_rsink {
    char *p;
    size_t len, cap;
    bool nomem;
} dg_rsink;

void dg_rep__sink_init(dg_rsink *s);
void dg_rep__sink_free(dg_rsink *s);
void dg_rep__sink_put(dg_rsink *s, const char *bytes, size_t n);
void dg_rep__sink_puts(dg_rsink *s, const char *str);
void dg_rep__sink_printf(dg_rsink *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Shrinks back to an earlier length (used to drop a section that would break a size cap). */
void dg_rep__sink_truncate(dg_rsink *s, size_t len);

/* Decodes one UTF-8 scalar from s[0..n). Returns the bytes consumed (>= 1). Ill-formed input
 * (overlong, surrogate, > U+10FFFF, truncated) yields *cp = U+FFFD and consumes one byte. */
size_t dg_rep__utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
void dg_rep__put_utf8(dg_rsink *s, uint32_t cp);

/* Escapers. NULL strings write nothing (callers decide what "missing" looks like). */
void dg_rep__json_str(dg_rsink *s, const char *str);   /* with the surrounding quotes, or null */
/* & < > " ' escaped; characters XML 1.0 forbids (and C1 controls) become U+FFFD. _text is safe in
 * attributes (newlines and tabs as character references), _content keeps them raw for text nodes. */
void dg_rep__xml_text(dg_rsink *s, const char *str);
void dg_rep__xml_content(dg_rsink *s, const char *str);
void dg_rep__md_text(dg_rsink *s, const char *str);    /* Markdown inline / table cell, one line */

/* ---- Markdown anchors (report_md_anchor.c; the rule: docs/REPORT-SCHEMA.md "Markdown anchors") -- */
#define DG_REP_ANCHOR_CAP 128
/* The anchor GitHub gives a heading whose text is `text` as dg_rep__md_text writes it; its length,
 * 0 when empty or longer than cap - 1 (out is then ""). *sure (may be NULL) false: the text holds a
 * character whose fate this file does not know for certain (the anchor may then be wrong). */
size_t dg_rep__md_slug(const char *text, char *out, size_t cap, bool *sure);
#define DG_REP_HEADING_CAP 256
/* Each named scenario's section heading (names[i] NULL: none) and the anchor its summary rows link
 * to: "❌ NAME" when that heading's anchor is the same on GitHub and GitLab, else "❌ Scenario N"
 * (N = i + 1; the name goes on the line below), anchors numbered as both number repeats; "" where
 * even that would differ. False: out of memory. */
bool dg_rep__md_anchors(const char *const *names, size_t n, char (*heading)[DG_REP_HEADING_CAP],
                        char (*anchor)[DG_REP_ANCHOR_CAP]);
void dg_rep__term_text(dg_rsink *s, const char *str);  /* terminal: control chars shown as '?' */
/* Columns a (terminal-escaped) string takes: combining marks 0, East Asian wide and emoji 2. */
size_t dg_rep__term_width(const char *str);

/* Shortest decimal that reads back as the same double ("%.15g".."%.17g"), '.' as the decimal
 * point whatever the locale. Non-finite values produce "null" when json, else "n/a". */
void dg_rep__double(dg_rsink *s, double v, bool json);
/* Into a buffer (>= 32 bytes). */
void dg_rep__double_buf(char *buf, size_t cap, double v, bool json);

/* A rotation row's side: "1.000000 0.000000 0.000000 0.000000" (w x y z, 6 decimals, '.'). */
void dg_rep__quat_buf(char *buf, size_t cap, const double q[4]);
/* A flags row (field "flags" with quanta in 0..2^32-1): true, and "+bit 2, -bit 4" (the bits set
 * and cleared from A to B) in buf; false for any other field. */
bool dg_rep__flag_bits(char *buf, size_t cap, const dg_report_field *f);

/* Shared wording. */
const char *dg_rep__str_or(const char *s, const char *fallback);
/* "first divergent tick 4312: 2 entities changed, 1 added" or a status message; into sink. */
void dg_rep__check_headline(dg_rsink *s, const dg_report_check *c, void (*esc)(dg_rsink *, const char *));
/* "entities 7, 19 differ" (first detailed tick, up to `max_ids` ids) */
void dg_rep__entity_list(dg_rsink *s, const dg_report_check *c, uint32_t max_ids);
/* "divergent ticks: 1109 in 256 ranges: 4312..4320, 5000..5099, 6000, ... 248 more" */
void dg_rep__ranges_line(dg_rsink *s, const dg_report_check *c, uint32_t max_shown);
/* "event 0: kill: weapon (c) A 3, B 4", "event 2: B only: chat {...} (A has 2 events at this tick, B 3)";
 * event text goes through esc, the rest is plain ASCII. */
void dg_rep__event_diff_line(dg_rsink *s, const dg_report_event_diff *d, const dg_report_tick *t,
                             void (*esc)(dg_rsink *, const char *));
/* "keyframe interval: A 120, B 60" ("(none)" for a side without the row); everything through esc. */
void dg_rep__value_line(dg_rsink *s, const dg_report_value *v, void (*esc)(dg_rsink *, const char *));
/* Counts over the report. */
typedef struct dg_rep__tally {
    uint32_t scenarios, sc_pass, sc_warn, sc_fail, sc_error;
    uint32_t checks, ck_pass, ck_warn, ck_fail, ck_error;
} dg_rep__tally;
void dg_rep__count(const dg_report *r, dg_rep__tally *t);
/* "2.50 s" ("n/a" for negative or non-finite) */
void dg_rep__seconds(char *buf, size_t cap, double v);
/* "3 scenarios (1 passed, 1 failed, 1 could not be tested), 7 checks, 12.5 s" — plain ASCII;
 * "N warned" after "passed" only when a scenario warned. */
void dg_rep__tally_line(dg_rsink *s, const dg_report *r);

/* Renderers into a sink (the public writers wrap these). */
void dg_rep__text(const dg_report *r, const dg_report_opts *o, dg_rsink *s);
void dg_rep__json(const dg_report *r, const dg_report_opts *o, dg_rsink *s);
void dg_rep__junit(const dg_report *r, const dg_report_opts *o, dg_rsink *s);
void dg_rep__markdown(const dg_report *r, const dg_report_opts *o, dg_rsink *s);
void dg_rep__html(const dg_report *r, const dg_report_opts *o, dg_rsink *s);

#endif
