#!/usr/bin/env bash
# `budgetsweep report` on a real sweep, checked in a real browser: headless Chromium, with every
# request sent to a proxy that is not there, loads the report, runs its script and takes a
# screenshot. The charts drew (each has path data), the table has one row per trial and is sorted
# best first, and the best value and the budget figures are those of `run -o json`. Bad input
# exits 2 naming what is wrong.
#
# REPORT_SCREENSHOT=PATH also copies the screenshot there (the README's docs/report.png):
#   REPORT_SCREENSHOT=$PWD/docs/report.png ctest --test-dir build -R e2e_report
source "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || fail "chromium is not installed (make deps)"

curve_sweep "$WORK/sweep.yaml" fmnist-asha '  budget: {gpuHours: 0.02}
  resource: {unit: epochs, min: 1, max: 9, reductionFactor: 3}
  scheduler: {algorithm: asha, mode: stop, seed: 5}
  parallelism: 4
  maxTrials: 24'
"$BSW" run "$WORK/sweep.yaml" --state-dir "$WORK/state" --output json >"$WORK/status.json" \
  2>"$WORK/progress.log" || { cat "$WORK/progress.log" >&2; fail "run exited $?"; }
"$BSW" report "$WORK/state" -o "$WORK/report.html" --png "$WORK/best.png" \
  || fail "report exited $?"

# Bad input: exit 2, and the message names the directory, file or flag.
expect_invalid() {
  local pattern=$1
  shift
  local rc=0
  "$BSW" report "$@" >"$WORK/out.log" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/out.log" >&2; fail "report $* exited $rc, not 2"; }
  grep -q -- "$pattern" "$WORK/out.log" || { cat "$WORK/out.log" >&2; fail "no '$pattern' in: report $*"; }
}
mkdir -p "$WORK/empty" "$WORK/corrupt"
cp "$WORK/state/sweep.json" "$WORK/corrupt/"
{ head -n 3 "$WORK/state/journal.jsonl"; echo '{"event": "ValueRec'; echo; } >"$WORK/corrupt/journal.jsonl"
expect_invalid "$WORK/absent: no such directory" "$WORK/absent" -o "$WORK/r.html"
expect_invalid "$WORK/empty/sweep.json: not found" "$WORK/empty" -o "$WORK/r.html"
expect_invalid "$WORK/corrupt/journal.jsonl:4: not a JSON record" "$WORK/corrupt" -o "$WORK/r.html"
expect_invalid "-o" "$WORK/state"
expect_invalid "NAMESPACE/SWEEP" --kubeconfig "$WORK/sweep.yaml" just-a-name -o "$WORK/r.html"

# The page needs nothing from the network: every request would go to a proxy on a closed port,
# loopback included (Chromium bypasses the proxy for it unless told not to), and no name resolves.
browse() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d "$WORK/chromium.XXXXXX")" --proxy-server=127.0.0.1:9 \
    --proxy-bypass-list="<-loopback>" --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars \
    "$@" 2>>"$WORK/chromium.log"
}
browse --screenshot="$WORK/screenshot.png" --window-size=1280,2400 "file://$WORK/report.html" \
  >/dev/null || { cat "$WORK/chromium.log" >&2; fail "chromium could not take the screenshot"; }
browse --dump-dom "file://$WORK/report.html" >"$WORK/dom.html" \
  || { cat "$WORK/chromium.log" >&2; fail "chromium could not load the report"; }

python3 - "$WORK" <<'PY'
import json, re, struct, sys, zlib
from html.parser import HTMLParser

work = sys.argv[1]
status = json.load(open(f"{work}/status.json"))
html = open(f"{work}/report.html").read()
dom = open(f"{work}/dom.html").read()


def check(ok, message):
    if not ok:
        sys.exit(f"FAIL: {message}")


