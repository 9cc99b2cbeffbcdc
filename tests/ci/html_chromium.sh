#!/usr/bin/env bash
# The HTML reports opened as a person opens them: headless Chromium renders a run's report, a
# history gate's, an A/B gate's (its rounds by pair of workers, each pair's estimate and the
# pooled interval), a case's history and a glob's (every matching case, the x axis
# dated) from real (tiny) runs; each must draw its charts (SVG elements
# in the rendered page, chart-blue pixels in a screenshot that is not blank) and log no console
# error. Exit 77 (ctest: skipped) where no Chromium or Chrome is installed.
#   html_chromium.sh BUILD_DIR
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: html_chromium.sh BUILD_DIR}" && pwd)"
browser=""
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  command -v "$b" >/dev/null && { browser="$b"; break; }
done
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium here (Debian: apt-get install chromium); the HTML report is not rendered"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
cp "$src/tests/ci/tiny.yaml" .
attnprof="$build/attnprof"
for i in 1 2 3; do
  "$attnprof" run tiny.yaml --db h.db --branch main --commit "c$i" --cost-rows 0 >/dev/null
done
"$attnprof" compare --db h.db --baseline history --html gate.html >/dev/null || true
# The paired gate: this build against itself, one case, a short budget.
"$attnprof" ab tiny.yaml --db ab.db --base "$build" --case 'tiny/prefill/b1-s32-fp32-causal/eager' \
  --max-rounds 24 --no-trace --html ab.html >/dev/null || true
[ -s ab.html ] || fail "attnprof ab wrote no ab.html"
"$attnprof" report --db h.db --html run.html
"$attnprof" report --db h.db --case tiny/prefill/b1-s32-fp32-causal/eager --html history.html
"$attnprof" report --db h.db --case 'tiny/*' --html glob.html

# render FILE MIN_SVG: screenshot, DOM and console of one report.
render() {
  local page="$1" min_svg="$2" name="${1%.html}"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1280,1600 --screenshot="$tmp/$name.png" "file://$tmp/$page" \
    >"$tmp/$name.shot.log" 2>&1 || fail "$browser could not screenshot $page: $(tail -3 "$tmp/$name.shot.log")"
  # --enable-logging=stderr prints the page's console messages as "CONSOLE(...)" lines.
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
    --dump-dom "file://$tmp/$page" >"$tmp/$name.dom" 2>"$tmp/$name.console" ||
    fail "$browser could not load $page"
  if grep -E 'CONSOLE\(|Uncaught|ERROR:.*(console|javascript)' "$tmp/$name.console"; then
    fail "$page logged console messages"
  fi
  local svgs
  svgs="$(grep -o '<svg' "$tmp/$name.dom" | wc -l)"
  [ "$svgs" -ge "$min_svg" ] || fail "$page: $svgs <svg> in the rendered DOM, expected $min_svg"
  grep -q '<circle class="point"' "$tmp/$name.dom" || fail "$page: no data points rendered"
  read -r w h ink blue < <(python3 "$src/tests/ci/png_stats.py" "$tmp/$name.png" 0969da)
  echo "$page: ${w}x${h}, $svgs chart(s), $(python3 -c "print(round($ink*100, 1))")% ink, $blue chart-blue pixels"
  python3 -c "import sys; sys.exit(0 if $ink > 0.01 else 1)" || fail "$page: the screenshot is blank"
  [ "$blue" -gt 50 ] || fail "$page: no chart drawn in the screenshot"
}
render run.html 1
render gate.html 1
render ab.html 2
# The A/B page draws which pair of workers each round came from, and each pair's estimate
# beside the pooled interval: the two levels of the paired statistic.
grep -q 'class="pair-span"' "$tmp/ab.dom" || fail "ab.html: the rounds are not marked by pair"
grep -q '<g class="pair">' "$tmp/ab.dom" || fail "ab.html: no pair's estimate drawn"
grep -q 'class="pooled"' "$tmp/ab.dom" || fail "ab.html: no pooled interval drawn"
render history.html 1
grep -q 'class="band"' "$tmp/history.dom" || fail "history.html: no interval band"
# A glob's history: every matching case drawn, each x axis ticked with the runs' dates (UTC,
# "MM-DD HH:MM") over their commits.
render glob.html 2
for key in tiny/prefill/b1-s32-fp32-none/eager tiny/prefill/b1-s32-fp32-causal/eager; do
  grep -q "<title>history of $key</title>" "$tmp/glob.dom" || fail "glob.html: $key not drawn"
done
today="$(date -u +%m-%d)"
dated="$(grep -oE '<tspan x="[0-9.]+">[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}</tspan>' "$tmp/glob.dom" | wc -l)"
[ "$dated" -ge 6 ] || fail "glob.html: $dated dated x ticks, expected 3 runs in each of 2 charts"
grep -q ">$today " "$tmp/glob.dom" || fail "glob.html: no x tick of today ($today)"
for c in c1 c2 c3; do
  grep -q "dy=\"12\">$c</tspan>" "$tmp/glob.dom" || fail "glob.html: commit $c not under its date"
done
# To look at them: ATTNPROF_SCREENSHOTS=<folder> keeps the screenshots and pages there.
if [ -n "${ATTNPROF_SCREENSHOTS:-}" ]; then
  mkdir -p "$ATTNPROF_SCREENSHOTS" && cp "$tmp"/*.png "$tmp"/*.html "$ATTNPROF_SCREENSHOTS"/
fi
echo "html reports: rendered with charts, no console errors"
