// One escaping rule for every generated Markdown table.
#include "simulator/fidelity/markdown.hpp"

namespace ddpsim::sim {

std::string markdown_cell(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace ddpsim::sim
