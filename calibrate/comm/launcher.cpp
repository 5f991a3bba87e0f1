#include "calibrate/comm/launcher.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "model/error.hpp"
#include "model/interrupt.hpp"

namespace ddpsim::comm {
namespace {

using Clock = std::chrono::steady_clock;

struct Stream {
  int fd = -1;
  int rank = 0;
  FILE* sink = nullptr;
  std::string partial;
};

struct Child {
  pid_t pid = -1;
  bool running = false;
  int status = 0;
};

void forward(Stream& s, bool prefix, bool flush_partial) {
  // Whole lines only, so lines from different ranks never interleave mid-line.
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    if (prefix) std::fprintf(s.sink, "[rank %d] ", s.rank);
    std::fwrite(s.partial.data() + start, 1, nl + 1 - start, s.sink);
  }
  s.partial.erase(0, start);
  if (flush_partial && !s.partial.empty()) {
    if (prefix) std::fprintf(s.sink, "[rank %d] ", s.rank);
    std::fwrite(s.partial.data(), 1, s.partial.size(), s.sink);
    std::fputc('\n', s.sink);
    s.partial.clear();
  }
  std::fflush(s.sink);
}

// Reads what is available from every open stream, waiting at most wait_ms for the first byte.
void pump(std::vector<Stream>& streams, int wait_ms, bool prefix) {
  std::vector<pollfd> fds;
  std::vector<Stream*> owners;
  for (auto& s : streams) {
    if (s.fd >= 0) {
      fds.push_back({s.fd, POLLIN, 0});
      owners.push_back(&s);
    }
  }
  if (fds.empty()) {
    if (wait_ms > 0) ::poll(nullptr, 0, wait_ms);
    return;
  }
  if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return;
  char buf[65536];
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    Stream& s = *owners[i];
    ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n > 0) {
      s.partial.append(buf, static_cast<std::size_t>(n));
      forward(s, prefix, false);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      ::close(s.fd);
      s.fd = -1;
      forward(s, prefix, true);
    }
  }
}

std::string describe(int rank, int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "rank " + std::to_string(rank) + " killed by signal " + std::to_string(sig) + " (" +
           ::strsignal(sig) + ")";
  }
  return "rank " + std::to_string(rank) + " exited with status " +
         std::to_string(WEXITSTATUS(status));
}

bool reap(std::vector<Child>& children) {
  bool any = false;
  for (auto& c : children) {
    if (!c.running) continue;
    int status = 0;
    pid_t r = ::waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) {
      c.running = false;
      c.status = status;
      any = true;
    }
  }
  return any;
}

