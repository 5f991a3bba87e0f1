#!/usr/bin/env bash
# netns-launch.sh: start one rank per network namespace of scripts/netns-lab.sh, as torchrun
# would start them on N one-GPU hosts, so that every collective crosses a shaped veth link.
#
#   bash scripts/netns-lab.sh up 2 1gbit
#   bash calibrate/netns/netns-launch.sh --nproc 2 -- build/calibrate/comm/ddpsim-collectives \
#        --op all_reduce -b 1M -e 64M
#   bash calibrate/netns/netns-launch.sh --nproc 2 -- build/simulator/ddpsim-exec SCENARIO.json
#   bash scripts/netns-lab.sh down
#
# Rank K runs `ip netns exec ddpsim-nsK PROGRAM ARGS...` with the torchrun variables RANK=K,
# WORLD_SIZE=N, LOCAL_RANK=0, LOCAL_WORLD_SIZE=1 (each namespace is one host with one rank),
# MASTER_ADDR=10.77.0.1, MASTER_PORT=29500, DDPSIM_BIND_ADDR=10.77.0.(K+1) (the Gloo TCP device
# listens on the rank's own veth address), DDPSIM_STORE_DIR=a fresh directory (the Gloo
# FileStore; `ip netns exec` changes only the network namespace, so every rank sees the same
# directory and the rendezvous works across namespaces), OMP_NUM_THREADS=1 and
# OPENBLAS_NUM_THREADS=1 unless already set. Because the ranks find these variables, ddpsim's
# binaries run as the rank they are given instead of launching their own local ranks.
#
# Output lines are prefixed "[rank K] ". When a rank fails or --timeout-s passes, the others get
# SIGTERM, then SIGKILL after 3 s (each rank's whole process group). Exit status: 0 when every rank succeeded, else the first
# failed rank's status (124 on timeout); 2 on bad usage or a missing namespace.
set -uo pipefail

readonly PREFIX=ddpsim
readonly SUBNET=10.77.0

usage() {
  echo "usage: netns-launch.sh [--nproc N] [--timeout-s T] [--port P] -- PROGRAM [ARGS...]" >&2
  exit 2
}

nproc=2
timeout_s=600
port=29500
while (($#)); do
  case $1 in
    --nproc) nproc=${2:-}; shift 2 || usage ;;
    --timeout-s) timeout_s=${2:-}; shift 2 || usage ;;
    --port) port=${2:-}; shift 2 || usage ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
(($#)) || usage
[[ $nproc =~ ^[0-9]+$ ]] && ((nproc >= 1)) || { echo "netns-launch: --nproc: expected a positive integer, got '$nproc'" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 65535)) || { echo "netns-launch: --port: expected 1..65535, got '$port'" >&2; exit 2; }
[[ $timeout_s =~ ^[0-9]+$ ]] && ((timeout_s >= 1)) || { echo "netns-launch: --timeout-s: expected whole seconds >= 1, got '$timeout_s'" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "netns-launch: needs root (ip netns exec)" >&2; exit 2; }
for ((k = 0; k < nproc; k++)); do
  [[ -e /run/netns/${PREFIX}-ns$k ]] || {
    echo "netns-launch: namespace ${PREFIX}-ns$k is missing: run scripts/netns-lab.sh up $nproc RATE" >&2
    exit 2
  }
done

store=$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-netns-store.XXXXXX")
pids=()
# Processes of the ranks' groups that are still running (zombies awaiting `wait` do not count).
live_in_groups() {
  ps -eo pgid=,stat= | awk -v groups=" ${pids[*]} " \
    'index(groups, " " $1 " ") && $2 !~ /^Z/ { n++ } END { print n + 0 }'
}
cleanup() {
  local p
  # Each rank leads its own process group (setsid): signal the group, children included.
  local i
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
  for ((i = 0; i < 30 && $(live_in_groups) > 0; i++)); do sleep 0.1; done
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  rm -rf "$store"
}
trap 'cleanup; exit 130' INT TERM

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
for ((k = 0; k < nproc; k++)); do
  # setsid (which execs: a background job is no group leader) makes the rank a process group
  # leader; `ip netns exec` enters the namespace and execs the program: $! is the rank itself.
  RANK=$k WORLD_SIZE=$nproc LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=$SUBNET.1 \
    MASTER_PORT=$port DDPSIM_BIND_ADDR=$SUBNET.$((k + 1)) DDPSIM_STORE_DIR=$store \
    setsid ip netns exec "${PREFIX}-ns$k" "$@" \
    > >(sed -u "s/^/[rank $k] /") 2> >(sed -u "s/^/[rank $k] /" >&2) &
  pids+=($!)
done

# Wait for every rank; the first failure (or the deadline) stops the rest.
deadline=$((SECONDS + timeout_s))
rc=0
remaining=$nproc
declare -A done_rank=()
while ((remaining > 0)); do
  for ((k = 0; k < nproc; k++)); do
    [[ -n ${done_rank[$k]:-} ]] && continue
    if ! kill -0 "${pids[$k]}" 2>/dev/null; then
      wait "${pids[$k]}"
      status=$?
      done_rank[$k]=1
      remaining=$((remaining - 1))
      if ((status != 0 && rc == 0)); then
        rc=$status
        echo "netns-launch: rank $k exited with status $status; stopping the others" >&2
        cleanup
        wait 2>/dev/null
        exit "$rc"
      fi
    fi
  done
  if ((remaining > 0 && SECONDS >= deadline)); then
    echo "netns-launch: timeout after ${timeout_s} s; stopping the ranks" >&2
    cleanup
    wait 2>/dev/null
    exit 124
  fi
  ((remaining > 0)) && sleep 0.1
done
wait 2>/dev/null  # the output filters
rm -rf "$store"
exit 0
