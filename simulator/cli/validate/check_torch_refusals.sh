#!/bin/sh
# ctest torch.refusals: `ddpsim-validate --runner torch` on what real PyTorch DDP cannot run here
# answers one line naming what and why, exits 2 (bad input) or 1 (no torch), and writes no file.
#   check_torch_refusals.sh VALIDATE DATA_DIR WORK_DIR PYTHON   (PYTHON: the one validate runs)
set -u
validate=$1 data=$2 work=$3 python=${4:-python3}
# SDPA attention is refused only by a torch without F.scaled_dot_product_attention (1.13).
if "$python" -c 'import sys, torch.nn.functional as F
sys.exit(1 if hasattr(F, "scaled_dot_product_attention") else 0)' 2>/dev/null; then
  no_sdpa=1
else
  no_sdpa=0
  echo "this torch has scaled_dot_product_attention: the sdpa refusals do not apply"
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
fails=0

# expect CODE PATTERN SCENARIO [env assignments...]  ($args: more ddpsim-validate arguments)
args=""
expect() {
  code=$1 pattern=$2 scenario=$3
  shift 3
  out="$work/out.json"
  # shellcheck disable=SC2086
  err=$(env "$@" "$validate" "$scenario" --runner torch $args --out "$out" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q "$pattern" ||
     [ -e "$out" ]; then
    echo "FAIL $scenario: exit $rc (want $code), $lines line(s), file $( [ -e "$out" ] && echo written || echo absent ):"
    echo "$err"
    fails=$((fails + 1))
  else
    echo "ok   exit $rc: $err"
  fi
}

# scenario NAME SED: a copy of torch-mlp.json (one sweep point) with one change.
scenario() {
  f="$work/$1.json"
  sed -e 's/\[true, false\]/[true]/' -e "$2" "$data/torch-mlp.json" > "$f"
  echo "$f"
}

expect 2 'strategy zero2.*DistributedDataParallel' \
  "$(scenario zero2 's/"strategy": "ddp"/"strategy": "zero2"/')"
expect 2 'comm_hook bf16.*gloo' "$(scenario bf16 's/"comm_hook": "fp16"/"comm_hook": "bf16"/')"
expect 2 'comm_hook powersgd' \
  "$(scenario powersgd 's/"comm_hook": "fp16"/"comm_hook": "powersgd:2"/')"
expect 2 'precision bf16' "$(scenario prec 's/"precision": "fp32"/"precision": "bf16"/')"
sed 's/"attention": "eager"/"attention": "sdpa"/' "$data/torch-gpt2-tiny.json" > "$work/sdpa.json"
cp "$data/torch-gpt2-tiny-config.json" "$work/"
[ "$no_sdpa" -eq 0 ] || expect 2 "attention 'sdpa'.*eager" "$work/sdpa.json"
expect 2 'torch runner builds "mlp" and "hf_config"' \
  "$(scenario layers 's/"mlp": {"widths": \[256, 512, 256\]}/"layers": [{"name": "a", "params": 1000, "fwd_flops_per_sample": 2000, "activation_bytes_per_sample": 40}]/')"

# On a GPU (--backend cuda): the runner refuses what it cannot run before it looks for a device,
# so these answer the same with or without one.
cp "$data/../../../simulator/cli/validate/cuda-gpt2-small-config.json" "$work/"
cuda_scenario() {
  f="$work/$1.json"
  sed -e "$2" "$data/../../../simulator/cli/validate/cuda-gpt2-small.json" > "$f"
  echo "$f"
}
args="--backend cuda"
expect 2 'precision amp_fp16.*amp_bf16' \
  "$(cuda_scenario cuda-fp16 's/"precision": "amp_bf16"/"precision": "amp_fp16"/')"
[ "$no_sdpa" -eq 0 ] || expect 2 "attention 'sdpa'.*eager" \
  "$(cuda_scenario cuda-sdpa 's/"attention": "eager"/"attention": "sdpa"/; s/"fused"/"foreach"/')"
expect 2 "attention 'flash'.*eager" \
  "$(cuda_scenario cuda-flash 's/"attention": "eager"/"attention": "flash"/; s/"fused"/"foreach"/')"
args="--backend cuda --min-seconds 1"  # one GPU run of exactly --steps
expect 2 'does not go with.*--min-seconds' "$(cuda_scenario cuda-min-seconds 's/x/x/')"
args="--min-seconds -1"
expect 2 'min-seconds' "$(scenario negative-seconds 's/x/x/')"
args=""

# No torch: a python3 that cannot import it (-S: no site-packages) — exit 1, what to install.
nosite="$work/python-without-torch"
printf '#!/bin/sh\nexec %s -S "$@"\n' "$(command -v python3)" > "$nosite" && chmod +x "$nosite"
expect 1 'PyTorch is not importable.*python3-torch' "$(scenario plain 's/x/x/')" \
  DDPSIM_TORCH_PYTHON="$nosite"

expect 1 'cannot run /nonexistent/python3' "$(scenario nopython 's/x/x/')" \
  DDPSIM_TORCH_PYTHON=/nonexistent/python3

[ "$fails" -eq 0 ] || { echo "$fails refusal check(s) failed"; exit 1; }
echo "all refusals one line, right exit code, no file"
