#!/usr/bin/env bash
# Regenerates results/gui/: the main window for scenarios/default.json under Xvfb (a real X
# server; falls back to Qt's offscreen platform when xvfb-run is missing or fails, and says so)
# and every chart from ddpsim-plot (headless), as PNG.
#   scripts/gui-screenshot.sh [BUILD_DIR]        (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bin="$build/simulator"
out="$root/results/gui"
for tool in ddpsim-gui ddpsim-plot; do
  [[ -x "$bin/$tool" ]] || { echo "gui-screenshot: $bin/$tool not built (cmake --build $build --target $tool)" >&2; exit 2; }
done
mkdir -p "$out"

shot="$out/main-window.png"
if command -v xvfb-run >/dev/null &&
   xvfb-run -a -s "-screen 0 1600x1000x24" "$bin/ddpsim-gui" "$root/scenarios/default.json" \
     --screenshot "$shot"; then
  echo "gui-screenshot: main window grabbed from Xvfb"
else
  echo "gui-screenshot: Xvfb unavailable or failed; grabbing with QT_QPA_PLATFORM=offscreen"
  QT_QPA_PLATFORM=offscreen "$bin/ddpsim-gui" "$root/scenarios/default.json" --screenshot "$shot"
fi

# Tabs of the window on three scenarios (issue 19): one that fits and plans a deadline (Time &
# cost, Recommendation), one that does not fit under its own strategy (Step time), and the
# buyer's question over three systems (issue 41 item 3: every tab, two sizes); and the window at
# 1100x700 (nothing truncated). Any other tab: tab_shots SCENARIO TAG "Tab name".
tab_shots() {
  local scen="$1" tag="$2"
  shift 2
  for t in "$@"; do
    local f="$out/tab-$tag-$(echo "$t" | tr 'A-Z ' 'a-z-').png"
    "$bin/ddpsim-gui" "$root/scenarios/examples/$scen" --tab "$t" --screenshot "$f" --size 1500x920
  done
}
# Every tab of the buyer's file (issue 41 item 3) at the two sizes buyers use: a laptop's 1280x800
# and a desktop's 1920x1080 (tab-buy-<tab>-<W>x<H>.png).
sized_shots() {
  local scen="$1" tag="$2"
  for size in 1280x800 1920x1080; do
    for t in "Step time" Scaling Memory Time Timeline Table Compare Recommendation; do
      local f="$out/tab-$tag-$(echo "$t" | tr 'A-Z ' 'a-z-')-$size.png"
      "$bin/ddpsim-gui" "$root/scenarios/examples/$scen" --tab "$t" --screenshot "$f" --size "$size"
    done
  done
}
export -f tab_shots 2>/dev/null || true
if command -v xvfb-run >/dev/null; then
  xvfb-run -a -s "-screen 0 1920x1200x24" bash -c "$(declare -p bin root out); $(declare -f tab_shots sized_shots);
    tab_shots plan-gpt2-xl.json plan Time Recommendation;
    tab_shots gpt2-xl-not-fitting.json not-fitting 'Step time';
    sized_shots plan-buy-llama-3-8b.json buy;
    '$bin/ddpsim-gui' '$root/scenarios/examples/plan-gpt2-xl.json' --tab Recommendation \
      --screenshot '$out/small-1100x700.png' --size 1100x700"
else
  export QT_QPA_PLATFORM=offscreen
  tab_shots plan-gpt2-xl.json plan Time Recommendation
  tab_shots gpt2-xl-not-fitting.json not-fitting "Step time"
  sized_shots plan-buy-llama-3-8b.json buy
  "$bin/ddpsim-gui" "$root/scenarios/examples/plan-gpt2-xl.json" --tab Recommendation \
    --screenshot "$out/small-1100x700.png" --size 1100x700
fi

scenario="$root/scenarios/default.json"
for chart in step scaling memory timeline; do
  "$bin/ddpsim-plot" "$scenario" --chart "$chart" --out "$out/$chart.png"
done
"$bin/ddpsim-plot" "$root/scenarios/examples/plan-gpt2-xl.json" --chart cost --out "$out/cost.png"
ls -l "$out"
