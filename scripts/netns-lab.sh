#!/usr/bin/env bash
# netns-lab.sh: a rate-limited network between ranks on one host, for collectives that cost
# what they cost on a real NIC (loopback TCP between two local ranks reaches ~1 GB/s, which
# hides communication). Needs root (network namespaces, veth, tc tbf).
#
#   bash scripts/netns-lab.sh probe            # can this machine do it? (namespaces, tbf, netem)
#   bash scripts/netns-lab.sh up 2 1gbit       # ranks 0..N-1 in ddpsim-ns0..N-1, 10.77.0.(K+1)
#   bash scripts/netns-lab.sh up 4 1gbit 1ms   # optional one-way delay: only where netem exists
#   bash scripts/netns-lab.sh status           # namespaces, addresses, qdiscs with counters
#   bash scripts/netns-lab.sh down             # removes everything it may have made; idempotent
#
# Topology. Rank K lives in namespace ddpsim-nsK with address 10.77.0.(K+1)/24 on device
# ddpsim-eK. With 2 ranks ddpsim-e0 and ddpsim-e1 are the two ends of one veth pair (a cable
# between two hosts). With 3 or more, every ddpsim-eK is paired with ddpsim-bK in a bridge
# namespace ddpsim-br whose bridge ddpsim-sw joins the legs (hosts on a switch). A bridge
# rather than a full mesh of pairs because it is N links instead of N(N-1)/2, one address per
# rank, and each rank's traffic shares one shaped link in each direction, as a NIC does.
#
# Shaping. A token-bucket filter (tbf) is the root qdisc on BOTH ends of every veth: the rank
# end shapes what the rank sends, the peer (or bridge) end what it receives, so each rank has
# RATE in each direction (full duplex). Parameters, derived from RATE (bits/s):
#   burst   = RATE x 1 ms / 8 bytes, at least 16 KiB (125 000 B at 1 Gbit/s). The bucket
#             depth: what may leave back-to-back above RATE after an idle period. It must hold
#             a few 1500-byte frames and GSO super-packets are split against it by tbf; 1 ms
#             keeps the burst error of a 4 MiB transfer at 125 KB / 4.19 MB = 3 %.
#   latency = 20 ms: the longest a packet may wait in the queue before tbf drops it, i.e. a
#             queue of RATE x 20 ms (2.5 MB at 1 Gbit/s), enough for TCP to keep the link
#             busy (a smaller queue drops during slow start and under-fills the link).
# tbf counts frames as the device sees them (Ethernet + IP + TCP headers, 66 B per 1448 B
# segment at MTU 1500), so TCP payload tops out at ~95.6 % of RATE (~119.5 MB/s at 1 Gbit/s).
# Latency emulation: netem is not built into every kernel (it is not on the build machine:
# "Specified qdisc kind is unknown"); `up` with a DELAY adds netem beneath tbf only where
# `probe` finds it, and otherwise says that the delay is skipped.
#
# Everything this script makes is named ddpsim-*; `down` removes only namespaces matching
# ddpsim-ns<digits>, ddpsim-br and ddpsim-probe, plus any stray ddpsim-* link left in the root
# namespace by an interrupted `up`. Deleting a namespace deletes the veth ends inside it, and a
# veth pair dies with either end.
set -uo pipefail

readonly PREFIX=ddpsim
readonly SUBNET=10.77.0
readonly BRIDGE_NS=${PREFIX}-br
readonly PROBE_NS=${PREFIX}-probe

die() { echo "netns-lab: $*" >&2; exit 2; }
say() { echo "netns-lab: $*"; }

usage() {
  echo "usage: netns-lab.sh probe | up N [RATE [DELAY]] | status | down" >&2
  grep '^#   bash scripts/netns-lab.sh' "${BASH_SOURCE[0]}" | sed 's/^#  //' >&2
  exit 2
}

need_root() {
  [[ $(id -u) -eq 0 ]] || { echo "netns-lab: needs root (network namespaces, tc)" >&2; exit 1; }
  command -v ip >/dev/null && command -v tc >/dev/null ||
    { echo "netns-lab: needs iproute2 (ip, tc)" >&2; exit 1; }
}