class Page(HTMLParser):
    """The figures by id, the charts' path data, and the trial rows' first cells."""

    def __init__(self):
        super().__init__()
        self.figures, self.charts, self.rows = {}, [], []
        self.figure, self.in_chart, self.cell = None, False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "span" and a.get("class") == "figure":
            self.figure = a["id"]
            self.figures[self.figure] = ""
        if tag == "svg" and a.get("class") == "chart":
            self.in_chart = True
            self.charts.append({"label": a.get("aria-label"), "paths": []})
        if tag == "path" and self.in_chart:
            self.charts[-1]["paths"].append(a.get("d", ""))
        if tag == "tr" and a.get("class") == "trial":
            self.rows.append(None)
            self.cell = 0
        if tag == "td" and self.cell is not None:
            self.cell += 1

    def handle_endtag(self, tag):
        if tag == "span":
            self.figure = None
        if tag == "svg":
            self.in_chart = False
        if tag == "tr":
            self.cell = None

    def handle_data(self, data):
        if self.figure:
            self.figures[self.figure] += data
        if self.cell == 1 and self.rows and self.rows[-1] is None:
            self.rows[-1] = data


for link in ("http://", "https://", "src=", "<link", "url(", "@import"):
    check(link not in html, f"the report links to something: {link}")

page = Page()
page.feed(dom)
check(len(page.rows) == status["trials"]["created"],
      f"{len(page.rows)} table rows for {status['trials']['created']} trials")
check(page.rows[0] == status["best"]["trial"],
      f"the table is not sorted best first (its script did not run?): {page.rows[0]}")
check(float(page.figures["best-value"]) == float("%.6g" % status["best"]["value"]),
      f"best value {page.figures['best-value']} is not the status's {status['best']['value']}")
for key in ("used", "reserved", "remaining", "gpuHours"):
    shown = float(page.figures[f"budget-{key}"])
    check(shown == status["budget"][key], f"budget {key} {shown} is not {status['budget'][key]}")
for key, value in status["trials"].items():
    check(int(page.figures[f"trials-{key}"]) == value, f"trials {key} is not {value}")
charts = [c["label"] for c in page.charts]
expected = 3 + 3  # best, ladder, burn-down; one per parameter (lr, weight-decay, batch-size)
check(len(charts) == expected, f"{len(charts)} charts, not {expected}: {charts}")
for chart in page.charts:
    data = [d for d in chart["paths"] if re.match(r"M[\d.]+ [\d.]+L", d)]
    check(data, f"chart '{chart['label']}' has no path data")


def paeth(a, b, c):
    p = a + b - c
    if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c):
        return a
    return b if abs(p - b) <= abs(p - c) else c


def pixels(path):
    """(width, height, rows of RGB pixels) of a non-interlaced 8-bit RGB or RGBA PNG."""
    blob = open(path, "rb").read()
    check(blob[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    pos, idat = 8, b""
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        if kind == b"IDAT":
            idat += body
        pos += 12 + length
    check(depth == 8 and colour in (2, 6), f"{path}: unexpected PNG format")
    step = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * step
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a, b = line[i - step] if i >= step else 0, prev[i]
            c = prev[i - step] if i >= step else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]) & 0xFF
        rows.append([bytes(line[i:i + 3]) for i in range(0, stride, step)])
        prev = line
    return width, height, rows

for path, size in ((f"{work}/screenshot.png", (1280, 2400)), (f"{work}/best.png", (1200, 675))):
    width, height, rows = pixels(path)
    check((width, height) == size, f"{path} is {width}x{height}, not {size}")
    colours = {p for row in rows[::4] for p in row[::4]}
    inked = sum(p != b"\xff\xff\xff" for row in rows[::4] for p in row[::4])
    check(len(colours) > 20, f"{path} has {len(colours)} colours: blank?")
    check(inked > 0.03 * len(rows[::4]) * len(rows[0][::4]), f"{path} is nearly all white")
print(f"report: {len(page.rows)} trials, best {page.figures['best-value']}, "
      f"used {page.figures['budget-used']} of {page.figures['budget-gpuHours']} GPU-h, "
      f"{len(charts)} charts, screenshot and PNG drawn")
PY
[ -z "${REPORT_SCREENSHOT:-}" ] || cp "$WORK/screenshot.png" "$REPORT_SCREENSHOT"
