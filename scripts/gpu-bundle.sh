#!/usr/bin/env bash
# gpu-bundle.sh: pack what scripts/gpu-run.sh runs on a lent GPU machine into gpu-bundle.tar.xz.
#
#   bash scripts/gpu-bundle.sh [--build DIR]     # DIR (default build) configured with CUDA=ON
#
# The GPU machine has CUDA 13 (nvcc, cuBLAS, NCCL) and Python but not this project's Debian
# packages (OpenBLAS, Gloo, fmt, Google Benchmark) and no network, so the binaries are built here
# (sm_90 for the H200, cmake/DdpsimOptionalDeps.cmake) and travel with the shared libraries they
# need that are neither the C runtime nor CUDA's (those come from that machine: its driver must
# match its CUDA). Output: gpu-bundle.tar.xz in the repository root (git-ignored), to name in
# the device tool's `carry`. The manifest inside lists every file with its origin.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    *) echo "gpu-bundle.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bins=(
  "$build/simulator/ddpsim-calibrate"
  "$build/simulator/ddpsim"
  "$build/calibrate/comm/ddpsim-collectives"
  "$build/calibrate/ddpsim_calibrate_bench"
  "$build/tests/calibrate/ddpsim_calibrate_gpu_tests"
  "$build/simulator/ddpsim-exec"
  "$build/simulator/ddpsim-validate"
  "$build/tests/calibrate/exec/ddpsim_gpt2_cuda_tests"
)
# ddpsim_calibrate_gpu_tests exists only in a build with CUDA (DDPSIM_HAVE_CUDA); ddpsim-exec and
# ddpsim_gpt2_cuda_tests carry the CUDA backend only in such a build.
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "gpu-bundle.sh: $b not built (a CUDA build: cmake --build $build)" >&2; exit 2; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/gpu-bundle/bin" "$stage/gpu-bundle/lib"
manifest="$stage/gpu-bundle/MANIFEST"
# The binaries are whatever $build holds: rebuild it first (cmake --build) so that they are the
# working tree's; "-dirty" says the tree had changes, staged or not, when the bundle was made.
echo "# bundled $(date -u +%Y-%m-%dT%H:%M:%SZ) from $build, tree at git" \
  "$(git -C "$root" describe --always --dirty --abbrev=12)" > "$manifest"
for b in "${bins[@]}"; do
  cp "$b" "$stage/gpu-bundle/bin/"
  strip --strip-unneeded "$stage/gpu-bundle/bin/$(basename "$b")"
  echo "bin/$(basename "$b") <- $b" >> "$manifest"
done
# Shared libraries: everything ldd resolves except the C runtime and CUDA's own.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libnccl|libnvidia)'
for b in "${bins[@]}"; do
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if [[ "$name" =~ $skip ]]; then continue; fi
  cp -L "$path" "$stage/gpu-bundle/lib/$name"
  echo "lib/$name <- $path" >> "$manifest"
done
tar -C "$stage" -cJf "$root/gpu-bundle.tar.xz" gpu-bundle
size=$(du -m "$root/gpu-bundle.tar.xz" | cut -f1)
echo "wrote $root/gpu-bundle.tar.xz (${size} MiB; the device tool carries at most 64 MiB):"
cat "$manifest"
