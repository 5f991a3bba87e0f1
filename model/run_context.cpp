#include "model/run_context.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/version.hpp>
#include <chrono>
#include <ctime>

#ifndef DDPSIM_GIT_REVISION
#define DDPSIM_GIT_REVISION "unknown"
#endif

namespace ddpsim::model {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "unknown";
  return buf;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64] = {};
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

const char* git_revision() { return DDPSIM_GIT_REVISION; }

nlohmann::json run_context_json(const std::string& tool) {
  nlohmann::json c;
  c["tool"] = tool;
  c["version"] = DDPSIM_VERSION;
  c["git_revision"] = git_revision();
  c["host"] = host_name();
  c["date"] = utc_now();
  c["libraries"] = {
      {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                    NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
      {"boost", fmt::format("{}.{}.{}", BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000,
                            BOOST_VERSION % 100)},
      {"fmt",
       fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)}};
  return c;
}

}  // namespace ddpsim::model
