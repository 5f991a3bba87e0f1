// units.hpp: unit conventions and the one place where units are converted.
//
// - Simulated time in the event engine is integer nanoseconds (SimTime). The analytic model
//   works in double seconds; the seam converts with to_sim_time / to_seconds.
// - Sizes are bytes (int64 or double), rates are bytes per second (double) inside the code.
// - JSON keys carry their unit: *_gbps is 1e9 bit/s in ONE direction; *_gbytes_per_s is 1e9
//   byte/s in one direction; *_gib is 2^30 bytes; *_us is microseconds; *_mb for bucket caps is
//   MiB (2^20 bytes), because that is what PyTorch's bucket_cap_mb means.
//   Vendor figures counted in both directions (NVLink "900 GB/s") are halved once, at the preset.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ddpsim {

using SimTime = std::chrono::nanoseconds;

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// 10^9 bit/s (one direction) -> bytes/s.
constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }
/// 10^9 byte/s -> bytes/s.
constexpr double gbytes_per_s_to_bytes_per_s(double gbs) { return gbs * 1e9; }
/// bytes/s -> 10^9 byte/s (the GB/s of nccl-tests' algbw and busbw columns).
constexpr double bytes_per_s_to_gbytes_per_s(double bps) { return bps / 1e9; }
constexpr double us_to_s(double us) { return us * 1e-6; }
constexpr double tflops_to_flops(double tf) { return tf * 1e12; }
/// PyTorch's bucket_cap_mb is MiB: int(bucket_cap_mb * 1024 * 1024).
inline std::int64_t bucket_cap_mb_to_bytes(double mb) {
  return static_cast<std::int64_t>(mb * 1024.0 * 1024.0);
}

inline SimTime to_sim_time(double seconds) {
  return SimTime(static_cast<std::int64_t>(std::llround(seconds * 1e9)));
}
inline double to_seconds(SimTime t) { return static_cast<double>(t.count()) * 1e-9; }

/// A size for people: bytes in the largest binary unit below 1024 of it, to two decimals at most
/// ("64 KiB", "1.5 MiB", "8 GiB").
inline std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", std::round(bytes * 100) / 100, units[u]);
  return buf;
}

}  // namespace ddpsim
