#!/usr/bin/env bash
# gloo-scheduling.sh: how much of a Gloo all-reduce's time on this host is the CPU scheduler.
# Run it on a quiet machine: every figure is a timing.
#
#   bash scripts/gloo-scheduling.sh [--build DIR] [--calls N] [--runs R] [--sizes "768K 1536K"]
#
# For each size, R runs (default 2) of N timed calls (default 150) of a 2-rank out-of-place
# all-reduce (build/calibrate/comm/ddpsim-collectives, one size per run), under three
# schedules:
#   default  the ranks as the kernel places them (what ddpsim calibrate and the executor get);
#   pinned   rank r bound to core r (taskset), so a rank's caller and Gloo event-loop threads
#            share one core;
#   fifo     both ranks SCHED_FIFO priority 1 (chrt): a woken thread runs at once instead of
#            waiting for the running one's slice to end (needs root or CAP_SYS_NICE; skipped
#            otherwise).
# Prints a Markdown table: per schedule and size, each run's mean, median and p10..p90 (us).
# If default and pinned are several times slower than fifo, a call waits for scheduler ticks,
# and collective times on this host repeat only as well as the scheduler's placement does
# (see oversubscription_note in calibrate/comm/sweep.hpp).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"
calls=150
runs=2
sizes="768K 1536K 3M"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --calls) calls="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    *) echo "gloo-scheduling.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build/calibrate/comm/ddpsim-collectives"
[ -x "$bin" ] || { echo "gloo-scheduling.sh: $bin not built" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

schedules="default pinned"
if chrt -f 1 true 2>/dev/null; then schedules="$schedules fifo"; fi

# One run: two ranks started as torchrun would (RANK, WORLD_SIZE, a shared store directory).
run_one() {  # schedule size out.json
  local store
  store=$(mktemp -d "$work/store.XXXX")
  local pids=()
  for r in 0 1; do
    local pre=()
    case "$1" in
      pinned) pre=(taskset -c "$r") ;;
      fifo) pre=(chrt -f 1) ;;
    esac
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 DDPSIM_STORE_DIR=$store \
      "${pre[@]}" "$bin" --op all_reduce -b "$2" -e "$2" -n "$calls" --no-in-place \
      --json "$3.r$r" > "$work/log.$r" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { cat "$work"/log.*; exit 1; }; done
  mv "$3.r0" "$3"
}

for s in $schedules; do
  for size in $sizes; do
    for i in $(seq 1 "$runs"); do run_one "$s" "$size" "$work/$s-$size-$i.json"; done
  done
done

python3 - "$work" "$schedules" "$sizes" "$runs" "$calls" <<'PY'
import json, sys
work, schedules, sizes, runs, calls = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), sys.argv[5]
print(f"2-rank Gloo all-reduce, out of place, {calls} timed calls per run; us")
print()
print("| schedule | size | " + " | ".join(f"run {i} mean / median / p10..p90" for i in range(1, runs + 1)) + " |")
print("|---|---:|" + "---:|" * runs)
for s in schedules:
    for size in sizes:
        cells = []
        for i in range(1, runs + 1):
            r = json.load(open(f"{work}/{s}-{size}-{i}.json"))["ops"]["all_reduce"]["rows"][0]
            cells.append(f"{r['time_us_mean']:.0f} / {r['time_us']:.0f} / {r['time_us_p10']:.0f}..{r['time_us_p90']:.0f}")
        b = r["size_bytes"]
        label = f"{b / 2**20:g} MiB" if b >= 2**20 else f"{b / 2**10:g} KiB"
        print(f"| {s} | {label} | " + " | ".join(cells) + " |")
PY