// "; rank 1 is stopped (state T: SIGSTOP or a debugger), not dead": a stalled rank that its
// peers' collective timeouts caught, named beside the rank that reported the timeout.
std::string stopped_note(const std::vector<Child>& children) {
  std::string note;
  for (std::size_t r = 0; r < children.size(); ++r) {
    if (!children[r].running) continue;
    std::ifstream f("/proc/" + std::to_string(children[r].pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) continue;
    const char state = stat[paren + 2];
    if (state == 'T' || state == 't') {
      note +=
          fmt::format("; rank {} is stopped (state {}: SIGSTOP or a debugger), not dead", r, state);
    }
  }
  return note;
}

bool any_running(const std::vector<Child>& children) {
  for (const auto& c : children)
    if (c.running) return true;
  return false;
}

// A forked child: rank r of nproc joins the launcher's process group, dies with the launcher,
// writes to the pipes `out` and `err`, gets torchrun's environment (RANK, WORLD_SIZE, ...,
// MASTER_ADDR and, unless the user set one, `master_port`; DDPSIM_STORE_DIR; one thread per
// rank when there are several) and runs `cargv`. Only async-signal-safe calls until exec.
[[noreturn]] void exec_rank(int r, int nproc, pid_t group, pid_t parent, int out, int err,
                            const std::string& master_port, const std::string& store_dir,
                            const LaunchOptions& opts, std::vector<char*>& cargv) {
  // Child: only async-signal-safe calls until exec.
  ::setpgid(0, group);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  auto set = [](const char* k, const std::string& v, bool overwrite) {
    ::setenv(k, v.c_str(), overwrite ? 1 : 0);
  };
  set("RANK", std::to_string(r), true);
  set("WORLD_SIZE", std::to_string(nproc), true);
  set("LOCAL_RANK", std::to_string(r), true);
  set("LOCAL_WORLD_SIZE", std::to_string(nproc), true);
  set("GROUP_RANK", "0", true);
  set("MASTER_ADDR", "127.0.0.1", true);
  if (!master_port.empty()) set("MASTER_PORT", master_port, true);
  set("DDPSIM_STORE_DIR", store_dir, true);
  if (nproc > 1) {
    // torchrun sets OMP_NUM_THREADS=1 for several ranks per host; OpenBLAS's pthreads
    // build reads its own variable.
    set("OMP_NUM_THREADS", "1", false);
    set("OPENBLAS_NUM_THREADS", "1", false);
  }
  for (const auto& [k, v] : opts.extra_env) set(k.c_str(), v, true);
  ::execvp(cargv[0], cargv.data());
  std::fprintf(stderr, "cannot execute %s: %s\n", cargv[0], std::strerror(errno));
  ::_exit(127);
}

// A rank failed: collect the others for a short while (a rank that dies takes its peers'
// connections with it, so they fail a moment later with errors of their own), then blame a rank
// killed by a signal (the cause) before ranks that exited with an error (usually the effect).
void blame_failure(std::vector<Child>& children, std::vector<Stream>& streams, bool prefix,
                   Clock::time_point t0, LaunchResult& result) {
  const int nproc = static_cast<int>(children.size());
  auto failed = [&](int r) {
    const Child& c = children[r];
    return !c.running && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  };
  const auto settle_until = Clock::now() + std::chrono::milliseconds(300);
  while (any_running(children) && Clock::now() < settle_until) {
    pump(streams, 20, prefix);
    reap(children);
  }
  int blame = -1;
  for (int r = 0; r < nproc && blame < 0; ++r)
    if (failed(r) && WIFSIGNALED(children[r].status)) blame = r;
  for (int r = 0; r < nproc && blame < 0; ++r)
    if (failed(r)) blame = r;
  const Child& c = children[blame];
  result.failed_rank = blame;
  result.message = describe(blame, c.status);
  result.exit_code = WIFSIGNALED(c.status) ? 128 + WTERMSIG(c.status) : WEXITSTATUS(c.status);
  std::string others;
  for (int r = 0; r < nproc; ++r) {
    if (r != blame && failed(r))
      others += (others.empty() ? "" : ", ") + describe(r, children[r].status);
  }
  double t = std::chrono::duration<double>(Clock::now() - t0).count();
  result.message += fmt::format(" after {:.1f} s", t);
  if (!others.empty()) result.message += "; then " + others;
  result.message += stopped_note(children) + "; stopped the others";
}

}  // namespace

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free one
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

