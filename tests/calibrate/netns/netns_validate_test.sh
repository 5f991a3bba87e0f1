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

# shellcheck source=lab_up.sh
source "$(dirname "${BASH_SOURCE[0]}")/lab_up.sh"
lab_up 1gbit

mkdir -p "$work"
doc=$work/netns-validate.json
md=$work/netns-validate.md
rm -f "$doc" "$md"
"$validate" "$scenario" --profile "$profile" --steps 3 --repeat 2 --netns-launch "$launch" \
  --out "$doc" --markdown "$md" || exit 1
grep -q '"network namespaces' "$doc" || { echo "no network note in $doc" >&2; exit 1; }
cmake -DDOC="$doc" -DMD="$md" -DPOINTS=2 -DGROUPS=1 -P "$check" || exit 1
echo "netns validate: OK"
