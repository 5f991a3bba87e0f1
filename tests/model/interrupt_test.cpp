// model/interrupt.hpp against real signals: each case forks a child that installs the handlers,
// registers real files, folders and processes, and raises SIGTERM or SIGINT; the parent checks
// the exit code (128 + signal), the one line on stderr and what is left on disk.
#include "model/interrupt.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "model/atomic_file.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

struct Ended {
  int code = -1;       // exit code, or 128 + the signal that killed it
  std::string stderr;  // everything it wrote there
};

// Runs `body` in a child whose stderr is captured; the child exits 0 if `body` returns.
Ended in_child(const std::function<void()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  Ended e;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) e.stderr.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return e;
}

class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ddpsim-interrupt-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << "x";
    return p;
  }
  fs::path dir_;
};

TEST_F(Interrupt, TermRemovesTheRegisteredTemporaryAndExits143WithOneLine) {
  const std::string tmp = file("out.json.tmp.123");
  const std::string other = file("kept.json");
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    const RemoveOnInterrupt guard(tmp);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.code, 143);
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGTERM); removed " + tmp + "\n");
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(fs::exists(other));  // nothing that was not registered
}

TEST_F(Interrupt, IntExits130AndAnUnregisteredFileStays) {
  const std::string tmp = file("t.json.tmp.1");
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    { const RemoveOnInterrupt guard(tmp); }  // gone out of scope: renamed, no longer ours
    ::raise(SIGINT);
  });
  EXPECT_EQ(e.code, 130);
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGINT)\n");
  EXPECT_TRUE(fs::exists(tmp));
}

TEST_F(Interrupt, RunOutputsAreRemovedUntilKeptAndTheLineCountsTheRest) {
  std::vector<std::string> traces;
  for (int i = 1; i <= 6; ++i) traces.push_back(file("t." + std::to_string(i) + ".json"));
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    RunOutputs outputs;
    for (const std::string& t : traces) outputs.add(t);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.code, 143);
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGTERM); removed " + traces[0] + ", " +
                          traces[1] + ", " + traces[2] + ", " + traces[3] + " and 2 more files\n");
  for (const std::string& t : traces) EXPECT_FALSE(fs::exists(t)) << t;

  // Kept: a signal after the run completed removes nothing.
  const std::string done = file("done.json");
  const Ended k = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    RunOutputs outputs;
    outputs.add(done);
    outputs.keep();
    ::raise(SIGTERM);
  });
  EXPECT_EQ(k.code, 143);
  EXPECT_TRUE(fs::exists(done));
}

TEST_F(Interrupt, RunOutputsOfAFailedRunAreRemovedByTheDestructor) {
  const std::string a = file("a.json"), b = file("b.json"), c = file("c.json");
  try {
    RunOutputs outputs;
    outputs.add(a);
    outputs.add(b);
    throw std::runtime_error("the third write failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  {
    RunOutputs outputs;
    outputs.add(c);
    outputs.keep();
  }
  EXPECT_TRUE(fs::exists(c));
}

TEST_F(Interrupt, ADroppedFileIsNotTheRunsAndAnAtomicWriteJoinsTheRun) {
  const std::string kept = file("old.json"), gone = file("b.json");
  {
    RunOutputs outputs;
    outputs.add(kept);
    outputs.add(gone);
    outputs.drop(kept);  // its write failed before replacing it: the earlier file stays
    EXPECT_EQ(outputs.files(), std::vector<std::string>{gone});
  }
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_FALSE(fs::exists(gone));

  // write_file_atomic(path, text, &outputs): the file is the run's from its rename on.
  const std::string out = (dir_ / "out.json").string();
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    RunOutputs outputs;
    write_file_atomic(out, "{}\n", &outputs);
    if (outputs.files() != std::vector<std::string>{out}) ::_exit(3);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.code, 143);
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGTERM); removed " + out + "\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::exists(kept));  // dropped before the signal: not touched
}

TEST_F(Interrupt, ManyRunOutputsGrowTheHandlersBufferAndAllAreRemoved) {
  // 2,000 paths of ~60 bytes: the buffer the handler reads is replaced several times.
  std::vector<std::string> files;
  for (int i = 0; i < 2000; ++i) files.push_back(file("point-" + std::to_string(i) + ".json"));
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    RunOutputs outputs;
    for (const std::string& f : files) outputs.add(f);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.code, 143);
  EXPECT_NE(e.stderr.find(" and 1996 more files\n"), std::string::npos) << e.stderr;
  for (const std::string& f : files) ASSERT_FALSE(fs::exists(f)) << f;
}

