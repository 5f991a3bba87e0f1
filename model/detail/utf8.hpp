// utf8.hpp: the one UTF-8 check behind ddpsim's terminal escaping (model/error.cpp printable /
// one_line) and the interrupt handler's line (model/interrupt.cpp), which may not allocate.
//
//   utf8_sequence_length("\xc3\xa9", 2);   // 2 (U+00E9)
//   utf8_sequence_length("\xc0\x80", 2);   // 0 (overlong)
#pragma once

#include <cstddef>

namespace ddpsim::detail {

/// Length (2-4) of the valid UTF-8 sequence at `p` (RFC 3629: no overlong forms, no surrogates,
/// at most U+10FFFF; `n` bytes readable), or 0 when `p` does not start one. Pure and
/// async-signal-safe.
std::size_t utf8_sequence_length(const char* p, std::size_t n);

}  // namespace ddpsim::detail
