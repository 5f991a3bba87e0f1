#include "calibrate/comm/rank.hpp"

#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "model/error.hpp"

namespace ddpsim::comm {
namespace {

int parse_int(const char* name, const char* value) {
  int out = 0;
  const char* end = value + std::char_traits<char>::length(value);
  auto [ptr, ec] = std::from_chars(value, end, out);
  if (ec != std::errc() || ptr != end || value == end) {
    throw Error(std::string("environment variable ") + name + ": expected an integer, got '" +
                value + "'");
  }
  return out;
}

}  // namespace

std::optional<RankInfo> rank_from_env(const std::function<const char*(const char*)>& getenv) {
  auto get_int = [&](const char* name, int fallback) {
    const char* v = getenv(name);
    return v ? parse_int(name, v) : fallback;
  };
  RankInfo info;
  std::string job_key;
  if (getenv("RANK")) {
    // torchrun: RANK and WORLD_SIZE always; LOCAL_* default to a single host.
    info.rank = get_int("RANK", 0);
    info.world_size = get_int("WORLD_SIZE", 1);
    info.local_rank = get_int("LOCAL_RANK", info.rank);
    info.local_world_size = get_int("LOCAL_WORLD_SIZE", info.world_size);
  } else if (getenv("OMPI_COMM_WORLD_RANK")) {
    info.rank = get_int("OMPI_COMM_WORLD_RANK", 0);
    info.world_size = get_int("OMPI_COMM_WORLD_SIZE", 1);
    info.local_rank = get_int("OMPI_COMM_WORLD_LOCAL_RANK", info.rank);
    info.local_world_size = get_int("OMPI_COMM_WORLD_LOCAL_SIZE", info.world_size);
    if (const char* job = getenv("OMPI_MCA_ess_base_jobid")) job_key = std::string("ompi-") + job;
  } else {
    return std::nullopt;
  }
  if (info.world_size < 1) throw Error("environment: WORLD_SIZE must be >= 1");
  if (info.rank < 0 || info.rank >= info.world_size) {
    throw Error("environment: rank " + std::to_string(info.rank) + " is outside [0, " +
                std::to_string(info.world_size) + ")");
  }
  if (info.local_world_size < 1 || info.local_rank < 0 ||
      info.local_rank >= info.local_world_size) {
    throw Error("environment: local rank " + std::to_string(info.local_rank) + " is outside [0, " +
                std::to_string(info.local_world_size) + ")");
  }
  if (const char* a = getenv("MASTER_ADDR"); a && *a) info.master_addr = a;
  info.master_port = get_int("MASTER_PORT", info.master_port);
  if (job_key.empty()) job_key = info.master_addr + "-" + std::to_string(info.master_port);

  if (const char* s = getenv("DDPSIM_STORE_DIR"); s && *s) {
    info.store_dir = s;
  } else {
    const char* tmp = getenv("TMPDIR");
    info.store_dir =
        (std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("ddpsim-store-" + job_key)).string();
  }
  // One host: every rank can use the master's address (loopback by default, a namespace's
  // veth address when set). Several hosts: each binds to its own name unless told.
  if (const char* b = getenv("DDPSIM_BIND_ADDR"); b && *b) {
    info.bind_addr = b;
  } else if (info.local_world_size == info.world_size) {
    info.bind_addr = info.master_addr;
  } else {
    info.bind_addr.clear();  // Gloo resolves the host name
  }
  return info;
}

std::optional<RankInfo> rank_from_env() {
  return rank_from_env([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace ddpsim::comm
