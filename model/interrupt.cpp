#include "model/interrupt.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "model/detail/utf8.hpp"

namespace ddpsim::model {

namespace {

// Fixed-size tables the handler reads without a lock. A slot's state is published with release
// and read with acquire, so the handler sees a complete path or none.
constexpr int kFiles = 64;
constexpr std::size_t kPathMax = 4096;
constexpr int kLists = 16;

struct FileSlot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 registered
  bool tree = false;
  char path[kPathMax] = {};
};
constexpr int kChildren = 8;
std::atomic<int> g_children[kChildren];  // 0 free, > 0 a pid, < 0 a process group
struct ListSlot {
  std::atomic<bool> claimed{false};
  std::atomic<const char*> data{nullptr};  // NUL-separated paths
  std::atomic<std::size_t> size{0};        // bytes of `data` that are complete
};

FileSlot g_files[kFiles];
ListSlot g_lists[kLists];
std::atomic<const char*> g_program{nullptr};

// The handler's one line, built in a static buffer (the handler runs once: it never returns).
char g_line[8192];
std::size_t g_len = 0;

// Appends `s` escaped as ddpsim::one_line escapes (model/error.hpp), without allocating: newline,
// CR and tab as \n \r \t, other C0 controls and DEL as \xNN, C1 controls (UTF-8 C2 80..C2 9F) as
// \u00NN, bytes that are not UTF-8 as \xNN; the line stays one line and acts on no terminal
// whatever a path holds.
void put(const char* s) {
  static const char kHex[] = "0123456789abcdef";
  const auto escape = [](const char* prefix, unsigned u) {
    if (g_len + 7 >= sizeof g_line) return;
    for (const char* q = prefix; *q != 0; ++q) g_line[g_len++] = *q;
    g_line[g_len++] = kHex[(u >> 4) & 0xf];
    g_line[g_len++] = kHex[u & 0xf];
  };
  std::size_t n = 0;
  while (s[n] != 0) ++n;
  for (std::size_t i = 0; i < n && g_len + 1 < sizeof g_line;) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x80) {
      if (u == '\n' || u == '\r' || u == '\t') {
        if (g_len + 3 >= sizeof g_line) break;
        g_line[g_len++] = '\\';
        g_line[g_len++] = u == '\n' ? 'n' : u == '\r' ? 'r' : 't';
      } else if (u < 0x20 || u == 0x7f) {
        escape("\\x", u);
      } else {
        g_line[g_len++] = s[i];
      }
      ++i;
      continue;
    }
    const std::size_t len = ddpsim::detail::utf8_sequence_length(s + i, n - i);
    if (len == 0) {
      escape("\\x", u);
      ++i;
    } else if (len == 2 && u == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      escape("\\u00", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else {
      if (g_len + len >= sizeof g_line) break;
      for (std::size_t k = 0; k < len; ++k) g_line[g_len++] = s[i + k];
      i += len;
    }
  }
}

void put_number(long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < 23);
  while (n > 0 && g_len + 1 < sizeof g_line) g_line[g_len++] = digits[--n];
}

constexpr int kNamed = 4;  // files named on the line; the rest are counted

void remove_one(const char* path, int* removed) {
  if (::unlink(path) != 0) return;  // never written, or already renamed away: nothing to say
  if (*removed < kNamed) {
    put(*removed == 0 ? "; removed " : ", ");
    put(path);
  }
  ++*removed;
}

// Removes `name` under `dir_fd`, a folder with everything in it, with openat/getdents64/unlinkat
// only (async-signal-safe). Returns true when it is gone.
bool remove_tree_at(int dir_fd, const char* name, int depth) {
  if (::unlinkat(dir_fd, name, 0) == 0) return true;
  if ((errno != EISDIR && errno != EPERM) || depth > 16) return false;
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct Dirent64 {  // the kernel's linux_dirent64
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  alignas(8) char buf[2048];
  for (int pass = 0; pass < 64; ++pass) {  // until a pass finds nothing left
    bool any = false;
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const Dirent64*>(buf + off);
        off += d->reclen;
        if (std::strcmp(d->name, ".") == 0 || std::strcmp(d->name, "..") == 0) continue;
        any = true;
        remove_tree_at(fd, d->name, depth + 1);
      }
    }
    if (!any) break;
  }
  ::close(fd);
  return ::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0;
}

