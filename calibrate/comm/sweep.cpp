#include "calibrate/comm/sweep.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "model/error.hpp"

namespace ddpsim::comm {

using model::CollectiveOp;

namespace {

using Clock = std::chrono::steady_clock;

// Input element i of rank r: (r+1) * h(i) with h(i) in 1..251 from a hash of i. Sums over n
// ranks are S(n)*h(i) with S(n) = n(n+1)/2: small integers (< 2^24 for n < 365), so every
// reduction order gives the exact float32 result. h is a hash, not i % 251: a periodic pattern
// repeats whole 4 KiB pages (every 251 pages), and identical pages can be merged by the host's
// same-page merging, after which every write into them (the output of an in-place collective)
// takes a copy-on-write fault; on this VM that slowed first GEMM passes over identical operand
// copies 6x (calibrate/cpu_kernels.cpp).
float element_pattern(std::size_t i) {
  std::uint64_t x = static_cast<std::uint64_t>(i) + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<float>(x % 251 + 1);
}

float input_value(int r, std::size_t i) { return static_cast<float>(r + 1) * element_pattern(i); }

struct Shape {
  std::size_t count = 0;     // nccl-tests "count": elements per rank (chunk for rs/ag)
  std::size_t in_elems = 0;  // elements of the input buffer
  std::size_t out_elems = 0;
  std::int64_t size_bytes = 0;
};

Shape shape_for(CollectiveOp op, std::int64_t bytes, int n) {
  Shape s;
  const std::size_t un = static_cast<std::size_t>(n);
  switch (op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kBroadcast:
      s.count = static_cast<std::size_t>(bytes) / sizeof(float);
      s.in_elems = s.out_elems = s.count;
      break;
    case CollectiveOp::kReduceScatter:
      s.count = static_cast<std::size_t>(bytes) / (sizeof(float) * un);
      s.in_elems = s.count * un;
      s.out_elems = s.count;
      break;
    case CollectiveOp::kAllGather:
      s.count = static_cast<std::size_t>(bytes) / (sizeof(float) * un);
      s.in_elems = s.count;
      s.out_elems = s.count * un;
      break;
    case CollectiveOp::kReduce:
      DDPSIM_ASSERT(false, "the sweeps run no reduce");
  }
  s.size_bytes = static_cast<std::int64_t>(std::max(s.in_elems, s.out_elems) * sizeof(float));
  return s;
}

// Buffers of one (op, size, placement) and the call that runs it.
struct Case {
  CollectiveOp op;
  Shape shape;
  bool in_place;
  int root;
  std::unique_ptr<Buffer> a, b;  // in-place: only a (the larger buffer)
  const float* in = nullptr;
  float* out = nullptr;
  std::vector<float> host_in;

  Case(Communicator& c, CollectiveOp o, const Shape& s, bool ip, int rt)
      : op(o), shape(s), in_place(ip), root(rt) {
    const int r = c.rank();
    const std::size_t off = static_cast<std::size_t>(r) * s.count;
    if (in_place) {
      a = c.allocate(std::max(s.in_elems, s.out_elems));
      float* base = a->data();
      switch (op) {
        case CollectiveOp::kAllReduce:
        case CollectiveOp::kBroadcast:
          in = out = base;
          break;
        case CollectiveOp::kReduceScatter:
          in = base, out = base + off;
          break;
        case CollectiveOp::kAllGather:
          out = base, in = base + off;
          break;
        case CollectiveOp::kReduce:
          DDPSIM_ASSERT(false, "the sweeps run no reduce");
      }
    } else {
      a = c.allocate(s.in_elems);
      b = c.allocate(s.out_elems);
      in = a->data();
      out = b->data();
    }
    host_in.resize(s.in_elems);
    for (std::size_t i = 0; i < s.in_elems; ++i) host_in[i] = input_value(r, i);
  }

  void upload_inputs() {
    // in-place all-gather's input sits at offset rank*count of the output buffer.
    const std::size_t off = static_cast<std::size_t>(in - a->data());
    a->upload(host_in.data(), host_in.size(), off);
  }

