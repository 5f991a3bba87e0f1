// subprocess.hpp: how the catalogue-driven test runners (tests/cli/cli_cases.cpp,
// tests/reliability/reliability_cases.cpp) run the built tools: one child per case, in its own
// process group, stdin from /dev/null and stdout/stderr captured in files (no pipe can fill up
// and deadlock), an optional address-space limit, and a wall limit after which the whole group
// is killed, so that a hang fails its case instead of the ctest run.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ddpsim::testing {

struct Outcome {
  bool timed_out = false;
  int exit_code = -1;  ///< -1 unless the child exited
  int signal = 0;      ///< the signal that ended it, 0 if none
  double wall_s = 0;
  long max_rss_kb = 0;  ///< the child's peak resident set (wait4)
  std::string out, err;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

/// Runs argv (argv[0] a path) in `cwd` with `env` ("NAME=value") added to the environment,
/// under RLIMIT_AS = memory_mb (0: no limit), killed with its process group after timeout_s.
/// Standard input is `stdin_path` (default /dev/null).
inline Outcome run(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                   double timeout_s, const std::vector<std::string>& env = {}, long memory_mb = 0,
                   const std::filesystem::path& stdin_path = "/dev/null") {
  using Clock = std::chrono::steady_clock;
  const std::filesystem::path out_path = cwd / ".stdout";
  const std::filesystem::path err_path = cwd / ".stderr";
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    if (chdir(cwd.c_str()) != 0) _exit(125);
    const int in = open(stdin_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(125);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    if (memory_mb > 0) {
      const rlim_t bytes = static_cast<rlim_t>(memory_mb) << 20;
      const rlimit lim{bytes, bytes};
      setrlimit(RLIMIT_AS, &lim);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(126);
  }
  Outcome o;
  int status = 0;
  rusage ru{};
  const auto deadline = t0 + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const pid_t r = wait4(pid, &status, WNOHANG, &ru);
    if (r == pid) break;
    if (r < 0) throw std::runtime_error(std::string("wait4: ") + std::strerror(errno));
    if (Clock::now() > deadline) {
      o.timed_out = true;
      kill(-pid, SIGKILL);
      wait4(pid, &status, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  o.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.out = read_text(out_path);
  o.err = read_text(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return o;
}

}  // namespace ddpsim::testing
