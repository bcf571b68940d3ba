#!/usr/bin/env bash
# tests/reports/html_browser_test.sh — the HTML report as a user sees it: a gate report with a bit
# flip rendered by headless Chromium is not blank, has the first-divergence marker and the entity
# picker in its DOM, switches entity when the picker changes, and stays one self-contained file.
# Usage: html_browser_test.sh DETGATE SOURCE_DIR. Exit 77 (ctest: skipped) when Chromium is absent.
set -u
DG=$1
SRC=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { :; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

cd "$SRC" || exit 2
"$DG" gate --scenario dogfight-40 --inject 'bitflip:tick=300,entity=7,field=pos.x,bit=45' --report-dir "$W/bad" -q
[ $? -eq 1 ] || bad "gate with a bit flip did not exit 1"
"$DG" gate --scenario walkers-20 --report-dir "$W/good" -q
[ $? -eq 0 ] || bad "gate without an injection did not exit 0"
H=$W/bad/report.html

# one self-contained file: nothing fetched, no external script or stylesheet
for pat in 'src="http' "href=\"http" '<link' '<script src' 'url(' '@import'; do
  grep -qF "$pat" "$H" "$W/good/report.html" && bad "the HTML report holds '$pat'"
done
grep -q 'id="first-divergence"' "$H" || bad "no first-divergence marker in the file"

CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  echo "SKIP: chromium not installed (apt-get install chromium); the file checks above ran"
  [ $fails -eq 0 ] && exit 77 || exit 1
fi
chrome() { "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$W/profile" --hide-scrollbars "$@" 2>/dev/null; }

# the picture: not blank (many colours, a fair share of non-white pixels)
png_stats() {
  python3 - "$1" <<'PY'
import struct, sys, zlib
try:  # python3-pil when installed; else the PNG is decoded by hand below
    from PIL import Image
    im = Image.open(sys.argv[1]).convert('RGB')
    px = im.getdata()
    print(len(set(px)), sum(1 for p in px if min(p) < 200) * 1000 // len(px))
    sys.exit(0)
except ImportError:
    pass
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, 'unexpected PNG layout'
        bpp = 3 if ctype == 2 else 4
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride, prev, colours, ink = w * bpp, bytearray(w * bpp), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        colours.add(px)
        ink += min(px) < 200
    prev = line
print(len(colours), ink * 1000 // (w * h))
PY
}
for k in bad good; do
  chrome --screenshot="$W/$k.png" --window-size=1200,2000 "file://$W/$k/report.html"
  [ -s "$W/$k.png" ] || { bad "chromium wrote no screenshot of the $k report"; continue; }
  read -r colours permille < <(png_stats "$W/$k.png")
  [ "${colours:-0}" -ge 32 ] || bad "the $k report's screenshot has only ${colours:-0} colours (blank?)"
  [ "${permille:-0}" -ge 2 ] || bad "the $k report's screenshot is ${permille:-0}/1000 ink (blank?)"
  echo "$k report: $colours colours, $permille/1000 of the pixels inked"
done

# the DOM as the browser built it
chrome --dump-dom "file://$H" >"$W/dom.html"
grep -q 'id="first-divergence"' "$W/dom.html" || bad "no first-divergence marker in the DOM"
grep -q 'class="traj-pick"' "$W/dom.html" || bad "no entity picker in the DOM"
grep -q 'entity 7 (Viper 7): first to diverge, at tick 300' "$W/dom.html" || bad "the why line is missing"
grep -q 'first-divergence' "$W/good/report.html" && bad "a passing report has a divergence marker"
# the picker works in a real browser: pick the second entity, the first picture hides
sed 's|</body>|<script>var s=document.querySelector("select.traj-pick");s.value="1";dgPick(s);</script></body>|' \
  "$H" >"$W/picked.html"
chrome --dump-dom "file://$W/picked.html" >"$W/picked-dom.html"
python3 - "$W/picked-dom.html" <<'PY' || bad "picking entity 2 did not show its picture and hide the first"
import re, sys
divs = re.findall(r'<div class="traj"[^>]*>', open(sys.argv[1]).read())
assert len(divs) >= 2, divs
assert 'hidden' in divs[0] and 'hidden' not in divs[1], divs[:2]
assert all('hidden' in d for d in divs[2:]), divs
PY
[ $fails -eq 0 ] && echo "html_browser_test: all checks passed" && exit 0
exit 1
