#include "simulator/cli/validate/children.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "model/process_env.hpp"

namespace ddpsim::validate {

namespace fs = std::filesystem;

namespace {

fs::path self_dir() {
  const std::string exe = model::self_exe();
  return exe.empty() ? fs::current_path() : fs::path(exe).parent_path();
}

}  // namespace

std::string last_log_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last;
  while (std::getline(f, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

fs::path sibling(const std::string& name) {
  const fs::path p = self_dir() / name;
  if (access(p.c_str(), X_OK) != 0) {
    throw ChildError(name + " not found beside ddpsim-validate (" + p.string() +
                     "); build the target " + name);
  }
  return p;
}

int run_child_status(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw ChildError("cannot fork to run " + argv[0]);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  const model::StopOnInterrupt stop(pid);  // SIGINT/SIGTERM reach the child, which cleans up
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw ChildError("lost the child " + argv[0]);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

void run_child(const std::vector<std::string>& argv, const fs::path& log) {
  const int rc = run_child_status(argv, log);
  if (rc == 0) return;
  const std::string name = fs::path(argv[0]).filename().string();
  const std::string how = rc > 0 ? "exit " + std::to_string(rc) : "signal " + std::to_string(-rc);
  throw ChildError(name + " failed (" + how + "): " + last_log_line(log));
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "ddpsim-validate-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw ChildError("cannot create a temporary folder");
  path = tmpl;
  on_interrupt = std::make_unique<model::RemoveOnInterrupt>(tmpl, /*tree=*/true);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace ddpsim::validate
