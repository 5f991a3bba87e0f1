#include "calibrate/comm/communicator.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "model/error.hpp"

namespace ddpsim::comm {

Communicator::~Communicator() = default;

model::CollectiveOp op_from_name(std::string_view name) {
  if (const auto op = model::parse_collective_op(std::string(name))) return *op;
  throw Error("unknown collective '" + std::string(name) +
              "' (expected all_reduce, reduce_scatter, all_gather or broadcast)");
}

std::uint16_t float_to_half(float x, HalfType t) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  if (t == HalfType::kBFloat16) {
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
    // Round to nearest even on the 16 dropped bits.
    const std::uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return static_cast<std::uint16_t>((f + rounding) >> 16);
  }
  const std::uint16_t sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: inf
  if (abs < 0x38800000u) {
    // Subnormal half (|x| < 2^-14): value = m * 2^-24; let the FPU round to nearest even.
    const float m = std::bit_cast<float>(abs) * 16777216.0f;  // * 2^24, exact
    return sign | static_cast<std::uint16_t>(std::nearbyint(m));
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
  const std::uint32_t rebiased = abs - (112u << 23);
  const std::uint32_t rounding = 0xfffu + ((rebiased >> 13) & 1u);
  return sign | static_cast<std::uint16_t>((rebiased + rounding) >> 13);
}

float half_to_float(std::uint16_t h, HalfType t) {
  if (t == HalfType::kBFloat16) return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

}  // namespace ddpsim::comm
