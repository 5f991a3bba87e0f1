#!/usr/bin/env bash
# One entry point for people and CI: install what is missing (Debian 12, as root), configure,
# build, then either run the main job or the whole test suite.
#
#   bash scripts/setup.sh run    # scaling table for the default scenario -> results/
#   bash scripts/setup.sh test   # every test (ctest), including golden, CLI, docs and format
#   bash scripts/setup.sh build  # install + build only
#
# DDPSIM_BUILD_DIR (default: build) chooses the build folder; extra CMake options can be given
# in DDPSIM_CMAKE_ARGS (e.g. "-DDDPSIM_WITH_CUDA=OFF").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode="${1:-run}"
case "$mode" in run|test|build) ;; *) echo "usage: $0 run|test|build" >&2; exit 2 ;; esac

packages=(cmake ninja-build g++ pkg-config nlohmann-json3-dev libboost-graph-dev libcli11-dev
          libfmt-dev zlib1g-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev clang-format
          # calibration and executor: CPU GEMMs, CPU collectives, an optional launcher, namespaces
          libopenblas-dev libgloo-dev openmpi-bin libopenmpi-dev iproute2
          # the Python package of the run API (python/): headers of Python and pybind11; venv
          # (with Debian's pip) for `pip install .` into a venv, offline (README, "Python API")
          python3-dev pybind11-dev python3-venv
          # real PyTorch (CPU, gloo) for `ddpsim validate --runner torch` and the exporter's tests
          python3-torch
          # GUI: Qt 6 Widgets + Charts + SVG export, an X server for screenshots. Qt6Charts'
          # CMake package needs Qt6OpenGL's, which --no-install-recommends leaves out: without
          # libqt6opengl6-dev the GUI silently configures OFF (and CI's TSan stage cannot build it)
          qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev xvfb xauth
          # CI's reliability stage (scripts/ci-reliability.sh): clang 14, its sanitizer and
          # libFuzzer runtimes (only recommended by clang, so named), llvm-symbolizer for reports
          clang libclang-rt-14-dev llvm-14)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then sudo_cmd=(); elif command -v sudo >/dev/null; then sudo_cmd=(sudo);
  else echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

build="${DDPSIM_BUILD_DIR:-build}"
# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${DDPSIM_CMAKE_ARGS:-}
if [[ $mode == run ]]; then
  cmake --build "$build" -j "$(nproc)" --target ddpsim  # the main job needs only the CLI
else
  cmake --build "$build" -j "$(nproc)"
fi

case "$mode" in
  run)
    "$build/simulator/ddpsim" predict scenarios/default.json --out results/default-scaling.json
    ;;
  test)
    ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
    ;;
  build) ;;
esac