// Sends `sig` to every registered child and waits up to 5 s for them all (then SIGKILL).
void stop_children(int sig) {
  bool any = false;
  for (std::atomic<int>& c : g_children) {
    const int t = c.load(std::memory_order_acquire);
    if (t != 0) any = ::kill(t, sig) == 0 || any;
  }
  if (!any) return;
  const timespec tick{0, 10 * 1000 * 1000};
  for (int i = 0; i <= 500; ++i) {
    bool running = false;
    for (std::atomic<int>& c : g_children) {
      const int t = c.load(std::memory_order_acquire);
      if (t == 0) continue;
      // A group: reap its members that are our children; done once kill(-g, 0) finds none.
      while (::waitpid(t, nullptr, WNOHANG) > 0) {
      }
      if (::kill(t, 0) == 0) running = true;
    }
    if (!running) return;
    if (i == 500) {
      for (std::atomic<int>& c : g_children) {
        const int t = c.load(std::memory_order_acquire);
        if (t != 0) ::kill(t, SIGKILL);
      }
      return;
    }
    ::nanosleep(&tick, nullptr);
  }
}

// Runs once: every other SIGINT/SIGTERM is blocked in its thread while it runs (sa_mask), one
// in another thread waits (below), and it never returns.
void on_signal(int sig) {
  // A second signal delivered to another thread at the same moment waits for the first handler,
  // which ends the process.
  static std::atomic<bool> running{false};
  if (running.exchange(true)) {
    for (;;) ::pause();
  }
  const char* program = g_program.load(std::memory_order_relaxed);
  g_len = 0;
  put(program != nullptr ? program : "ddpsim");
  put(": interrupted (");
  put(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal");
  put(")");
  stop_children(sig);  // first: their own handlers remove their files
  int removed = 0;
  for (FileSlot& f : g_files) {
    if (f.state.load(std::memory_order_acquire) != 2) continue;
    if (!f.tree) {
      remove_one(f.path, &removed);
    } else if (remove_tree_at(AT_FDCWD, f.path, 0)) {
      if (removed < kNamed) {
        put(removed == 0 ? "; removed " : ", ");
        put(f.path);
      }
      ++removed;
    }
  }
  for (ListSlot& l : g_lists) {
    // The size first: a buffer stored before it holds at least that many bytes.
    const std::size_t size = l.size.load(std::memory_order_acquire);
    const char* data = l.data.load(std::memory_order_acquire);
    if (data == nullptr) continue;
    for (std::size_t i = 0; i < size; i += std::strlen(data + i) + 1)
      remove_one(data + i, &removed);
  }
  if (removed > kNamed) {
    put(" and ");
    put_number(removed - kNamed);
    put(removed - kNamed == 1 ? " more file" : " more files");
  }
  g_line[g_len++] = '\n';  // put() keeps one byte free for it
  const ssize_t ignored = ::write(STDERR_FILENO, g_line, g_len);
  (void)ignored;
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers(const char* program) {
  g_program.store(program, std::memory_order_relaxed);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time: a TERM after an INT waits
  sigaddset(&sa.sa_mask, SIGTERM);
  for (int sig : {SIGINT, SIGTERM}) {
    // A signal ignored at start stays ignored (a background job of a non-interactive shell
    // ignores SIGINT; nohup, SIGHUP): the shell's choice, as every POSIX tool keeps it.
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

RemoveOnInterrupt::RemoveOnInterrupt(const std::string& path, bool tree) {
  if (path.empty() || path.size() >= kPathMax || path.find('\0') != std::string::npos) return;
  for (int i = 0; i < kFiles; ++i) {
    int expected = 0;
    if (g_files[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
      std::memcpy(g_files[i].path, path.c_str(), path.size() + 1);
      g_files[i].tree = tree;
      g_files[i].state.store(2, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
}

RemoveOnInterrupt::~RemoveOnInterrupt() {
  if (slot_ >= 0) g_files[slot_].state.store(0, std::memory_order_release);
}

StopOnInterrupt::StopOnInterrupt(int target) {
  if (target == 0 || target == -1) return;  // never "every process" (kill(-1))
  for (int i = 0; i < kChildren; ++i) {
    int expected = 0;
    if (g_children[i].compare_exchange_strong(expected, target, std::memory_order_release)) {
      slot_ = i;
      return;
    }
  }
}

StopOnInterrupt::~StopOnInterrupt() {
  if (slot_ >= 0) g_children[slot_].store(0, std::memory_order_release);
}

RunOutputs::RunOutputs() {
  for (int i = 0; i < kLists; ++i) {
    bool expected = false;
    if (g_lists[i].claimed.compare_exchange_strong(expected, true)) {
      slot_ = i;
      return;
    }
  }
}

RunOutputs::~RunOutputs() {
  if (slot_ >= 0) {
    g_lists[slot_].size.store(0, std::memory_order_release);
    g_lists[slot_].data.store(nullptr, std::memory_order_release);
    g_lists[slot_].claimed.store(false);
  }
  if (!kept_) {
    std::error_code ignored;
    for (const std::string& f : files_) std::filesystem::remove(f, ignored);
  }
}

void RunOutputs::add(const std::string& path) {
  files_.push_back(path);
  publish();
}

void RunOutputs::drop(const std::string& path) {
  const auto it = std::find(files_.rbegin(), files_.rend(), path);
  if (it == files_.rend()) return;
  files_.erase(std::next(it).base());
  republish();
}

// A fresh buffer with files_ (the older ones stay alive until destruction: a handler may be
// reading one). It is at least as large as the one it replaces and zero past its content, so a
// handler that read the old size before the new buffer reads within it (empty names: nothing).
void RunOutputs::republish() {
  if (slot_ < 0 || kept_) return;
  g_lists[slot_].size.store(0, std::memory_order_release);
  std::size_t need = 0;
  for (const std::string& f : files_) need += f.size() + 1;
  const std::size_t cap = std::max<std::size_t>({need, capacity_, 4096});
  auto fresh = std::make_unique<char[]>(cap);
  std::size_t at = 0;
  for (const std::string& f : files_) {
    std::memcpy(fresh.get() + at, f.c_str(), f.size() + 1);
    at += f.size() + 1;
  }
  g_lists[slot_].data.store(fresh.get(), std::memory_order_release);
  buffers_.push_back(std::move(fresh));
  capacity_ = cap;
  used_ = at;
  g_lists[slot_].size.store(used_, std::memory_order_release);
}

void RunOutputs::keep() {
  kept_ = true;
  if (slot_ >= 0) g_lists[slot_].size.store(0, std::memory_order_release);
}

// Appends the newest path to the buffer the handler reads (a larger copy when it is full: the
// new buffer is stored before the size that covers it, and the handler loads the size first).
void RunOutputs::publish() {
  if (slot_ < 0 || kept_) return;
  const std::string& path = files_.back();
  const std::size_t need = used_ + path.size() + 1;
  if (need > capacity_) {
    const std::size_t cap = std::max<std::size_t>(need, 2 * capacity_ + 4096);
    auto grown = std::make_unique<char[]>(cap);
    if (used_ > 0) std::memcpy(grown.get(), buffers_.back().get(), used_);
    g_lists[slot_].data.store(grown.get(), std::memory_order_release);
    buffers_.push_back(std::move(grown));
    capacity_ = cap;
  }
  std::memcpy(buffers_.back().get() + used_, path.c_str(), path.size() + 1);
  used_ = need;
  g_lists[slot_].size.store(used_, std::memory_order_release);
}

}  // namespace ddpsim::model
