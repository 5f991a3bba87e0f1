#!/usr/bin/env bash
# gpu-run.sh: everything that needs the GPU, in one command, for a lent GPU machine (an H200).
#
# Here, first (a CUDA build of the current tree, then the bundle; see scripts/gpu-bundle.sh):
#   cmake --build build && bash scripts/gpu-bundle.sh
# Then with the device tool, from the repository root:
#   run(command="bash scripts/gpu-run.sh", carry=["gpu-bundle.tar.xz"], timeout_s=420)
# and copy what comes back (files_at) into results/gpu/. On a machine without a GPU it runs too:
# every GPU step then reports that it found no device (a dry run of the script itself).
#
# Steps (each logged, each under its own time limit; a failing step is reported and the next one
# still runs; a step that measured nothing, all tests skipped or a benchmark in error, fails):
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
#  7. The executor's CUDA backend against its CPU network (ddpsim_gpt2_cuda_tests: same loss,
#     gradients tensor by tensor; training runs; memory reported), output in run.log.
#  8. ddpsim validate --backend cuda on GPT-2 small (simulator/cli/validate/cuda-gpt2-small.json:
#     124M parameters, 8 x 1,024 tokens, amp_bf16, AdamW): ddpsim-exec --backend cuda trains it on
#     the GPU, both engines predict it on the grid profile of step 3 (else the hgx-h200 preset);
#     step, forward, backward, optimizer time and peak memory against the prediction.
#  9. The same scenario run by PyTorch itself (ddpsim validate --backend cuda --runner torch:
#     calibrate/torch/ddp_runner.py --device cuda under the machine's python3, GPT2LMHeadModel's
#     layers in torch.autocast bf16, AdamW(fused=True), phases timed with CUDA events), and the
#     torch.profiler trace of two further steps (Kineto, CUDA kernels) for `ddpsim validate --trace`.
# 10. PyTorch on a GEMM-bound MLP (simulator/cli/validate/cuda-mlp-4096.json: 268M parameters,
#     8,192 rows, the same precision and optimizer): what the GPT-2 residual owes to its other ops.
# 11. PyTorch on GPT-2 small with SDPA attention (cuda-gpt2-small-sdpa.json: what Hugging Face's
#     sdpa attention runs, PyTorch's flash kernel in bf16), ddpsim's fused-attention costs.
# 12. ddpsim validate --trace on step 9's Kineto trace (the prediction and its replay with the
#     traced per-layer GPU kernel times against PyTorch's own steps; the table in run.log), and
#     scripts/gpu-summary.py over the validations (one markdown table, in run.log).
# 13. The GPU census (scripts/gpu_census.py, issue 38 item 4; the machine's python3 with CUDA
#     torch, no bundle needed): sustained bf16/fp16 GEMMs over the reference models' shapes and
#     transposes after a 20 s warm-up, SDPA forward/backward, memory-bound ops by size, AdamW
#     implementations, reference-model training steps under torch.profiler beside their aten
#     capture; its own --budget-s (DDPSIM_CENSUS_BUDGET_S, default 240) under a step limit 60 s
#     longer. census.json; scripts/census-to-preset.py turns it into a preset's gemm_table.
# Output ($OUT, else results/gpu/run-<date>): run.log, profile-h200-grid.json, census.json,
# validation-cuda.json, validation-cuda-torch.json, validation-cuda-torch-mlp.json,
# validation-cuda-torch-sdpa.json, torch-gpt2-small.pt.trace.json.gz (8 files: the device tool
# returns at most 8; nvidia-smi's CSV, the GPU tests' report, gpu-criteria's table, the
# benchmarks' rows and the validations' tables are in run.log). The scenario's profile (step 4)
# is written to the work folder since the census came: gpu-criteria still reads it, and its
# table in run.log lists every one of its GEMMs with its rate; the census's GEMM sweep (the
# same Llama shapes and transposes among the others, sustained) supersedes the file.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scenario="${DDPSIM_GPU_SCENARIO:-$root/scenarios/examples/llama-2-7b-hgx-h200.json}"
out="${OUT:-$root/results/gpu/run-$(date -u +%Y%m%d-%H%M)}"
mkdir -p "$out"
# The bundled binaries live outside the checkout: point them at its presets (llama-2-7b, hgx-h200).
export DDPSIM_DATA_DIR="$root/scenarios"
export OPENBLAS_NUM_THREADS=1
# The bundled test binaries read their data from this checkout, not the build machine's.
export DDPSIM_TEST_DATA_DIR="$root/tests/data"
# The torch runner (calibrate.torch) from this checkout, under the machine's own python3 (the
# one with CUDA torch): the bundled binaries were built in another folder (model/process_env.hpp).
export DDPSIM_PYTHONPATH="$root:$root/python"
export DDPSIM_TORCH_PYTHON="${DDPSIM_TORCH_PYTHON:-python3}"

