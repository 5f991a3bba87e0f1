#include "calibrate/comm/rank.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

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

// Slurm's tasks-per-node list ("2(x3),1": two tasks on each of three nodes, then one): the
// task count of node `node`, read run by run without expanding the list. The list comes from
// the environment, so it is bounded like a command-line value before it is used: every count
// and repeat a positive int, and at most one node per task of the step (`world_size`; every
// node of a step runs at least one of its tasks). "1(x2000000000)" once expanded to 2e9
// integers and aborted on std::bad_alloc; now it is refused in one line.
struct TasksOnNode {
  int tasks = 0;           // on the node asked for (0 when the list has fewer nodes)
  std::int64_t nodes = 0;  // nodes the list names
};

TasksOnNode tasks_on_node(const char* name, const std::string& v, int world_size, int node) {
  auto bad = [&](const std::string& what) {
    return Error(std::string("environment variable ") + name + ": expected a Slurm task list " +
                 what + ", got '" + v + "'");
  };
  const std::string like = "like 2(x3),1";
  auto positive = [&](const std::string& text, int& out) {
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, out);
    return !text.empty() && ec == std::errc() && ptr == last && out >= 1;
  };
  TasksOnNode r;
  std::size_t pos = 0;
  while (pos < v.size()) {
    std::size_t end = v.find(',', pos);
    if (end == std::string::npos) end = v.size();
    const std::string item = v.substr(pos, end - pos);
    const std::size_t paren = item.find("(x");
    int tasks = 0, repeat = 1;
    if (!positive(item.substr(0, paren), tasks)) throw bad(like);
    if (paren != std::string::npos) {
      const std::string rep = item.substr(paren + 2);
      if (rep.size() < 2 || rep.back() != ')' || !positive(rep.substr(0, rep.size() - 1), repeat)) {
        throw bad(like);
      }
    }
    if (node >= r.nodes && node < r.nodes + repeat) r.tasks = tasks;
    r.nodes += repeat;  // below world_size + INT_MAX here: no overflow in int64
    if (r.nodes > world_size) {
      throw bad("of at most " + std::to_string(world_size) +
                " nodes (one per task of the step, SLURM_STEP_NUM_TASKS or SLURM_NTASKS)");
    }
    pos = end + 1;
  }
  if (r.nodes == 0) throw bad(like);
  return r;
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
  } else if (getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID")) {
    // srun: one task per rank of the job step (SLURM_STEP_ID tells a task from the batch
    // script, which also sees SLURM_PROCID=0 and the job's SLURM_NTASKS).
    info.rank = get_int("SLURM_PROCID", 0);
    info.world_size = get_int("SLURM_STEP_NUM_TASKS", get_int("SLURM_NTASKS", 1));
    info.local_rank = get_int("SLURM_LOCALID", info.rank);
    if (const char* per_node = getenv("SLURM_STEP_TASKS_PER_NODE")) {
      const int node = get_int("SLURM_NODEID", 0);
      const TasksOnNode t =
          tasks_on_node("SLURM_STEP_TASKS_PER_NODE", per_node, std::max(info.world_size, 1), node);
      if (node < 0 || node >= t.nodes) {
        throw Error("environment: SLURM_NODEID " + std::to_string(node) + " is outside the " +
                    std::to_string(t.nodes) + " nodes of SLURM_STEP_TASKS_PER_NODE");
      }
      info.local_world_size = t.tasks;
    } else {
      info.local_world_size = get_int("SLURM_NTASKS_PER_NODE", info.world_size);
    }
    if (const char* job = getenv("SLURM_JOB_ID")) {
      job_key = std::string("slurm-") + job + "." + getenv("SLURM_STEP_ID");
    }
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

void ensure_store_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error("rendezvous folder " + dir +
                " (DDPSIM_STORE_DIR, else $TMPDIR/ddpsim-store-JOB): " +
                (ec ? "cannot be created (" + ec.message() + ")" : std::string("is not a folder")) +
                "; set DDPSIM_STORE_DIR to a folder every rank of the job can reach");
  }
}

}  // namespace ddpsim::comm
