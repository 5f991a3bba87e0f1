#!/usr/bin/env bash
# validate-sweep.sh: the full validation of ddpsim's DDP model against the real executor, from
# one command. Run it on a quiet machine (nothing else running): every figure is a timing.
#
#   bash scripts/validate-sweep.sh                      # loopback TCP, full sweep
#   bash scripts/validate-sweep.sh --netns 1gbit        # ranks in the rate-limited namespace lab
#   bash scripts/validate-sweep.sh --quick --out-dir /tmp/vs   # smoke run: 2 steps x 1 run
#   bash scripts/validate-sweep.sh --runner torch       # against real PyTorch DDP (see below)
#   options: --build DIR (default build), --steps S, --repeat R, --eff-repeat R, --skip-efficiency
#
# What it runs (ddpsim-validate from DIR/simulator; see simulator/cli/validate/README.md):
#  1. simulator/cli/validate/sweep-mlp.json: 3 MLP sizes (1024-H-1024, H = 2048/4096/8192) x bucket caps 1/5/25 MB x overlap on/off x
#     1 and 2 ranks (36 points), each predicted by both engines on a fresh --quick calibration
#     per rank count and measured by ddpsim-exec S steps x R repetitions (round-robin over the
#     points; default 10 x 3 = 30 steps per point, the medians' sample); per point the step
#     and its components with errors, per (size, overlap, ranks) the bucket-size choice: median
#     step per cap with its 95% order-statistic CI, the measured best set, the predicted best.
#  2. simulator/cli/validate/efficiency-hidden.json with --efficiency (unless --skip-efficiency): a
#     small MLP with a long backward (communication hidden), 1 and 2 ranks x 3 caps, DDP and N
#     independent processes alternating, S=5 steps x R=6 repetitions each: the DDP overhead per
#     step and per bucket, paired ratio with its CI, "within 5%".
#  3. simulator/cli/validate/sweep-gpt2.json: the executor's GPT-2 (4 blocks x 256, eager
#     attention) x caps 1/5/25 MB x overlap at 2 ranks (6 points), S x R, into ...-gpt2x.json.
# --runner torch measures with real PyTorch DDP over gloo (calibrate/torch/ddp_runner.py) instead:
#  1. simulator/cli/validate/torch-sweep-mlp.json: the 3 MLP sizes x caps 1/5/25/100 MB x overlap
#     on/off at 2 ranks (24 points);
#  2. simulator/cli/validate/torch-sweep-gpt2.json: a small GPT-2 x the same caps x overlap
#     (8 points), S x R like the first (no efficiency run);
#  3. simulator/cli/validate/torch-sweep-mlp-deep.json: a deep MLP whose caps change torch's
#     buckets (7/4/3/2 at 1/5/10/25 MB) x 2 batch sizes x overlap (16 points), S x R;
#  into ...-torch.json, ...-torch-gpt2.json and ...-torch-deep.json, section tag torch-loopback.
# Output: results/validation-<host>-<YYYYMMDD>[-netns-RATE].json and
# ...-efficiency.json (plus the calibrated profiles beside them, which each run also embeds);
# then results/VALIDATION.manifest.json points its runs at them (ids mlp-loopback,
# efficiency-loopback, gpt2-exec; mlp-netns-RATE; torch-mlp, torch-gpt2, torch-deep) and
# results/VALIDATION.md is regenerated (scripts/validation-report.py, which names the files that
# are no longer cited). With --out-dir the files go there and results/ is left alone (the
# tables are written to OUT_DIR/VALIDATION-TAG.md, TAG = loopback, netns-RATE or torch-loopback).
# --netns RATE needs root: it brings the lab up for 2 ranks (scripts/netns-lab.sh up 2 RATE),
# runs every 2-rank child under calibrate/netns/netns-launch.sh, and always tears it down.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
netns=""
quick=0
steps=10
repeat=3
eff_steps=5
eff_repeat=6
efficiency=1
out_dir=""
runner=exec

