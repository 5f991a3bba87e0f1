// seeding.hpp: the executor's one seed mixer (SplitMix64, Steele, Lea and Flood 2014), so that
// any rank can make any sample and every network's initialisation from (seed, rank) alone.
#pragma once

#include <cstdint>

namespace ddpsim::exec {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace ddpsim::exec
