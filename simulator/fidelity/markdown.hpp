// markdown.hpp: what the generated Markdown reports (results/published, results/FIDELITY.md)
// share.
//
//   md += "| " + markdown_cell("a | b\nc") + " |";   // "a \| b c"
#pragma once

#include <string>

namespace ddpsim::sim {

/// Text made safe for one cell of a Markdown table: '|' escaped, newlines turned into spaces.
std::string markdown_cell(const std::string& s);

}  // namespace ddpsim::sim