die() { echo "validate-sweep: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --build) build=$(cd "${2:-}" 2>/dev/null && pwd) || die "--build: no directory '${2:-}'"; shift 2 ;;
    --netns) netns=${2:-}; [[ -n $netns ]] || die "--netns: expected a rate, e.g. 1gbit"; shift 2 ;;
    --quick) quick=1; shift ;;
    --steps) steps=${2:-}; shift 2 ;;
    --repeat) repeat=${2:-}; shift 2 ;;
    --eff-repeat) eff_repeat=${2:-}; shift 2 ;;
    --skip-efficiency) efficiency=0; shift ;;
    --runner) runner=${2:-}; [[ $runner == exec || $runner == torch ]] || die "--runner: exec or torch"; shift 2 ;;
    --out-dir) out_dir=${2:-}; [[ -n $out_dir ]] || die "--out-dir: expected a directory"; shift 2 ;;
    -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for v in steps repeat eff_repeat; do
  [[ ${!v} =~ ^[0-9]+$ ]] && ((${!v} >= 1)) || die "--${v//_/-}: expected a positive integer, got '${!v}'"
done
if ((quick)); then
  steps=2 repeat=1 eff_steps=2 eff_repeat=2
fi

validate=$build/simulator/ddpsim-validate
[[ -x $validate ]] || die "$validate not found: build it (cmake --build $build --target ddpsim-validate)"

host=$(hostname)
date=$(date -u +%Y%m%d)
tag=loopback
netns_args=()
if [[ $runner == torch && -n $netns ]]; then
  die "--runner torch runs its ranks on this host (no --netns)"
fi
if [[ -n $netns ]]; then
  tag=netns-$netns
  [[ $(id -u) -eq 0 ]] || die "--netns needs root (network namespaces, tc)"
  lab=$root/scripts/netns-lab.sh
  trap 'bash "$lab" down >/dev/null 2>&1' EXIT
  trap 'exit 1' INT TERM
  bash "$lab" up 2 "$netns" || die "could not bring the namespace lab up (bash $lab probe)"
  netns_args=(--netns-launch "$root/calibrate/netns/netns-launch.sh")
fi

if [[ -n $out_dir ]]; then
  mkdir -p "$out_dir" || die "--out-dir: cannot create '$out_dir'"
  dest=$out_dir
else
  dest=$root/results
fi
suffix=""
[[ -n $netns ]] && suffix="-netns-$netns"
main_scenario=simulator/cli/validate/sweep-mlp.json main_desc="36 points"
second_scenario=simulator/cli/validate/efficiency-hidden.json
second_desc="efficiency (6 points, DDP and independent, $eff_steps steps x $eff_repeat runs)"
second_args=(--steps "$eff_steps" --repeat "$eff_repeat" --efficiency)
second_title="Executor efficiency (communication hidden)" second_name=efficiency
if [[ $runner == torch ]]; then
  tag=torch-loopback suffix=-torch
  main_scenario=simulator/cli/validate/torch-sweep-mlp.json main_desc="24 MLP points, PyTorch DDP"
  second_scenario=simulator/cli/validate/torch-sweep-gpt2.json
  second_desc="small GPT-2 (8 points, PyTorch DDP, $steps steps x $repeat runs)"
  second_args=(--steps "$steps" --repeat "$repeat")
  second_title="Small GPT-2 (real PyTorch DDP)" second_name=gpt2
fi
third_scenario="" third_json=""
if [[ $runner == exec ]]; then
  third_scenario=simulator/cli/validate/sweep-gpt2.json
  third_desc="GPT-2 block stack (6 points, ddpsim-exec, $steps steps x $repeat runs)"
  third_title="GPT-2 block stack (ddpsim-exec)"
fi
if [[ $runner == torch ]]; then
  third_scenario=simulator/cli/validate/torch-sweep-mlp-deep.json
  third_desc="deep MLP (16 points, caps that change the buckets, PyTorch DDP, $steps steps x $repeat runs)"
  third_title="Deep MLP, caps that change the buckets (real PyTorch DDP)"
fi
main_json=$dest/validation-$host-$date$suffix.json
if [[ -n $third_scenario ]]; then
  third_json=$dest/validation-$host-$date$suffix-deep.json
  [[ $runner == exec ]] && third_json=$dest/validation-$host-$date$suffix-gpt2x.json
