#!/usr/bin/env bash
# gpu-run.sh: everything that needs the GPU, in one command, for a lent GPU machine (an H200).
#
# Here, first (a CUDA build of the current tree, then the bundle; see scripts/gpu-bundle.sh):
#   cmake --build build && bash scripts/gpu-bundle.sh
# Then with the device tool, from the repository root:
#   run(command="bash scripts/gpu-run.sh", carry=["gpu-bundle.tar.xz"], timeout_s=540)
# and copy what comes back (files_at) into results/gpu/. On a machine without a GPU it runs too:
# every GPU step then reports that it found no device (a dry run of the script itself).
#
# Steps (each logged; a failing step is reported and the next one still runs):
#  1. nvidia-smi: the device, driver, clocks.
#  2. The GPU unit tests (ddpsim_calibrate_gpu_tests: cuBLAS GEMM plausibility, kernels, device
#     info), gtest JSON.
#  3. ddpsim calibrate --backend cuda without a scenario: the grid, bf16 squares up to 8192^3
#     (the dense peak), the memory-bound kernels and the device copy.
#  4. The same for a scenario's GEMMs (default scenarios/examples/llama-2-7b-hgx-h200.json:
#     Llama-2-7B at 4096 tokens, bf16 GEMMs of 4096 x 4096..11008 and attention).
#  5. ddpsim-calibrate gpu-criteria on both profiles: issue 5's goals (bf16 GEMMs >= 80% of the
#     largest square's rate, CUDA kernels >= 85% of the device copy).
#  6. The calibration kernels' Google Benchmark microbenchmarks (cuBLAS, device copy) as JSON.
# Output ($OUT, else results/gpu/run-<date>): run.log, nvidia-smi.csv, gpu-tests.json,
# profile-h200-grid.json, profile-h200-scenario.json, gpu-criteria.md, bench.json (7 files: the
# device tool returns at most 8).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scenario="${DDPSIM_GPU_SCENARIO:-$root/scenarios/examples/llama-2-7b-hgx-h200.json}"
out="${OUT:-$root/results/gpu/run-$(date -u +%Y%m%d-%H%M)}"
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
echo "# gpu-run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), out $out"

bundle="$root/gpu-bundle.tar.xz"
[ -f "$bundle" ] || { echo "gpu-run.sh: $bundle missing (bash scripts/gpu-bundle.sh here, then carry it)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle"
B="$work/gpu-bundle"
cat "$B/MANIFEST"

# CUDA's libraries from this machine (toolkit directories, else the Python wheels' copies).
dirs=()
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  found=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64; do
    if [ -e "$d/$lib" ]; then found="$d"; break; fi
  done
  if [ -z "$found" ]; then
    sp=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
    # shellcheck disable=SC2086
    hit=$(find $sp /usr/local /opt -name "$lib" 2>/dev/null | head -1)
    [ -n "$hit" ] && found=$(dirname "$hit")
  fi
  if [ -n "$found" ]; then
    echo "$lib: $found"
    dirs+=("$found")
  else
    echo "$lib: NOT FOUND on this machine"
  fi
done
ldpath="$B/lib"
for d in "${dirs[@]}"; do ldpath="$ldpath:$d"; done
export LD_LIBRARY_PATH="$ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPENBLAS_NUM_THREADS=1
for b in "$B"/bin/*; do
  missing=$(ldd "$b" 2>&1 | grep "not found" || true)
  [ -z "$missing" ] || echo "$(basename "$b"): unresolved libraries: $missing"
done

failed=()
step() {  # name command...
  local name="$1"
  shift
  echo
  echo "## $name: $*"
  local t0=$SECONDS
  "$@"
  local rc=$?
  echo "## $name: exit $rc after $((SECONDS - t0)) s"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

step nvidia-smi bash -c "set -o pipefail; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv | tee '$out/nvidia-smi.csv'"
step gpu-tests "$B/bin/ddpsim_calibrate_gpu_tests" "--gtest_output=json:$out/gpu-tests.json"
step calibrate-grid "$B/bin/ddpsim-calibrate" --backend cuda --nproc 1 --no-collectives \
  --out "$out/profile-h200-grid.json"
step plan-scenario "$B/bin/ddpsim-calibrate" --backend cuda --plan --scenario "$scenario"
step calibrate-scenario "$B/bin/ddpsim-calibrate" --backend cuda --nproc 1 --no-collectives \
  --scenario "$scenario" --out "$out/profile-h200-scenario.json"
step gpu-criteria bash -c "set -o pipefail; '$B/bin/ddpsim-calibrate' gpu-criteria '$out/profile-h200-grid.json' '$out/profile-h200-scenario.json' | tee '$out/gpu-criteria.md'"
step bench "$B/bin/ddpsim_calibrate_bench" "--benchmark_filter=Cublas|DeviceCopy" \
  "--benchmark_out=$out/bench.json" --benchmark_out_format=json

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "# gpu-run.sh: every step passed"
else
  echo "# gpu-run.sh: failed steps: ${failed[*]}"
fi
ls -la "$out"
[ ${#failed[@]} -eq 0 ]
