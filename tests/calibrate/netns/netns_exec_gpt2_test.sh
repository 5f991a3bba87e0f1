#!/usr/bin/env bash
# ctest netns.exec_gpt2_two_hosts: ddpsim-exec's GPT-2 with its two ranks in separate network
# namespaces (each one "host" behind a 1 Gbit/s shaped veth, started by netns-launch.sh with the
# torchrun variables as a multi-node launcher would) ends with the same parameters as the run
# whose ranks share this host's loopback. Exit 77 when not root or namespaces are not allowed.
#
#   netns_exec_gpt2_test.sh LAB_SCRIPT LAUNCH_SCRIPT EXEC_BIN SCENARIO CONFIG WORK_DIR
set -uo pipefail
[[ $# -eq 6 ]] || { echo "usage: $0 LAB LAUNCH EXEC SCENARIO CONFIG WORK_DIR" >&2; exit 2; }
lab=$1 launch=$2 exec_bin=$3 scenario=$4 config=$5 work=$6

# shellcheck source=lab_up.sh
source "$(dirname "${BASH_SOURCE[0]}")/lab_up.sh"
lab_up 1gbit

rm -rf "$work" && mkdir -p "$work" || exit 1
cp "$scenario" "$work/gpt2.json" && cp "$config" "$work/" || exit 1
"$exec_bin" "$work/gpt2.json" --nproc 2 --steps 2 --dump-params "$work/local.bin" > "$work/local.log" 2>&1 ||
  { cat "$work/local.log"; exit 1; }
bash "$launch" --nproc 2 --timeout-s 120 -- "$exec_bin" "$work/gpt2.json" --steps 2 \
  --dump-params "$work/netns.bin" > "$work/netns.log" 2>&1 || { cat "$work/netns.log"; exit 1; }
cat "$work/netns.log"
grep -q "ddp on 2 ranks" "$work/netns.log" || { echo "FAIL: no 2-rank report"; exit 1; }
if ! cmp -s "$work/local.bin" "$work/netns.bin"; then
  echo "FAIL: the namespaced run's parameters differ from the local run's"
  exit 1
fi
echo "ok: same parameters ($(stat -c %s "$work/netns.bin") bytes) across two namespaces"