# Rate in tc's notation (bit, kbit, mbit, gbit; SI multiples as tc reads them) -> bits/s.
rate_bits() {
  local r=${1,,} num unit
  [[ $r =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "RATE: expected e.g. 1gbit, 100mbit or 500kbit, got '$1'"
  num=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]}
  case $unit in
    bit) echo "$num" ;;
    kbit) echo $((num * 1000)) ;;
    mbit) echo $((num * 1000000)) ;;
    gbit) echo $((num * 1000000000)) ;;
  esac
}

our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' |
    grep -E "^(${PREFIX}-ns[0-9]+|${BRIDGE_NS}|${PROBE_NS})$" || true
}

down() {
  need_root
  local ns link n=0
  for ns in $(our_namespaces); do
    ip netns pids "$ns" 2>/dev/null | while read -r pid; do
      # Processes still inside (a crashed run's ranks) would keep nothing alive, but they
      # would keep talking into a dead network: say so rather than kill what we did not start.
      echo "netns-lab: warning: process $pid is still in $ns" >&2
    done
    ip netns delete "$ns" && n=$((n + 1))
  done
  # Stray root-namespace ends of an interrupted `up` (veths are created directly inside the
  # namespaces, so normally there are none).
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
                grep -E "^${PREFIX}-(e|b)[0-9]+$|^${PREFIX}-sw$|^${PREFIX}-p[ab]$" || true); do
    ip link delete "$link" 2>/dev/null && n=$((n + 1))
  done
  say "down: removed $n namespace(s)/link(s)"
}

# tbf (and netem beneath it when asked and available) as root qdisc of DEV in NS.
shape() {
  local ns=$1 dev=$2 rate_bps=$3 burst=$4 delay=$5 netem=$6
  if [[ -n $delay && $netem == yes ]]; then
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 100000 ||
      return 1
    ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: \
      tbf rate "${rate_bps}bit" burst "$burst" latency 20ms || return 1
  else
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: \
      tbf rate "${rate_bps}bit" burst "$burst" latency 20ms || return 1
  fi
}

netem_available() {
  # Needs a throwaway device: try netem on a dummy veth in the probe namespace.
  ip netns add "$PROBE_NS" 2>/dev/null || return 1
  ip netns exec "$PROBE_NS" ip link add ${PREFIX}-pa type veth peer name ${PREFIX}-pb 2>/dev/null
  local ok=1
  ip netns exec "$PROBE_NS" tc qdisc add dev ${PREFIX}-pa root netem delay 1ms 2>/dev/null && ok=0
  ip netns delete "$PROBE_NS" 2>/dev/null
  return $ok
}