TEST_F(Interrupt, ATreeIsRemovedWithEverythingInIt) {
  const fs::path tree = dir_ / "ddpsim-validate-abc";
  fs::create_directories(tree / "rep-2" / "deeper");
  std::ofstream(tree / "point-0.json") << "{}";
  std::ofstream(tree / "rep-2" / "profile.json") << "{}";
  std::ofstream(tree / "rep-2" / "deeper" / "log") << "x";
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    const RemoveOnInterrupt guard(tree.string(), /*tree=*/true);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.code, 143);
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGTERM); removed " + tree.string() + "\n");
  EXPECT_FALSE(fs::exists(tree));
  EXPECT_TRUE(fs::exists(dir_));
}

TEST_F(Interrupt, ARegisteredChildIsStoppedAndWaitedForFirst) {
  // The child's own handler removes its temporary before ours removes the run's output.
  const std::string child_tmp = file("child.tmp"), out = file("out.json");
  int pids[2];
  ASSERT_EQ(::pipe(pids), 0);
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    const pid_t kid = ::fork();
    if (kid == 0) {
      install_interrupt_handlers("ddpsim-test-child");
      const RemoveOnInterrupt guard(child_tmp);
      ::pause();
      ::_exit(0);
    }
    ssize_t w = ::write(pids[1], &kid, sizeof kid);
    (void)w;
    const StopOnInterrupt stop(kid);
    RunOutputs outputs;
    outputs.add(out);
    ::usleep(200 * 1000);  // the grandchild has installed its handler
    ::raise(SIGTERM);
  });
  pid_t kid = 0;
  ASSERT_EQ(::read(pids[0], &kid, sizeof kid), static_cast<ssize_t>(sizeof kid));
  EXPECT_EQ(e.code, 143);
  const auto kid_line =
      e.stderr.find("ddpsim-test-child: interrupted (SIGTERM); removed " + child_tmp);
  const auto our_line = e.stderr.find("ddpsim-test: interrupted (SIGTERM); removed " + out);
  ASSERT_NE(kid_line, std::string::npos) << e.stderr;
  ASSERT_NE(our_line, std::string::npos) << e.stderr;
  EXPECT_LT(kid_line, our_line);  // the child had finished before we removed the output
  EXPECT_FALSE(fs::exists(child_tmp));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(::kill(kid, 0), 0);  // stopped and reaped by the handler
  EXPECT_EQ(errno, ESRCH);
  ::close(pids[0]);
  ::close(pids[1]);
}

TEST_F(Interrupt, ASignalIgnoredAtStartStaysIgnored) {
  // `cmd &` in a non-interactive shell starts cmd with SIGINT ignored: the shell's choice.
  const std::string tmp = file("x.tmp");
  const Ended e = in_child([&] {
    ::signal(SIGINT, SIG_IGN);
    install_interrupt_handlers("ddpsim-test");
    const RemoveOnInterrupt guard(tmp);
    ::raise(SIGINT);
  });
  EXPECT_EQ(e.code, 0);
  EXPECT_EQ(e.stderr, "");
  EXPECT_TRUE(fs::exists(tmp));
}

// The handler's line escapes a path as one_line does (model/error.hpp), without allocating: a
// newline as \n, ESC as \x1b, the C1 CSI (UTF-8 C2 9B) as \u009b, a byte that is not UTF-8 as
// \xNN; UTF-8 text is kept.
TEST_F(Interrupt, AControlCharacterInAPathStaysOnOneLine) {
  const std::string tmp = file("a\nb\x1b[2J\xc2\x9b\xff\xc3\xa9.tmp");
  const Ended e = in_child([&] {
    install_interrupt_handlers("ddpsim-test");
    const RemoveOnInterrupt guard(tmp);
    ::raise(SIGTERM);
  });
  EXPECT_EQ(e.stderr, "ddpsim-test: interrupted (SIGTERM); removed " +
                          (dir_ / "a\\nb\\x1b[2J\\u009b\\xff\xc3\xa9.tmp").string() + "\n");
  EXPECT_FALSE(fs::exists(tmp));
}

}  // namespace
}  // namespace ddpsim::model
