#include "model/hardware/nccl_version.hpp"

#include <cctype>
#include <cstdlib>

namespace ddpsim::model {

std::optional<NcclVersion> parse_nccl_version(const std::string& text) {
  const std::string t = text.substr(0, text.find_first_of("-+"));
  NcclVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? t.find('.', at) : t.size();
    if (end == std::string::npos || end == at || end - at > 4) return std::nullopt;
    for (std::size_t j = at; j < end; ++j) {
      if (!std::isdigit(static_cast<unsigned char>(t[j]))) return std::nullopt;
    }
    *parts[i] = std::atoi(t.substr(at, end - at).c_str());
    at = end + 1;
  }
  return v;
}

bool nccl_version_known(const std::string& text) {
  const auto v = parse_nccl_version(text);
  return v && v->major == 2 && v->minor >= 18 && v->minor <= 30;
}

}  // namespace ddpsim::model
