// The one output guard (model/atomic_file.hpp, issue 42): never onto an input, never replacing
// anything but a regular file, every write checked. Real FIFOs, sockets, device nodes (as root)
// and a full file system (as root, a 16 KiB tmpfs), never mocks.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/atomic_file.hpp"

namespace ddpsim::model {
namespace {

namespace fs = std::filesystem;

class OutputGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ddpsim-guard-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  bool leftovers() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      if (e.path().string().find(".tmp.") != std::string::npos) return true;
    }
    return false;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // check_output_path's message, or "" when it accepts.
  static std::string refusal(const std::string& out, const std::vector<std::string>& inputs) {
    try {
      check_output_path("--out", out, inputs);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(OutputGuard, AFifoIsRefusedAndStaysAFifo) {
  const std::string p = path("p");
  ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
  EXPECT_EQ(refusal(p, {}), "--out " + p + ": is a FIFO (named pipe), not a regular file");
  try {
    write_file_atomic(p, "results");
    FAIL() << "wrote onto a FIFO";
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.reason(), "it is a FIFO (named pipe), not a regular file");
  }
  EXPECT_TRUE(fs::is_fifo(p));
  EXPECT_FALSE(leftovers());
}

TEST_F(OutputGuard, AFolderASocketAndALinkToAFifoAreCalledWhatTheyAre) {
  fs::create_directories(path("d"));
  EXPECT_EQ(refusal(path("d"), {}), "--out " + path("d") + ": is a folder, not a regular file");
  const std::string sock = path("s");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(refusal(sock, {}), "--out " + sock + ": is a socket, not a regular file");
  ::close(fd);
  ASSERT_EQ(::mkfifo(path("p").c_str(), 0644), 0);
  fs::create_symlink(path("p"), path("link"));
  EXPECT_EQ(refusal(path("link"), {}),
            "--out " + path("link") + ": is a FIFO (named pipe), not a regular file");
  EXPECT_THROW(write_file_atomic(path("link"), "x"), FileWriteError);
  EXPECT_TRUE(fs::is_symlink(path("link")));
  // /dev/null is checked, never written: the check refuses before any byte goes anywhere.
  EXPECT_EQ(refusal("/dev/null", {}), "--out /dev/null: is a character device, not a regular file");
  EXPECT_EQ(non_regular_kind("/dev/null"), "a character device");
  EXPECT_EQ(non_regular_kind(path("missing")), "");
  EXPECT_FALSE(leftovers());
}

TEST_F(OutputGuard, ADeviceNodeIsNeverReplaced) {
  // A private node (major 1, minor 3: what /dev/null is), so that a regression replaces a file
  // of this test, not the system's /dev/null. Only root may make one.
  const std::string dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod needs root (" << std::strerror(errno) << ")";
  }
  EXPECT_THROW(write_file_atomic(dev, "x"), FileWriteError);
  EXPECT_TRUE(fs::is_character_file(dev));
  EXPECT_EQ(refusal(dev, {}), "--out " + dev + ": is a character device, not a regular file");
}

TEST_F(OutputGuard, AnInputIsRefusedHoweverItIsNamed) {
  const std::string in = path("s.json");
  std::ofstream(in) << "{}";
  fs::create_hard_link(in, path("hard.json"));
  fs::create_symlink(in, path("soft.json"));
  for (const std::string& out :
       {in, path("hard.json"), path("soft.json"), (dir_ / "." / "s.json").string()}) {
    EXPECT_EQ(refusal(out, {"", "-", in}), "--out " + out + ": is the input " + in +
                                               "; writing the result there would replace it")
        << out;
  }
  EXPECT_EQ(refusal(path("new.json"), {in, "-", ""}), "");  // "-" and "" name no file
  EXPECT_FALSE(fs::exists(path("new.json")));
}

TEST_F(OutputGuard, AStaleTemporaryOfThisPidIsReplacedNotOpened) {
  // A FIFO planted at the temporary's name would block an open(2) without O_EXCL forever.
  const std::string out = path("out.json");
  const std::string tmp = out + ".tmp." + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(tmp.c_str(), 0644), 0);
  write_file_atomic(out, "done\n");
  std::ifstream f(out);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "done");
  EXPECT_FALSE(fs::exists(tmp));
}

TEST_F(OutputGuard, AFullFileSystemIsAnErrorNeverAnEmptyFile) {
  // A 16 KiB tmpfs (root only; skipped elsewhere): 64 KiB cannot fit.
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=16k") != 0) {
    GTEST_SKIP() << "mounting a tmpfs needs root (" << std::strerror(errno) << ")";
  }
  const std::string out = (small / "big.json").string();
  try {
    write_file_atomic(out, std::string(64 * 1024, 'x'));
    ADD_FAILURE() << "64 KiB written into 16 KiB";
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.reason(), "No space left on device");
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::is_empty(small));  // no temporary either
  ::umount(small.c_str());
}

}  // namespace
}  // namespace ddpsim::model
