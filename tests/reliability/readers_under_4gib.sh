#!/bin/sh
# Every reader of a file a user hands in, under a 4 GiB address-space limit and 60 s (issue 20):
# a 2 GiB file (sparse: no disk is used), a file of 1 GiB - 1 zero bytes (sparse) and a 1.2 MB
# gzip stream that inflates to 1.1 GiB of spaces. Each must be refused with exit code 2 and one
# line on stderr: by its size before it is read, at its first NUL byte, or when the inflated
# text passes 1 GiB (model/trace_file.hpp read_measurement_text); the Kineto reader streams, and
# refuses 64 MiB without a JSON separator (TraceFile::limit_json_runs).
#
#   readers_under_4gib.sh DDPSIM CALIBRATE VALIDATE WORK DATA EXAMPLES
#   (CALIBRATE, VALIDATE: - when not built; DATA: tests/data; EXAMPLES: scenarios/examples)
set -u
ddpsim=$1 calibrate=$2 validate=$3 work=$4 data=$5 examples=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
truncate -s 2G big.json && truncate -s 1073741823 zeros.json || exit 1
head -c 1181116006 /dev/zero | tr '\0' ' ' | gzip -1 > spaces.json.gz || exit 1

failed=0
# check NAME COMMAND...: exit code 2, one line on stderr, within the limits.
check() {
  name=$1
  shift
  start=$(date +%s)
  (ulimit -v 4194304 && exec timeout 60 "$@") > out.txt 2> err.txt
  rc=$?
  lines=$(wc -l < err.txt)
  took=$(($(date +%s) - start))
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL $name: exit $rc, $lines stderr line(s) after $took s: $(head -c 400 err.txt)"
    failed=1
  else
    echo "ok   $name ($took s): $(head -c 200 err.txt)"
  fi
}

# Every reader on the first two. The inflated one takes ~10 s per reader: the readers that share
# read_measurement_text are represented by the scenario and the nccl-tests log, the streaming
# Kineto reader by import trace.
for f in big.json zeros.json; do
  for key in hf_config file; do
    printf '{"model": {"%s": "%s"}, "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8}, "training": {"per_gpu_batch": 4}}\n' \
      "$key" "$f" > "model-$key-$f.scenario"
  done
  for key in file profile; do
    printf '{"model": {"preset": "gpt2-xl"}, "hardware": {"%s": "%s"}, "cluster": {"gpus": 8}, "training": {"per_gpu_batch": 4}}\n' \
      "$key" "$f" > "hardware-$key-$f.scenario"
  done
  check "scenario $f" "$ddpsim" predict "$f"
  check "plan $f" "$ddpsim" plan "$f"
  check "lr $f" "$ddpsim" lr "$f"
  check "model.hf_config $f" "$ddpsim" predict "model-hf_config-$f.scenario"
  check "model.file $f" "$ddpsim" predict "model-file-$f.scenario"
  check "hardware.file $f" "$ddpsim" predict "hardware-file-$f.scenario"
  check "hardware.profile $f" "$ddpsim" predict "hardware-profile-$f.scenario"
  check "import deepspeed $f" "$ddpsim" import deepspeed "$f" --gpus 8
  check "import deepspeed --scenario $f" "$ddpsim" import deepspeed \
    "$examples/imports/ds_config_zero2.json" --scenario "$f" --gpus 8
  check "import torch $f" "$ddpsim" import torch "$f"
  check "import trace $f" "$ddpsim" import trace "$f"
  if [ "$calibrate" != - ]; then
    check "calibrate import nccl-tests $f" "$calibrate" import nccl-tests "$f"
    check "calibrate import kineto $f" "$calibrate" import kineto "$f"
  fi
  if [ "$validate" != - ]; then
    check "validate $f" "$validate" "$f"
    check "validate --trace $f" "$validate" "$data/exec/mlp-small.json" --trace "$f"
  fi
done
f=spaces.json.gz
check "scenario $f" "$ddpsim" predict "$f"
check "import trace $f" "$ddpsim" import trace "$f"
if [ "$calibrate" != - ]; then
  check "calibrate import nccl-tests $f" "$calibrate" import nccl-tests "$f"
fi
rm -f big.json zeros.json spaces.json.gz
exit $failed