  void run(Communicator& c) {
    switch (op) {
      case CollectiveOp::kAllReduce:
        c.all_reduce(in, out, shape.count);
        break;
      case CollectiveOp::kReduceScatter:
        c.reduce_scatter(in, out, shape.count);
        break;
      case CollectiveOp::kAllGather:
        c.all_gather(in, out, shape.count);
        break;
      case CollectiveOp::kBroadcast:
        c.broadcast(in, out, shape.count, root);
        break;
      case CollectiveOp::kReduce:
        DDPSIM_ASSERT(false, "the sweeps run no reduce");
    }
  }

  // Elements of this rank's output that differ from the exact expected value.
  std::int64_t count_wrong(const Communicator& c,
                           const std::function<void(CollectiveOp, std::int64_t, bool,
                                                    std::vector<float>&)>& corrupt_for_test) const {
    const int n = c.size();
    const int r = c.rank();
    std::vector<float> got(shape.out_elems);
    Buffer& ob = in_place ? *a : *b;
    const std::size_t off = static_cast<std::size_t>(out - ob.data());
    ob.download(got.data(), got.size(), off);
    if (corrupt_for_test) corrupt_for_test(op, shape.size_bytes, in_place, got);
    const float s = static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
    std::int64_t wrong = 0;
    for (std::size_t j = 0; j < got.size(); ++j) {
      float want = 0;
      switch (op) {
        case CollectiveOp::kAllReduce:
          want = s * element_pattern(j);
          break;
        case CollectiveOp::kReduceScatter: {
          const std::size_t gi = static_cast<std::size_t>(r) * shape.count + j;
          want = s * element_pattern(gi);
          break;
        }
        case CollectiveOp::kAllGather: {
          want = input_value(static_cast<int>(j / shape.count), j % shape.count);
          break;
        }
        case CollectiveOp::kBroadcast:
          want = input_value(root, j);
          break;
        case CollectiveOp::kReduce:
          DDPSIM_ASSERT(false, "the sweeps run no reduce");
      }
      if (got[j] != want) ++wrong;
    }
    return wrong;
  }
};

bool has_redop(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Linear interpolation between order statistics (as calib::summarize).
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(x);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (x - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

nlohmann::json measure(Communicator& c, Case& k, int warmup, int iters, const SweepOptions& o) {
  const int n = c.size();
  // One checked call first (it also warms up), then the untimed and the timed calls.
  k.upload_inputs();
  k.run(c);
  const std::int64_t wrong = k.count_wrong(c, o.corrupt_output_for_test);
  for (int i = 1; i < warmup; ++i) k.run(c);
  c.barrier();
  std::vector<double> mine(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    k.run(c);
    mine[static_cast<std::size_t>(i)] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  // Share every rank's times and wrong count: each rank fills its own slot, a sum collects them.
  const std::size_t slot = static_cast<std::size_t>(iters) + 1;
  std::vector<float> all(slot * static_cast<std::size_t>(n), 0.0f);
  float* own = all.data() + slot * static_cast<std::size_t>(c.rank());
  for (int i = 0; i < iters; ++i) own[i] = static_cast<float>(mine[static_cast<std::size_t>(i)]);
  own[iters] = static_cast<float>(wrong);
  auto buf = c.allocate(all.size());
  buf->upload(all.data(), all.size());
  c.all_reduce(buf->data(), buf->data(), all.size());
  buf->download(all.data(), all.size());

  std::vector<double> slowest(static_cast<std::size_t>(iters), 0.0);
  double wrong_total = 0;
  for (int r = 0; r < n; ++r) {
    const float* row = all.data() + slot * static_cast<std::size_t>(r);
    for (int i = 0; i < iters; ++i) {
      slowest[static_cast<std::size_t>(i)] =
          std::max<double>(slowest[static_cast<std::size_t>(i)], row[i]);
    }
    wrong_total += row[iters];
  }
  const double t_us = median(slowest);
  const double algbw = static_cast<double>(k.shape.size_bytes) / (t_us * 1e-6) / 1e9;
  return {{"size_bytes", k.shape.size_bytes},
          {"count", k.shape.count},
          {"in_place", k.in_place},
          {"repeats", iters},
          {"time_us", t_us},
          {"time_us_mean", mean_of(slowest)},
          {"time_us_min", *std::min_element(slowest.begin(), slowest.end())},
          {"time_us_max", *std::max_element(slowest.begin(), slowest.end())},
          {"time_us_p10", percentile(slowest, 0.10)},
          {"time_us_p90", percentile(slowest, 0.90)},
          {"algbw_gbytes_per_s", algbw},
          {"busbw_gbytes_per_s", algbw * model::busbw_factor(k.op, n)},
          {"wrong", static_cast<std::int64_t>(wrong_total)}};
}

SweepOptions effective(const SweepOptions& in) {
  SweepOptions o = in;
  // An explicit max_bytes is kept with quick: `ddpsim validate` sweeps quickly up to the
  // largest bucket it will predict (a quick sweep that stopped at 4 MiB left 8-64 MiB buckets
  // to the fit's extrapolation, 25-40% short on this VM).
  if (o.max_bytes == 0) o.max_bytes = o.quick ? std::int64_t{4} << 20 : std::int64_t{256} << 20;
  if (o.iters == 0) o.iters = o.quick ? 5 : 20;
  if (o.quick) o.warmup = std::min(o.warmup, 2);
  if (o.min_bytes < 4) throw Error("collective sweep: min_bytes must be >= 4 (one float)");
  if (o.max_bytes < o.min_bytes) throw Error("collective sweep: max_bytes < min_bytes");
  if (o.step_factor < 2) throw Error("collective sweep: step_factor must be >= 2");
  if (o.iters < 1 || o.warmup < 1) throw Error("collective sweep: iters and warmup must be >= 1");
  if (!(o.size_offset >= 1.0 && o.size_offset < static_cast<double>(o.step_factor))) {
    throw Error("collective sweep: size_offset must be in [1, step_factor)");
  }
  if (o.min_iters < 1 || o.full_iters_bytes < 1) {
    throw Error("collective sweep: min_iters and full_iters_bytes must be >= 1");
  }
  return o;
}

int warmup_at(const SweepOptions& o, std::int64_t size_bytes) {
  if (size_bytes <= o.full_iters_bytes) return o.warmup;
  const double scaled = static_cast<double>(o.warmup) * static_cast<double>(o.full_iters_bytes) /
                        static_cast<double>(size_bytes);
  return std::max(1, std::min(o.warmup, static_cast<int>(std::ceil(scaled))));
}

}  // namespace

std::vector<std::int64_t> sweep_sizes(const SweepOptions& in_opts) {
  const SweepOptions o = effective(in_opts);
  std::vector<std::int64_t> sizes;
  for (double x = static_cast<double>(o.min_bytes) * o.size_offset;
       x <= static_cast<double>(o.max_bytes) * (1 + 1e-12);
       x *= static_cast<double>(o.step_factor)) {
    // Whole floats: a size that is not a multiple of 4 would be measured as the smaller one.
    const std::int64_t b = static_cast<std::int64_t>(std::floor(x / 4 + 1e-9)) * 4;
    if (b >= 4 && (sizes.empty() || b != sizes.back())) sizes.push_back(b);
  }
  return sizes;
}

int iters_at(const SweepOptions& in_opts, std::int64_t size_bytes) {
  const SweepOptions o = effective(in_opts);
  if (size_bytes <= o.full_iters_bytes) return o.iters;
  const double scaled = static_cast<double>(o.iters) * static_cast<double>(o.full_iters_bytes) /
                        static_cast<double>(size_bytes);
  return std::min(o.iters, std::max(o.min_iters, static_cast<int>(std::ceil(scaled))));
}

void verify_sweep(const nlohmann::json& section) {
  std::string bad;
  std::int64_t total = 0;
  for (const auto& [name, entry] : section.at("ops").items()) {
    for (const auto& row : entry.at("rows")) {
      const std::int64_t w = row.value("wrong", std::int64_t{0});
      if (w <= 0) continue;
      total += w;
      bad += fmt::format("{}{} {} B {}: {} wrong element(s)", bad.empty() ? "" : "; ", name,
                         row.at("size_bytes").get<std::int64_t>(),
                         row.at("in_place").get<bool>() ? "in place" : "out of place", w);
    }
  }
  if (total > 0) {
    throw Error("collective results checked and found wrong, not fitted: " + bad);
  }
}

nlohmann::json run_sweep(Communicator& comm, const SweepOptions& in_opts,
                         const std::function<void(const std::string&)>& progress) {
  const SweepOptions o = effective(in_opts);
  if (o.root < 0 || o.root >= comm.size()) throw Error("collective sweep: root outside the group");

  const int n = comm.size();
  nlohmann::json ops = nlohmann::json::object();
  for (CollectiveOp op : o.ops) {
    nlohmann::json rows = nlohmann::json::array();
    for (const std::int64_t bytes : sweep_sizes(o)) {
      const Shape s = shape_for(op, bytes, n);
      if (s.count == 0) continue;
      const int iters = iters_at(o, s.size_bytes);
      const int warmup = warmup_at(o, s.size_bytes);
      nlohmann::json row_out, row_in;
      {
        Case k(comm, op, s, false, o.root);
        row_out = measure(comm, k, warmup, iters, o);
      }
      rows.push_back(row_out);
      if (o.in_place_too) {
        Case k(comm, op, s, true, o.root);
        row_in = measure(comm, k, warmup, iters, o);
        rows.push_back(row_in);
      }
      if (comm.rank() == 0 && progress) {
        progress(format_row(op, row_out, o.in_place_too ? &row_in : nullptr, o.root));
      }
    }
    nlohmann::json entry = {
        {"dtype", "float32"}, {"redop", has_redop(op) ? "sum" : "none"}, {"rows", rows}};
    if (op == CollectiveOp::kBroadcast) entry["root"] = o.root;
    ops[std::string(model::collective_op_name(op))] = entry;
  }
  if (comm.rank() != 0) return nullptr;
  const int local = o.ranks_per_node > 0 ? o.ranks_per_node : n;
  return {{"backend", comm.backend()},
          {"version", comm.version()},
          {"ranks", n},
          {"nodes", (n + local - 1) / local},
          {"transport", comm.transport()},
          {"source", "ddpsim calibrate"},
          {"ops", ops}};
}

std::string format_header() {
  return "#                                                              out-of-place"
         "                       in-place\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
         "     (us)  (GB/s)  (GB/s)\n";
}

std::string format_row(CollectiveOp op, const nlohmann::json& out_of_place,
                       const nlohmann::json* in_place, int root) {
  auto cols = [](const nlohmann::json& r) {
    const double t = r.at("time_us").get<double>();
    return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:5}",
                       t < 1e4 ? fmt::format("{:.2f}", t) : fmt::format("{:.0f}", t),
                       r.at("algbw_gbytes_per_s").get<double>(),
                       r.at("busbw_gbytes_per_s").get<double>(), r.at("wrong").get<std::int64_t>());
  };
  std::string line = fmt::format(
      "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", out_of_place.at("size_bytes").get<std::int64_t>(),
      out_of_place.at("count").get<std::int64_t>(), "float", has_redop(op) ? "sum" : "none",
      op == CollectiveOp::kBroadcast ? root : -1);
  line += cols(out_of_place);
  if (in_place) line += cols(*in_place);
  return line;
}

namespace {
std::optional<std::string> read_first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return line;
}

// "Q P" of cgroup v2's cpu.max, or Q and P of v1's two files: Q/P CPUs, none for "max" or -1.
std::optional<double> quota_over_period(const std::string& quota, const std::string& period) {
  if (quota == "max" || quota == "-1") return std::nullopt;
  try {
    std::size_t qn = 0, pn = 0;
    const double q = std::stod(quota, &qn);
    const double per = std::stod(period, &pn);
    if (qn != quota.size() || pn != period.size() || !(q > 0) || !(per > 0)) return std::nullopt;
    return q / per;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> smaller(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}
}  // namespace

std::optional<double> cgroup_cpu_quota(const std::string& proc_self_cgroup,
                                       const std::string& cgroup_root) {
  namespace fs = std::filesystem;
  std::ifstream f(proc_self_cgroup);
  if (!f) return std::nullopt;
  // The smallest limit from a hierarchy's top down to this process's cgroup (a parent's quota,
  // e.g. a systemd slice or a pod, binds its children); only the top when the process's path is
  // not mounted here.
  auto along_path = [](const fs::path& mount, const fs::path& sub, auto limit_in) {
    std::vector<fs::path> dirs{mount};
    for (const fs::path& c : sub) {
      if (!c.empty()) dirs.push_back(dirs.back() / c);
    }
    std::error_code ec;
    if (!fs::is_directory(dirs.back(), ec)) dirs.resize(1);
    std::optional<double> best;
    for (const fs::path& d : dirs) best = smaller(best, limit_in(d));
    return best;
  };
  auto v2_limit = [](const fs::path& d) -> std::optional<double> {
    const auto text = read_first_line(d / "cpu.max");  // "max 100000" or "250000 100000"
    const auto sp = text ? text->find(' ') : std::string::npos;
    if (sp == std::string::npos) return std::nullopt;
    return quota_over_period(text->substr(0, sp), text->substr(sp + 1));
  };
  auto v1_limit = [](const fs::path& d) -> std::optional<double> {
    const auto q = read_first_line(d / "cpu.cfs_quota_us");
    const auto per = read_first_line(d / "cpu.cfs_period_us");
    if (!q || !per) return std::nullopt;
    return quota_over_period(*q, *per);
  };
  std::optional<double> best;
  const fs::path root(cgroup_root);
  std::string line;
  while (std::getline(f, line)) {  // "ID:controllers:path"
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a);
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const fs::path sub = fs::path(line.substr(b + 1)).relative_path();
    if (id == "0" && controllers.empty()) {  // cgroup v2
      best = smaller(best, along_path(root, sub, v2_limit));
      continue;
    }
    bool has_cpu = false;  // v1: a comma-separated list such as "cpu,cpuacct"
    for (std::size_t s = 0; s <= controllers.size();) {
      const auto e = std::min(controllers.find(',', s), controllers.size());
      has_cpu |= controllers.compare(s, e - s, "cpu") == 0;
      s = e + 1;
    }
    if (!has_cpu) continue;
    for (const fs::path& mount : {root / "cpu", root / controllers}) {
      std::error_code ec;
      if (!fs::is_directory(mount, ec)) continue;
      best = smaller(best, along_path(mount, sub, v1_limit));
      break;
    }
  }
  return best;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const auto quota = cgroup_cpu_quota();
  if (quota && *quota < cores) cores = static_cast<int>(std::floor(*quota));
  return std::max(1, cores);
}

std::string oversubscription_note(const std::string& backend, int local_ranks, int cores) {
  if (backend != "gloo" || 2 * local_ranks <= cores) return {};
  return fmt::format(
      "{} Gloo ranks x 2 busy threads (caller and event loop) on {} core(s): a call can wait a "
      "scheduler tick (4 ms at HZ=250) when a rank's two threads share a core, so collective "
      "times mix a fast and a slow mode (most at 64 KiB-4 MiB, where a tick is a large part of "
      "a call) and need not repeat within 10% from run to run; {} cores give each rank two",
      local_ranks, cores, 2 * local_ranks);
}

}  // namespace ddpsim::comm