LaunchResult launch_local_detailed(int nproc, const std::vector<std::string>& argv,
                                   const LaunchOptions& opts) {
  DDPSIM_ASSERT(nproc >= 1, "launch_local needs at least one rank");
  DDPSIM_ASSERT(!argv.empty(), "launch_local needs a program");
  LaunchResult result;

  std::string store_dir = opts.store_dir;
  bool own_store = false;
  if (store_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ddpsim-store-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      result.exit_code = 1;
      result.message = std::string("cannot create a store directory: ") + std::strerror(errno);
      return result;
    }
    store_dir = tmpl;
    own_store = true;
  } else {
    std::filesystem::create_directories(store_dir);
  }

  // The user's MASTER_PORT stands (the ranks inherit it); else one port for the whole run, free
  // on 127.0.0.1 now (29500, torchrun's default, only if the kernel gave none).
  const char* user_port = std::getenv("MASTER_PORT");
  std::string master_port;
  if (user_port == nullptr || *user_port == '\0') {
    const int port = free_loopback_port();
    master_port = std::to_string(port > 0 ? port : 29500);
  }

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<Child> children(nproc);
  std::vector<Stream> streams;
  pid_t group = 0;
  std::optional<ddpsim::model::StopOnInterrupt> stop_on_interrupt;
  const pid_t parent = ::getpid();
  const auto t0 = Clock::now();
  for (int r = 0; r < nproc; ++r) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      result.exit_code = 1;
      result.message = std::string("pipe failed: ") + std::strerror(errno);
      break;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      exec_rank(r, nproc, group, parent, out[1], err[1], master_port, store_dir, opts, cargv);
    }
    ::close(out[1]);
    ::close(err[1]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      result.exit_code = 1;
      result.message = std::string("fork failed: ") + std::strerror(errno);
      break;
    }
    if (group == 0) {
      group = pid;
      // SIGINT/SIGTERM to the launcher reach the ranks (their own process group, which a
      // terminal's Ctrl-C does not): each removes its temporaries before the launcher exits.
      stop_on_interrupt.emplace(-group);
    }
    ::setpgid(pid, group);  // also in the parent, so kill(-group) works before the child runs
    children[r] = {pid, true, 0};
    streams.push_back({out[0], r, stdout, {}});
    streams.push_back({err[0], r, stderr, {}});
  }

  const bool has_limit = opts.timeout_s > 0;
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(has_limit ? opts.timeout_s : 0));
  auto stop_all = [&] {
    if (group > 0) ::kill(-group, SIGTERM);
    const auto kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(opts.grace_s));
    while (any_running(children) && Clock::now() < kill_at) {
      pump(streams, 20, opts.prefix_output);
      reap(children);
    }
    if (any_running(children) && group > 0) ::kill(-group, SIGKILL);
    while (any_running(children)) {
      pump(streams, 20, opts.prefix_output);
      reap(children);
    }
  };

  if (result.exit_code != 0) {
    stop_all();
  } else {
    while (any_running(children)) {
      pump(streams, 50, opts.prefix_output);
      reap(children);
      auto failed = [&](int r) {
        const Child& c = children[r];
        return !c.running && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
      };
      bool any_failed = false;
      for (int r = 0; r < nproc; ++r) any_failed = any_failed || failed(r);
      if (any_failed) {
        blame_failure(children, streams, opts.prefix_output, t0, result);
        stop_all();
        break;
      }
      if (has_limit && Clock::now() >= deadline && any_running(children)) {
        std::string which;
        for (int r = 0; r < nproc; ++r)
          if (children[r].running) which += (which.empty() ? "" : ",") + std::to_string(r);
        result.exit_code = 124;
        result.message =
            fmt::format("timeout after {:g} s; ranks still running: {}{}; stopped them",
                        opts.timeout_s, which, stopped_note(children));
        stop_all();
        break;
      }
    }
  }
  // Drain what the ranks wrote before exiting.
  // A descendant that escaped the process group could hold a pipe open: give up after 2 s.
  const auto drain_until = Clock::now() + std::chrono::seconds(2);
  auto open_streams = [&] {
    for (const auto& s : streams)
      if (s.fd >= 0) return true;
    return false;
  };
  while (open_streams() && Clock::now() < drain_until) pump(streams, 20, opts.prefix_output);
  for (auto& s : streams) {
    if (s.fd >= 0) {
      forward(s, opts.prefix_output, true);
      ::close(s.fd);
    }
  }
  if (own_store) {
    std::error_code ec;
    std::filesystem::remove_all(store_dir, ec);
  }
  return result;
}

int launch_local(int nproc, const std::vector<std::string>& argv, const LaunchOptions& opts) {
  LaunchResult r = launch_local_detailed(nproc, argv, opts);
  if (r.exit_code != 0) std::fprintf(stderr, "ddpsim launch: %s\n", r.message.c_str());
  return r.exit_code;
}

}  // namespace ddpsim::comm
