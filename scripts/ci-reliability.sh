#!/usr/bin/env bash
# The reliability stage of CI (issue 8), run by .ci/run after the README's test command:
#
#   1. asan  ASan + UBSan build (clang, CMake preset `asan`) of the parsers, the simulator and the
#            CLI with their tests (no Gloo, OpenBLAS, CUDA or GUI: the collectives and the
#            executor are the TSan tree's), run with ctest. The fuzz targets are built in the
#            same tree: every object carries libFuzzer's
#            coverage hooks (-fsanitize=fuzzer-no-link) and only tests/fuzz links libFuzzer, so
#            one clang build serves both stages (a second tree would double the longest step).
#   2. fuzz  each libFuzzer target of tests/fuzz for DDPSIM_FUZZ_SECONDS (default 15 s, two at a
#            time on two cores: six targets take ~50 s) from the seed corpora. A crash, a leak,
#            an input running over 1 s (-timeout=1) or an escaped non-ddpsim exception fails it.
#   3. tsan  ThreadSanitizer build (preset `tsan`) of what starts threads: the collectives and
#            the DDP executor (ctest labels comm, exec: ranks are processes, each with Gloo's and
#            the reducer's threads) and the GUI models' background sweep runner (gui.models, Qt
#            offscreen).
#
# Zero reports: every sanitizer writes its reports to files under <build>/sanitizer-reports/
# (log_path), so a report fails the stage even where a test's own exit code would hide it (tests
# that expect exit code 2, tests judged by a regular expression, child rank processes). The only
# suppressions are for uninstrumented system libraries, in tests/sanitizers/*.supp.
#
#   bash scripts/ci-reliability.sh [asan|fuzz|tsan ...]   # default: all three, in that order
#
# Environment: DDPSIM_ASAN_DIR (build-asan), DDPSIM_TSAN_DIR (build-tsan), DDPSIM_FUZZ_SECONDS
# (15), DDPSIM_FUZZ_STATS (a file to write the per-target executions and coverage to, as
# Markdown rows; results/RELIABILITY.md records them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