fi
eff_json=$dest/validation-$host-$date$suffix-$second_name.json
work=$(mktemp -d "${TMPDIR:-/tmp}/validate-sweep.XXXXXX")
trap_cleanup() { rm -rf "$work"; }
trap 'trap_cleanup; [[ -n $netns ]] && bash "$root/scripts/netns-lab.sh" down >/dev/null 2>&1' EXIT

cd "$root" || exit 1
t0=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "validate-sweep: sweep ($main_desc, $steps steps x $repeat runs), network $tag -> $main_json"
"$validate" "$main_scenario" --runner "$runner" --calibrate --steps "$steps" --repeat "$repeat" \
  "${netns_args[@]}" --out "$main_json" --markdown "$work/sweep.md" || exit 1
t1=$SECONDS
if ((efficiency)); then
  echo "validate-sweep: $second_desc -> $eff_json"
  "$validate" "$second_scenario" --runner "$runner" --calibrate "${second_args[@]}" \
    "${netns_args[@]}" --out "$eff_json" --markdown "$work/eff.md" || exit 1
fi
t2=$SECONDS
if [[ -n $third_scenario ]]; then
  echo "validate-sweep: $third_desc -> $third_json"
  "$validate" "$third_scenario" --runner "$runner" --calibrate --steps "$steps" --repeat "$repeat" \
    --out "$third_json" --markdown "$work/third.md" || exit 1
fi
t3=$SECONDS
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# The section: how it was made, then the tables.
{
  echo "<!-- validate-sweep BEGIN $tag -->"
  echo "## Sweep ($tag): $(date -u +%Y-%m-%dT%H:%MZ), host \`$host\`"
  echo
  echo "    bash scripts/validate-sweep.sh${netns:+ --netns $netns}$( [[ $runner == torch ]] && echo ' --runner torch')$( ((quick)) && echo ' --quick')$( ((efficiency)) || echo ' --skip-efficiency')" \
       "  # sweep $((t1 - t0)) s, $second_name $((t2 - t1)) s$( [[ -n $third_json ]] && echo ", third $((t3 - t2)) s"); load $load0 -> $load1"
  echo
  echo "Outputs: \`${main_json#"$root"/}\`$( ((efficiency)) && echo ", \`${eff_json#"$root"/}\`")$( [[ -n $third_json ]] && echo ", \`${third_json#"$root"/}\`")" \
       "(profiles beside them)."
  echo
  echo "### Prediction vs measurement"
  echo
  cat "$work/sweep.md"
  if ((efficiency)); then
    echo
    echo "### $second_title"
    echo
    cat "$work/eff.md"
  fi
  if [[ -n $third_json ]]; then
    echo
    echo "### $third_title"
    echo
    cat "$work/third.md"
  fi
  echo "<!-- validate-sweep END $tag -->"
} > "$work/section.md"

if [[ -n $out_dir ]]; then
  cp "$work/section.md" "$out_dir/VALIDATION-$tag.md"
  echo "validate-sweep: tables in $out_dir/VALIDATION-$tag.md"
else
  # The manifest's run ids for what this run wrote (a run without an id keeps its file only).
  runs=()
  if [[ $runner == torch ]]; then
    runs=(--run "torch-mlp=$main_json" --run "torch-deep=$third_json")
    ((efficiency)) && runs+=(--run "torch-gpt2=$eff_json")
  elif [[ -n $netns ]]; then
    runs=(--run "mlp-netns-$netns=$main_json")
  else
    runs=(--run "mlp-loopback=$main_json" --run "gpt2-exec=$third_json")
    ((efficiency)) && runs+=(--run "efficiency-loopback=$eff_json")
  fi
  python3 "$root/scripts/validation-report.py" "${runs[@]}" ||
    echo "validate-sweep: results/VALIDATION.md not regenerated (above); the runs are in results/" >&2
fi
echo "validate-sweep: done in $((t3 - t0)) s (sweep $((t1 - t0)) s, $second_name $((t2 - t1)) s$( [[ -n $third_json ]] && echo ", third $((t3 - t2)) s"))"
