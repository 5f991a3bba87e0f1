#!/usr/bin/env bash
# ctest netns.validate_bucket_choice: ddpsim-validate with its executor runs inside the 1 Gbit/s
# namespace lab (two ranks behind a tbf-shaped veth pair), two bucket caps x 2 repetitions of
# 3 steps, predicted on the hand-written tiny profile (no calibration, to stay short); checks
# the bucket_choice block (per cap median step and its 95% CI, measured best set, predicted best
# in it) and the network note. No timing assertion. The lab is always torn down (trap).
# Exit 77 (ctest SKIP_RETURN_CODE) when not root or when namespaces/veth/tbf are not allowed.
#
#   netns_validate_test.sh LAB LAUNCH VALIDATE CHECK_SWEEP_CMAKE SCENARIO PROFILE WORK_DIR
set -uo pipefail
[[ $# -eq 7 ]] || { echo "usage: $0 LAB LAUNCH VALIDATE CHECK SCENARIO PROFILE WORK_DIR" >&2; exit 2; }
lab=$1 launch=$2 validate=$3 check=$4 scenario=$5 profile=$6 work=$7

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIPPED: needs root for network namespaces and tc"
  exit 77
fi
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIPPED: iproute2 (ip, tc) is not installed"
  exit 77
fi
if ! probe=$(bash "$lab" probe 2>&1); then
  echo "$probe"
  echo "SKIPPED: network namespaces, veth or tbf are not allowed here"
  exit 77
fi

trap 'bash "$lab" down' EXIT
trap 'exit 1' INT TERM
bash "$lab" down
bash "$lab" up 2 1gbit || exit 1

mkdir -p "$work"
doc=$work/netns-validate.json
md=$work/netns-validate.md
rm -f "$doc" "$md"
"$validate" "$scenario" --profile "$profile" --steps 3 --repeat 2 --netns-launch "$launch" \
  --out "$doc" --markdown "$md" || exit 1
grep -q '"network namespaces' "$doc" || { echo "no network note in $doc" >&2; exit 1; }
cmake -DDOC="$doc" -DMD="$md" -DPOINTS=2 -DGROUPS=1 -P "$check" || exit 1
echo "netns validate: OK"