stages=("$@")
((${#stages[@]})) || stages=(asan fuzz tsan)
for s in "${stages[@]}"; do
  case "$s" in asan|fuzz|tsan) ;; *) echo "usage: $0 [asan|fuzz|tsan ...]" >&2; exit 2 ;; esac
done

asan_dir="${DDPSIM_ASAN_DIR:-build-asan}"
tsan_dir="${DDPSIM_TSAN_DIR:-build-tsan}"
fuzz_seconds="${DDPSIM_FUZZ_SECONDS:-15}"
jobs="$(nproc)"
supp="$root/tests/sanitizers"

# Tests left out of the ASan run, by label, because they judge wall-clock time and a sanitizer
# slows the code 2-5x unevenly (the release build in `setup.sh test` runs them all):
#   calibration  times GEMMs and re-times them against the recorded profile (within 10%)
#   netns        checks measured bandwidth against a 1 Gbit/s shaped link
#   validate     compares a measured DDP step with a prediction from a profile
#   bench        benchmark smoke tests (not built here: DDPSIM_BUILD_BENCHMARKS=OFF)
#   fuzz         run separately below, for a bounded time each
#   format       clang-format over the sources: no compiled code of ours runs
#   torch        real PyTorch DDP runs driven by ddpsim-validate, like validate (the C++ they
#                reach is validate's own, which the release build runs; ~40 s saved)
#   largest      the four largest reliability inputs (30-70 s each under ASan); their 10^5-sized
#                siblings run the same code paths here (tests/reliability/CMakeLists.txt)
asan_exclude='^(calibration|netns|validate|bench|fuzz|format|torch|largest)$'
# What the TSan build compiles and runs: the targets behind the comm, exec and gui.models tests.
tsan_targets=(ddpsim_comm_tests ddpsim_comm_test_rank ddpsim-collectives ddpsim_exec_tests
              ddpsim-exec ddpsim_noise_scale_tests ddpsim_gui_models_tests)

# Options common to the stages. halt_on_error: the first report ends the process (UBSan is also
# compiled with -fno-sanitize-recover=all); log_path is set per stage.
asan_opts="halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1"
asan_opts+=":detect_stack_use_after_return=0:suppressions=$supp/asan.supp"
lsan_opts="suppressions=$supp/lsan.supp:print_suppressions=0"
ubsan_opts="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
tsan_opts="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"

# File:line in reports: llvm-symbolizer (package llvm-14) under either of its names.
symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [[ -n $symbolizer ]]; then
  for v in asan_opts lsan_opts ubsan_opts tsan_opts; do
    printf -v "$v" '%s' "${!v}:external_symbolizer_path=$symbolizer"
  done
fi

timings=()
failed=()
stamp() { timings+=("$(printf '%-28s %4d s' "$1" "$2")"); }

# Prints the reports under $1 and returns 1 if there is any.
# A file whose only lines are the runtime's "Can't read from symbolizer" warning holds no finding:
# the llvm-symbolizer child died while TSan symbolized a report, which on the executor's error
# paths is the launcher's SIGTERM to the ranks' process group (the suppressed Gloo race in
# tests/sanitizers/tsan.supp); the report itself, if not suppressed, is in the same file.
symbolizer_only='^==[0-9]+==WARNING: Can.t read from symbolizer at fd [0-9]+$'
check_reports() {
  local dir=$1 n f
  for f in "$dir"/*; do
    [[ -f $f ]] || continue
    if ! grep -qvE "$symbolizer_only" "$f"; then
      echo "ci-reliability: $(basename "$f"): the symbolizer was stopped mid-report, no finding"
      rm -f "$f"
    fi
  done
  n=$(find "$dir" -type f | wc -l)
  if ((n)); then
    echo "ci-reliability: $n sanitizer report file(s) in $dir:" >&2
    find "$dir" -type f -print0 | xargs -0 -n1 sh -c 'echo "== $0"; head -c 20000 "$0"' >&2
    return 1
  fi
  echo "ci-reliability: no sanitizer reports in $dir"
}

fresh_reports() {
  rm -rf "$1"
  mkdir -p "$1"
}

asan_env() {
  local reports=$1
  export ASAN_OPTIONS="$asan_opts:log_path=$reports/asan"
  export LSAN_OPTIONS="$lsan_opts:log_path=$reports/lsan"
  export UBSAN_OPTIONS="$ubsan_opts:log_path=$reports/ubsan"
}

configure_asan() {
  [[ -f $asan_dir/build.ninja ]] && [[ ${asan_configured:-} == 1 ]] && return 0
  local t0=$SECONDS
  cmake --preset asan -B "$asan_dir" -DDDPSIM_FUZZ_SECONDS="$fuzz_seconds" >/dev/null || return 1
  cmake --build "$asan_dir" -j "$jobs" || return 1
  stamp "asan+fuzz: configure, build" $((SECONDS - t0))
  asan_configured=1
}

for stage in "${stages[@]}"; do
  case "$stage" in
    asan)
      echo "== ci-reliability: ASan + UBSan build and test suite ($asan_dir)"
      if ! configure_asan; then failed+=("asan build"); continue; fi
      reports="$root/$asan_dir/sanitizer-reports/tests"
      fresh_reports "$reports"
      t0=$SECONDS
      ok=1
      (asan_env "$reports"
       ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -LE "$asan_exclude") || ok=0
      check_reports "$reports" || ok=0
      stamp "asan: ctest" $((SECONDS - t0))
      ((ok)) || failed+=("asan tests")
      ;;
    fuzz)
      echo "== ci-reliability: libFuzzer targets, ${fuzz_seconds} s each ($asan_dir)"
      if ! configure_asan; then failed+=("fuzz build"); continue; fi
      t0=$SECONDS
      ok=1
      # libFuzzer prints its own crash reports and saves the input (artifact_prefix); log_path
      # is not set here so that ctest shows them.
      (export ASAN_OPTIONS="$asan_opts" LSAN_OPTIONS="$lsan_opts" UBSAN_OPTIONS="$ubsan_opts"
       ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L '^fuzz$') || ok=0
      stamp "fuzz: ${fuzz_seconds} s per target" $((SECONDS - t0))
      ((ok)) || failed+=("fuzz")
      # Per target: executions (libFuzzer's final stats) and coverage of the last status line.
      stats=$(awk '
        /^[0-9]+\/[0-9]+ Testing: fuzz\./ { sub(/.*Testing: fuzz\./, ""); t = $0 }
        t != "" && /stat::number_of_executed_units:/ { runs[t] = $2 }
        t != "" && / cov: [0-9]+ ft: [0-9]+/ {
          for (i = 1; i <= NF; i++) { if ($i == "cov:") cov[t] = $(i+1); if ($i == "ft:") ft[t] = $(i+1);
                                      if ($i == "corp:") { c = $(i+1); sub(/\/.*/, "", c); corp[t] = c } }
        }
        END { for (k in runs) printf "| `fuzz_%s` | %d | %d | %d | %d |\n", k, runs[k], cov[k], ft[k], corp[k] }
      ' "$asan_dir/Testing/Temporary/LastTest.log" | sort)
      echo "| Target | Executions | cov | ft | Corpus |"
      echo "|---|---|---|---|---|"
      echo "$stats"
      if [[ -n ${DDPSIM_FUZZ_STATS:-} ]]; then printf '%s\n' "$stats" >"$DDPSIM_FUZZ_STATS"; fi
      ;;
    tsan)
      echo "== ci-reliability: ThreadSanitizer build of the executor, comm and GUI models ($tsan_dir)"
      t0=$SECONDS
      if ! { cmake --preset tsan -B "$tsan_dir" >/dev/null &&
             cmake --build "$tsan_dir" -j "$jobs" --target "${tsan_targets[@]}"; }; then
        failed+=("tsan build")
        continue
      fi
      stamp "tsan: configure, build" $((SECONDS - t0))
      reports="$root/$tsan_dir/sanitizer-reports/tests"
      fresh_reports "$reports"
      t0=$SECONDS
      ok=1
      (export TSAN_OPTIONS="$tsan_opts:log_path=$reports/tsan" QT_QPA_PLATFORM=offscreen
       ctest --test-dir "$tsan_dir" --output-on-failure -j "$jobs" -L '^(comm|exec)$' &&
         ctest --test-dir "$tsan_dir" --output-on-failure -R '^gui\.models$' --no-tests=error) ||
        ok=0
      check_reports "$reports" || ok=0
      stamp "tsan: ctest" $((SECONDS - t0))
      ((ok)) || failed+=("tsan tests")
      ;;
  esac
done

echo "== ci-reliability: stage times"
printf '  %s\n' "${timings[@]}"
if ((${#failed[@]})); then
  echo "ci-reliability: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "ci-reliability: all stages passed"