main() {
  echo "# gpu-run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), out $out"
  local bundle="$root/gpu-bundle.tar.xz"
  if [ ! -f "$bundle" ]; then
    echo "gpu-run.sh: $bundle missing (bash scripts/gpu-bundle.sh here, then carry it)"
    return 2
  fi
  work=$(mktemp -d)
  tar -C "$work" -xJf "$bundle" || return 2
  B="$work/gpu-bundle"
  cat "$B/MANIFEST"
  find_cuda_libs
  local b missing
  for b in "$B"/bin/*; do
    missing=$(ldd "$b" 2>&1 | grep "not found" || true)
    [ -z "$missing" ] || echo "$(basename "$b"): unresolved libraries: $missing"
  done

  failed=()
  step 15 nvidia-smi bash -c "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv > '$work/nvidia-smi.csv' && cat '$work/nvidia-smi.csv'"
  step 60 gpu-tests bash -c "'$B/bin/ddpsim_calibrate_gpu_tests' --gtest_output=json:'$work/gpu-tests.json' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ran=[t for s in d[\"testsuites\"] for t in s[\"testsuite\"] if t.get(\"result\")!=\"SKIPPED\"]; print(len(ran),\"of\",d[\"tests\"],\"tests ran\"); sys.exit(0 if ran else 1)' '$work/gpu-tests.json'"
  step 90 calibrate-grid "$B/bin/ddpsim-calibrate" --backend cuda --nproc 1 --no-collectives \
    --out "$out/profile-h200-grid.json"
  step 15 plan-scenario "$B/bin/ddpsim-calibrate" --backend cuda --plan --scenario "$scenario"
  step 150 calibrate-scenario "$B/bin/ddpsim-calibrate" --backend cuda --nproc 1 --no-collectives \
    --scenario "$scenario" --out "$work/profile-h200-scenario.json"
  # Judge whichever profiles exist (the criteria need the grid's peak).
  local profiles=()
  for b in "$out/profile-h200-grid.json" "$work/profile-h200-scenario.json"; do
    [ -f "$b" ] && profiles+=("$b")
  done
  step 15 gpu-criteria bash -c "'$B/bin/ddpsim-calibrate' gpu-criteria ${profiles[*]:-'(no profile)'} > '$work/gpu-criteria.md'; rc=\$?; cat '$work/gpu-criteria.md'; exit \$rc"
  step 45 bench bash -c "'$B/bin/ddpsim_calibrate_bench' '--benchmark_filter=Cublas|DeviceCopy' --benchmark_out='$work/bench.json' --benchmark_out_format=json && python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))[\"benchmarks\"]; bad=[x[\"name\"] for x in b if x.get(\"error_occurred\")]; print(\"benchmarks in error:\", bad or \"none\"); sys.exit(1 if bad or not b else 0)' '$work/bench.json'"

  step 60 gpt2-cuda-tests bash -c "'$B/bin/ddpsim_gpt2_cuda_tests' --gtest_output=json:'$work/gpt2-cuda-tests.json' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ran=[t for s in d[\"testsuites\"] for t in s[\"testsuite\"] if t.get(\"result\")!=\"SKIPPED\"]; print(len(ran),\"of\",d[\"tests\"],\"tests ran\"); sys.exit(0 if ran else 1)' '$work/gpt2-cuda-tests.json'"
  local vprofile=()
  [ -f "$out/profile-h200-grid.json" ] && vprofile=(--profile "$out/profile-h200-grid.json")
  step 120 validate-cuda "$B/bin/ddpsim-validate" "$root/simulator/cli/validate/cuda-gpt2-small.json" \
    --backend cuda "${vprofile[@]}" --out "$out/validation-cuda.json"
  step 150 validate-cuda-torch "$B/bin/ddpsim-validate" \
    "$root/simulator/cli/validate/cuda-gpt2-small.json" --backend cuda --runner torch \
    "${vprofile[@]}" --out "$out/validation-cuda-torch.json" \
    --torch-trace "$out/torch-gpt2-small.pt.trace.json.gz"
  step 120 validate-cuda-torch-mlp "$B/bin/ddpsim-validate" \
    "$root/simulator/cli/validate/cuda-mlp-4096.json" --backend cuda --runner torch \
    "${vprofile[@]}" --out "$out/validation-cuda-torch-mlp.json"
  step 120 validate-cuda-torch-sdpa "$B/bin/ddpsim-validate" \
    "$root/simulator/cli/validate/cuda-gpt2-small-sdpa.json" --backend cuda --runner torch \
    "${vprofile[@]}" --out "$out/validation-cuda-torch-sdpa.json"
  step 60 validate-trace "$B/bin/ddpsim-validate" "$root/simulator/cli/validate/cuda-gpt2-small.json" \
    --trace "$out/torch-gpt2-small.pt.trace.json.gz"
  step 15 summary python3 "$root/scripts/gpu-summary.py" "$out"
  local census_budget="${DDPSIM_CENSUS_BUDGET_S:-240}"
  step "$((${census_budget%.*} + 60))" census env PYTHONPATH="$root/python" \
    "$DDPSIM_TORCH_PYTHON" "$root/scripts/gpu_census.py" --out "$out/census.json" \
    --budget-s "$census_budget"

  echo
  if [ ${#failed[@]} -eq 0 ]; then
    echo "# gpu-run.sh: every step passed"
  else
    echo "# gpu-run.sh: failed steps: ${failed[*]}"
  fi
  ls -la "$out"
  rm -rf "$work"
  [ ${#failed[@]} -eq 0 ]
}

# CUDA's libraries from this machine (toolkit directories, else the Python wheels' copies).
find_cuda_libs() {
  local dirs=() lib d found sp hit
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
  local ldpath="$B/lib"
  for d in "${dirs[@]}"; do ldpath="$ldpath:$d"; done
  export LD_LIBRARY_PATH="$ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

step() {  # seconds name command...: run under a time limit, log, record a failure
  local limit="$1" name="$2"
  shift 2
  echo
  echo "## $name (limit ${limit} s): $*"
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@"
  local rc=$?
  echo "## $name: exit $rc after $((SECONDS - t0)) s$([ "$rc" -eq 124 ] && echo ' (time limit)')"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

# The log is written by tee in the foreground, so it is complete when this script returns.
main 2>&1 | tee "$out/run.log"
exit "${PIPESTATUS[0]}"
