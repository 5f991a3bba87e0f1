// sweep_check: checks an all_reduce sweep (ddpsim-collectives --json) measured across the
// rate-limited namespaces of scripts/netns-lab.sh against the link's rate.
//
//   ddpsim_netns_sweep_check SWEEP.json RATE_BIT_PER_S MIN_BYTES LOW_FRACTION
//
// For every all_reduce row: wrong == 0. For every row with size_bytes >= MIN_BYTES:
//   LOW_FRACTION * RATE/8 <= busbw <= RATE/8   (bytes/s).
// Why the upper bound holds: a 2-rank ring all-reduce of S bytes makes each rank send S bytes
// (reduce-scatter S/2, all-gather S/2) over its own shaped veth end, so time >= S / (RATE/8)
// and busbw = algbw * 2(n-1)/n = algbw = S/time <= RATE/8. tbf's bucket lets at most `burst`
// bytes (RATE x 1 ms) pass above the rate, but tbf also counts 66 header bytes per 1448-byte
// TCP segment, so the payload rate is <= 0.956 * RATE/8 * (1 + burst/S) < RATE/8 for
// S >= 4 MiB (0.956 * 1.03 = 0.985). Loopback TCP without the lab reaches ~1 GB/s here: 8x over.
// The lower bound catches a lab that shapes too hard or a transport that stalls.
// Exit 0 when all checks pass, 1 when one fails (each failure printed), 2 on bad input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: ddpsim_netns_sweep_check SWEEP.json RATE_BIT_PER_S MIN_BYTES "
                 "LOW_FRACTION\n");
    return 2;
  }
  nlohmann::json sweep;
  double rate_bytes_per_s = 0, low_fraction = 0;
  long long min_bytes = 0;
  try {
    std::ifstream in(argv[1]);
    if (!in) throw std::runtime_error("cannot open");
    sweep = nlohmann::json::parse(in);
    rate_bytes_per_s = std::stod(argv[2]) / 8;
    min_bytes = std::stoll(argv[3]);
    low_fraction = std::stod(argv[4]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddpsim_netns_sweep_check: %s: %s\n", argv[1], e.what());
    return 2;
  }
  const auto* rows = sweep.contains("ops") && sweep["ops"].contains("all_reduce")
                         ? &sweep["ops"]["all_reduce"]["rows"]
                         : nullptr;
  if (!rows || !rows->is_array() || rows->empty()) {
    std::fprintf(stderr, "ddpsim_netns_sweep_check: %s: /ops/all_reduce/rows: expected rows\n",
                 argv[1]);
    return 2;
  }
  int failures = 0, banded = 0;
  const double low = low_fraction * rate_bytes_per_s, high = rate_bytes_per_s;
  for (const auto& row : *rows) {
    const auto size = row.at("size_bytes").get<long long>();
    const auto wrong = row.at("wrong").get<long long>();
    const double busbw = row.at("busbw_gbytes_per_s").get<double>() * 1e9;
    const bool in_band = size < min_bytes || (busbw >= low && busbw <= high);
    std::printf("%12lld B  busbw %8.2f MB/s  wrong %lld%s\n", size, busbw / 1e6, wrong,
                size < min_bytes ? "" : (in_band ? "  in band" : "  OUT OF BAND"));
    if (wrong != 0) ++failures;
    if (size >= min_bytes) {
      ++banded;
      if (!in_band) ++failures;
    }
  }
  std::printf("band [%.2f, %.2f] MB/s for sizes >= %lld B (rate %.2f MB/s)\n", low / 1e6,
              high / 1e6, min_bytes, rate_bytes_per_s / 1e6);
  if (banded == 0) {
    std::printf("FAIL: no row of at least %lld B\n", min_bytes);
    return 1;
  }
  std::printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
