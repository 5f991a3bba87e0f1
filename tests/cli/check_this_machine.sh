#!/bin/sh
# "preset": "this-machine" with results/profile-<host>.json measured on another machine
# (tests/data/profile/other-machine.json, CPU "Imaginary CPU 9000"): `ddpsim predict` refuses it
# with one line naming the profile file, the differing field and both values, exit 2, nothing
# on stdout; the same profile named in hardware.profile is used, with a note naming the
# difference.
#   check_this_machine.sh DDPSIM DATA_DIR WORK_DIR
set -u
ddpsim=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work/results" || exit 1
profile="$work/results/profile-$(hostname).json"
cp "$data/profile/other-machine.json" "$profile" || exit 1
scenario() {
  printf '{"model": {"mlp": {"widths": [64, 128, 32]}}, "hardware": %s, "cluster": {"gpus": 2},
 "training": {"per_gpu_batch": 8, "precision": "fp32"}}\n' "$1" > "$work/s.json"
}
fail() { echo "FAIL: $*"; exit 1; }

scenario '{"preset": "this-machine"}'
"$ddpsim" predict "$work/s.json" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/err"
[ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
[ ! -s "$work/out" ] || fail "stdout not empty: $(cat "$work/out")"
[ "$(wc -l < "$work/err")" -eq 1 ] || fail "stderr is not one line"
for s in "$profile" "/machine/cpu_model" '"Imaginary CPU 9000"' \
         "$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"; do
  grep -qF -- "$s" "$work/err" || fail "stderr lacks: $s"
done

scenario "{\"profile\": \"$profile\"}"
"$ddpsim" predict "$work/s.json" > "$work/out" 2> "$work/err" || fail "named profile: exit $?"
grep -qF "measured on another machine, used as named: cpu_model: profile \"Imaginary CPU 9000\"" \
  "$work/out" || fail "no note naming the difference: $(cat "$work/out")"
echo "ok"
