#!/usr/bin/env bash
# ctest netns.all_reduce_1gbit: two ranks in network namespaces joined by a veth pair shaped
# to 1 Gbit/s (tbf on both ends), a short Gloo all_reduce sweep between them, and the sweep
# checked against the shaped rate (sweep_check.cpp states the band and why). The lab is always
# torn down (trap), and also before starting, in case a killed run left one behind.
# Exit 77 (ctest SKIP_RETURN_CODE) when not root or when namespaces/veth/tbf are not allowed.
#
#   netns_allreduce_test.sh LAB_SCRIPT LAUNCH_SCRIPT COLLECTIVES_BIN CHECK_BIN WORK_DIR
set -uo pipefail
[[ $# -eq 5 ]] || { echo "usage: $0 LAB LAUNCH COLLECTIVES CHECK WORK_DIR" >&2; exit 2; }
lab=$1 launch=$2 collectives=$3 check=$4 work=$5
readonly rate=1gbit rate_bps=1000000000

# shellcheck source=lab_up.sh
source "$(dirname "${BASH_SOURCE[0]}")/lab_up.sh"
lab_up "$rate"

mkdir -p "$work"
out=$work/netns-all_reduce.json
rm -f "$out"
# 1, 4 and 16 MiB: ~1.3 s of traffic at 1 Gbit/s; out of place only; 2 warmup + 5 timed calls.
bash "$launch" --nproc 2 --timeout-s 60 -- "$collectives" --op all_reduce -b 1M -e 16M -f 4 \
  -w 2 -n 5 --no-in-place --timeout-s 20 --json "$out" || exit 1
# Busbw at >= 4 MiB within [0.5, 1.0] x 125 MB/s (the lower half is left to CPU contention on 2 shared cores); every row exact.
"$check" "$out" "$rate_bps" 4194304 0.5
