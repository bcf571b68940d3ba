#!/usr/bin/env bash
# tests/reports/md_anchor_test.sh — every link of the Markdown report's summary table reaches its
# scenario's section on GitHub and on GitLab: each anchor is derived here from the headings the way
# each generates them (Python's unicodedata: keep letters, marks, decimal digits, connector
# punctuation, spaces and hyphens; lower-case; spaces to hyphens; GitLab folds hyphen runs; both
# number repeats), for odd names and for a report cut by its size cap.
# usage: md_anchor_test.sh MD_ANCHOR_SAMPLE
set -u
SAMPLE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-md-anchor-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail=0
check() { # check FILE MIN_LINKS
  python3 - "$1" "$2" <<'PY' || fail=1
import html, re, sys, unicodedata
text = open(sys.argv[1], encoding="utf-8").read()
min_links = int(sys.argv[2])

def rendered(s):  # inline Markdown as the reader sees it: backslash escapes, then entities
    s = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", s)
    return html.unescape(s).strip(" \t")

def base(t):
    t = t.lower()
    kept = "".join(c for c in t if c in " -" or unicodedata.category(c)[0] in "LM"
                   or unicodedata.category(c) in ("Nd", "Pc"))
    return kept.replace(" ", "-")

gh_seen, gl_count = {}, {}
gh, gl = {}, {}  # anchor -> heading line index
lines = text.split("\n")
for i, line in enumerate(lines):
    m = re.match(r"^(#{1,6}) (.*)$", line)
    if not m:
        continue
    t = rendered(m.group(2))
    s = base(t)
    orig = s
    while s in gh_seen:  # github-slugger
        gh_seen[orig] += 1
        s = "%s-%d" % (orig, gh_seen[orig])
    gh_seen[s] = 0
    gh.setdefault(s, i)
    g = re.sub("-+", "-", base(t))  # GitLab's table of contents filter
    n = gl_count.get(g, 0)
    gl_count[g] = n + 1
    gl.setdefault(g if n == 0 else "%s-%d" % (g, n), i)

bad, links = [], 0
for line in lines:
    if not line.startswith("| "):
        continue
    m = re.match(r"^\| \[(.*?)\]\(#([^)]*)\) \|", line)
    if not m:
        continue
    links += 1
    name, anchor = rendered(m.group(1)), m.group(2)
    for who, table in (("GitHub", gh), ("GitLab", gl)):
        if anchor not in table:
            bad.append("%s: no heading gives #%s (%r)" % (who, anchor, name))
            continue
        h = table[anchor]
        title = rendered(re.match(r"^#+ (.*)$", lines[h]).group(1))
        below = rendered(lines[h + 2]) if h + 2 < len(lines) else ""
        sp = lambda t: re.sub(r"\s+", " ", t)  # a browser shows a run of spaces as one
        if sp(title) != sp("❌ " + name) and sp(below) != sp("Scenario " + name):
            bad.append("%s: #%s is %r, not the section of %r" % (who, anchor, title, name))
if links < min_links:
    bad.append("only %d links (expected at least %d)" % (links, min_links))
for b in bad:
    print("FAIL:", sys.argv[1], b)
sys.exit(1 if bad else 0)
PY
}
"$SAMPLE" "$W/odd.md" odd || { echo "FAIL: md_anchor_sample odd"; fail=1; }
# 25 failing scenarios, each with a failing and a passing row
check "$W/odd.md" 50
# a scenario named like a stand-in heading keeps its name as its heading, with no line below
grep -q '^Scenario Scenario 4$' "$W/odd.md" && { echo "FAIL: 'Scenario 4' got a stand-in heading"; fail=1; }
# every name that carries odd characters got a heading of its own or the "Scenario N" one
grep -q '^### ❌ Scenario 3$' "$W/odd.md" && grep -q '^Scenario a -- b$' "$W/odd.md" ||
  { echo "FAIL: 'a -- b' has no Scenario 3 heading"; fail=1; }
grep -q '| \[über Größe/Ωmega\](#-über-größeωmega) |' "$W/odd.md" || { echo "FAIL: no link for über Größe/Ωmega"; fail=1; }
grep -q '| all good | golden |' "$W/odd.md" && grep -q '| could not test | golden |' "$W/odd.md" ||
  { echo "FAIL: a scenario without a section has no plain row"; fail=1; }
# cut by the size cap: links only to the sections that are there
"$SAMPLE" "$W/many.md" many 300 40000 || { echo "FAIL: md_anchor_sample many"; fail=1; }
grep -q 'more sections not shown' "$W/many.md" || { echo "FAIL: the cap did not cut sections"; fail=1; }
check "$W/many.md" 5
[ "$(wc -c <"$W/many.md")" -le 40000 ] || { echo "FAIL: many.md over its cap"; fail=1; }
[ "$fail" -eq 0 ] && echo "md_anchor_test: passed"
exit "$fail"
