# lab_up.sh: sourced by the netns tests: skips (exit 77, ctest's SKIP_RETURN_CODE) unless this
# runs as root with iproute2 and the kernel allows namespaces, veth and tbf; then brings the lab
# of scripts/netns-lab.sh up for 2 ranks at RATE, torn down on every exit (also before starting,
# in case a killed run left one behind).
#
#   lab=.../scripts/netns-lab.sh; lab_up 1gbit
lab_up() {
  local rate=$1 probe
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
  echo "$probe"
  trap 'bash "$lab" down' EXIT
  trap 'exit 1' INT TERM
  bash "$lab" down
  bash "$lab" up 2 "$rate" || exit 1
}