up() {
  need_root
  local n=${1:-} rate=${2:-1gbit} delay=${3:-}
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 200)) || die "N: expected 2..200 ranks, got '${n}'"
  [[ -z $delay || $delay =~ ^[0-9]+(us|ms)$ ]] || die "DELAY: expected e.g. 1ms or 200us, got '$delay'"
  [[ ${rate,,} =~ ^[0-9]+(bit|kbit|mbit|gbit)$ ]] ||
    die "RATE: expected e.g. 1gbit, 100mbit or 500kbit, got '$rate'"
  local rate_bps burst
  rate_bps=$(rate_bits "$rate")
  ((rate_bps > 0)) || die "RATE: must be positive, got '$rate'"
  burst=$((rate_bps / 8 / 1000))  # 1 ms at RATE
  ((burst < 16384)) && burst=16384

  if [[ -n $(our_namespaces) ]]; then
    say "up: an earlier lab exists; tearing it down first"
    down >/dev/null
  fi
  local netem=no
  if [[ -n $delay ]]; then
    if netem_available; then
      netem=yes
    else
      say "netem is not available on this kernel: delay $delay SKIPPED (bandwidth shaping only)"
    fi
  fi

  # On any failure: undo what was made, report, exit 1.
  trap 'echo "netns-lab: up failed; removing the partial lab" >&2; down >/dev/null 2>&1; exit 1' ERR
  set -E -e
  local k
  for ((k = 0; k < n; k++)); do
    ip netns add "${PREFIX}-ns$k"
    ip netns exec "${PREFIX}-ns$k" ip link set lo up
    # IPv4 only: no IPv6 neighbour discovery or router solicitations on the shaped links.
    ip netns exec "${PREFIX}-ns$k" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6' \
      2>/dev/null || true
  done
  if ((n == 2)); then
    ip link add ${PREFIX}-e0 netns ${PREFIX}-ns0 type veth peer name ${PREFIX}-e1 netns ${PREFIX}-ns1
    for k in 0 1; do
      shape "${PREFIX}-ns$k" "${PREFIX}-e$k" "$rate_bps" "$burst" "$delay" "$netem"
    done
  else
    ip netns add "$BRIDGE_NS"
    ip netns exec "$BRIDGE_NS" ip link add ${PREFIX}-sw type bridge
    ip netns exec "$BRIDGE_NS" ip link set ${PREFIX}-sw up
    for ((k = 0; k < n; k++)); do
      ip link add "${PREFIX}-e$k" netns "${PREFIX}-ns$k" type veth \
        peer name "${PREFIX}-b$k" netns "$BRIDGE_NS"
      ip netns exec "$BRIDGE_NS" ip link set "${PREFIX}-b$k" master ${PREFIX}-sw
      ip netns exec "$BRIDGE_NS" ip link set "${PREFIX}-b$k" up
      shape "${PREFIX}-ns$k" "${PREFIX}-e$k" "$rate_bps" "$burst" "$delay" "$netem"
      # Delay only once per direction of a path: on the rank ends, not again at the bridge.
      shape "$BRIDGE_NS" "${PREFIX}-b$k" "$rate_bps" "$burst" "" no
    done
  fi
  for ((k = 0; k < n; k++)); do
    ip netns exec "${PREFIX}-ns$k" ip addr add "$SUBNET.$((k + 1))/24" dev "${PREFIX}-e$k"
    ip netns exec "${PREFIX}-ns$k" ip link set "${PREFIX}-e$k" up
  done
  # Reachability, where ping exists: every other rank pings rank 0 once.
  if command -v ping >/dev/null; then
    for ((k = 1; k < n; k++)); do
      ip netns exec "${PREFIX}-ns$k" ping -c1 -W2 -q "$SUBNET.1" >/dev/null
    done
  fi
  set +e +E
  trap - ERR
  local extra=""
  [[ $netem == yes ]] && extra+=", netem delay $delay on the rank ends"
  ((n > 2)) && extra+=", bridge in $BRIDGE_NS"
  say "up: $n ranks in ${PREFIX}-ns0..$((n - 1)) at $SUBNET.1..$SUBNET.$n/24, tbf rate $rate" \
      "(${rate_bps} bit/s) burst ${burst} B latency 20ms on both ends of every link$extra"
}

status() {
  need_root
  local ns
  local list
  list=$(our_namespaces)
  [[ -n $list ]] || { say "status: no lab"; return 0; }
  for ns in $list; do
    echo "== $ns"
    ip netns exec "$ns" ip -br addr show | grep -v '^lo '
    ip netns exec "$ns" tc -s qdisc show | grep -A2 -E 'tbf|netem' | grep -v '^ *backlog'
  done
}

probe() {
  need_root
  local ok=0 msg
  if ! msg=$(ip netns add "$PROBE_NS" 2>&1); then
    echo "namespaces: no ($msg)"
    return 1
  fi
  echo "namespaces: yes"
  if msg=$(ip netns exec "$PROBE_NS" ip link add ${PREFIX}-pa type veth peer name ${PREFIX}-pb 2>&1); then
    echo "veth: yes"
    if msg=$(ip netns exec "$PROBE_NS" tc qdisc add dev ${PREFIX}-pa root tbf rate 1gbit \
             burst 125000 latency 20ms 2>&1); then
      echo "tbf: yes"
    else
      echo "tbf: no ($msg)"
      ok=1
    fi
    if msg=$(ip netns exec "$PROBE_NS" tc qdisc add dev ${PREFIX}-pb root netem delay 1ms 2>&1); then
      echo "netem: yes (delay can be added)"
    else
      echo "netem: no ($msg): latency emulation unavailable, bandwidth shaping only"
    fi
  else
    echo "veth: no ($msg)"
    ok=1
  fi
  ip netns delete "$PROBE_NS" 2>/dev/null
  return $ok
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  probe) probe ;;
  status) status ;;
  *) usage ;;
esac
