// profile_keys.cpp: the key table of the calibration profile (model::profile_keys()): every key
// a profile may hold, with its type, unit, range and help. Profile::from_json validates a
// document against it (unknown keys and bad values name their JSON pointer); the reader is in
// profile.cpp, the lookups in profile_lookup.cpp.
#include "model/profile/profile_keys.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::model {

// The row builders below share their names (integer, choice, ...) with the scenario table's
// (detail/key_rows.hpp) but not their signatures: a namespace of their own keeps them apart when
// the files are compiled together (unity build).
namespace {
namespace profile_rows {

KeySpec key(std::string p, KeyType t, std::string help, bool required = false) {
  KeySpec k;
  k.pointer = std::move(p);
  k.type = t;
  k.help = std::move(help);
  k.required = required;
  return k;
}
KeySpec num(std::string p, std::string unit, double min, bool exclusive, std::string help,
            bool required = false) {
  KeySpec k = key(std::move(p), KeyType::kNumber, std::move(help), required);
  // Every time in a profile is one measured call or step: at most an hour (a 1e300 s GEMM
  // printed a 300-digit step time).
  if (unit == "s") k.maximum = 3600;
  if (unit == "us") k.maximum = 3.6e9;
  k.unit = std::move(unit);
  k.minimum = min;
  k.exclusive_minimum = exclusive;
  return k;
}
// Integer ceilings. Counts, ranks, repetitions and GEMM extents are read into int (cuBLAS's own
// m, n, k and batch count are int: cublasGemmEx, cublasGemmStridedBatchedEx), so they stop at
// INT32_MAX instead of wrapping (a `ranks` of 2^32 + 2 read as 2). Byte and element counts stop
// at 2^53, the largest integer a double holds exactly, where the cost model does their
// arithmetic.
constexpr double kIntMax = 2147483647.0;
constexpr double kExactInDouble = 9007199254740992.0;

KeySpec integer(std::string p, std::string unit, double min, std::string help,
                bool required = false, double max = kIntMax) {
  KeySpec k = key(std::move(p), KeyType::kInteger, std::move(help), required);
  k.unit = std::move(unit);
  k.minimum = min;
  k.maximum = max;
  return k;
}
KeySpec byte_count(std::string p, std::string unit, double min, std::string help,
                   bool required = false) {
  return integer(std::move(p), std::move(unit), min, std::move(help), required, kExactInDouble);
}
KeySpec choice(std::string p, std::vector<std::string> allowed, std::string help,
               bool required = false) {
  KeySpec k = key(std::move(p), KeyType::kString, std::move(help), required);
  k.allowed = std::move(allowed);
  return k;
}

// The operand dtypes a timed GEMM names.
const std::vector<std::string> kGemmDtypes = {"fp32", "fp16", "bf16", "fp8"};

void add_spread(std::vector<KeySpec>& t, const std::string& p) {
  t.push_back(integer(p + "/repeats", "", 1, "timed repetitions behind the median"));
  t.push_back(num(p + "/time_s", "s", 0, true, "median time of one call", true));
  t.push_back(num(p + "/time_min_s", "s", 0, true, "fastest repetition"));
  t.push_back(num(p + "/time_max_s", "s", 0, true, "slowest repetition"));
  t.push_back(num(p + "/time_p10_s", "s", 0, true, "10th percentile of the repetitions"));
  t.push_back(num(p + "/time_p90_s", "s", 0, true, "90th percentile of the repetitions"));
}

// The "machine" section: the fingerprint of the machine that measured (machine_fingerprint.hpp;
// machine_match.hpp says which fields must match).
void add_machine_keys(std::vector<KeySpec>& t) {
  const std::string m = "/machine";
  t.push_back(key(m, KeyType::kObject,
                  "fingerprint of the machine that measured (a profile without it is an unknown "
                  "machine's)"));
  t.push_back(key(m + "/host", KeyType::kString, "host name"));
  t.push_back(key(m + "/date", KeyType::kString, "when it was measured (UTC, ISO 8601)"));
  t.push_back(key(m + "/cpu_model", KeyType::kString, "/proc/cpuinfo model name", true));
  t.push_back(integer(m + "/logical_cpus", "CPUs", 0, "online logical CPUs", true));
  t.push_back(integer(m + "/affinity_cpus", "CPUs", 1, "CPUs the process may run on"));
  t.push_back(num(m + "/cpu_quota_cores", "cores", 0, true,
                  "cgroup CPU quota / period (absent: no quota)"));
  t.push_back(key(m + "/cpu_quota_source", KeyType::kString, "the cgroup file of the quota"));
  t.push_back(num(m + "/usable_cores", "cores", 0, true, "min(affinity CPUs, quota)", true));
  t.push_back(num(m + "/memory_bytes", "bytes", 0, false, "MemTotal"));
  t.push_back(
      num(m + "/memory_limit_bytes", "bytes", 0, true, "cgroup memory limit (absent: unlimited)"));
  t.push_back(key(m + "/kernel", KeyType::kString, "uname release"));
  t.push_back(key(m + "/libraries", KeyType::kObject,
                  "versions of the measuring libraries (openblas, gloo, nccl, cuda) and compiler"));
  t.push_back(key(m + "/libraries/{}", KeyType::kString, "a version"));
}

// The profile's keys: the file's marker, context, machine and what was measured.
void add_header_keys(std::vector<KeySpec>& t) {
  t.push_back(choice("/format", {"ddpsim-profile"}, "file format marker", true));
  {
    KeySpec v = integer("/format_version", "", 1, "format version", true);
    v.maximum = 1;
    t.push_back(v);
  }
  {
    KeySpec c = key("/context", KeyType::kObject,
                    "where and how it was measured (host, CPU, GPU, libraries, date, command)");
    c.pattern = "free";
    t.push_back(c);
  }
  add_machine_keys(t);
  t.push_back(choice("/backend", {"cpu", "cuda", "import"}, "what was measured"));
  t.push_back(integer("/ranks", "processes", 1, "ranks that measured concurrently"));
  t.push_back(key("/scenario", KeyType::kString, "the scenario whose GEMMs were measured"));
  t.push_back(key("/notes", KeyType::kArray, "remarks of the calibration run"));
  t.push_back(key("/notes/*", KeyType::kString, "a remark"));
}

// The profile's keys: the timed GEMMs.
void add_gemm_keys(std::vector<KeySpec>& t) {
  t.push_back(key("/gemms", KeyType::kArray, "timed GEMMs"));
  t.push_back(key("/gemms/*", KeyType::kObject, "one GEMM shape x dtype x batch"));
  t.push_back(key("/gemms/*/ops", KeyType::kArray, "the workload GEMMs of this shape"));
  t.push_back(key("/gemms/*/ops/*", KeyType::kString, "a GEMM name (e.g. fc1.fwd)"));
  t.push_back(key("/gemms/*/layer", KeyType::kString, "layer of the first GEMM"));
  t.push_back(choice("/gemms/*/role", {"forward", "input_grad", "weight_grad"}, "pass"));
  for (const char* d : {"m", "n", "k"}) {
    t.push_back(integer(std::string("/gemms/*/") + d, "", 1, "GEMM extent", true));
  }
  t.push_back(integer("/gemms/*/count", "", 1, "independent instances (default 1)"));
  t.push_back(key("/gemms/*/transa", KeyType::kBoolean, "A is stored transposed", true));
  t.push_back(key("/gemms/*/transb", KeyType::kBoolean, "B is stored transposed", true));
  t.push_back(choice("/gemms/*/dtype", kGemmDtypes, "operand dtype", true));
  t.push_back(integer("/gemms/*/batch", "samples", 1, "micro-batch the shape was built at", true));
  t.push_back(choice("/gemms/*/batch_dim", {"m", "n", "k", "count", "none"},
                     "extent that grows with the batch (none: a grid shape)"));
  add_spread(t, "/gemms/*");
  t.push_back(num("/gemms/*/gflops", "GFLOP/s", 0, false, "2mnk*count / median time / 1e9"));
  t.push_back(key("/gemms/*/device", KeyType::kString, "cpu or cuda:<index>"));
  t.push_back(key("/gemms/*/library", KeyType::kString, "openblas, cublas, ..."));
  t.push_back(choice("/gemms/*/operands", {"cold", "warm"},
                     "cold: operands from memory, as in a training step; warm: cache-resident"));
}

// The profile's keys: memory bandwidth and memory-bound kernels.
void add_memory_keys(std::vector<KeySpec>& t) {
  t.push_back(key("/memory_bandwidth", KeyType::kArray, "streaming bandwidth kernels"));
  t.push_back(key("/memory_bandwidth/*", KeyType::kObject, "one kernel"));
  t.push_back(key("/memory_bandwidth/*/kernel", KeyType::kString,
                  "copy, triad (CPU, STREAM) or d2d_copy (GPU)", true));
  t.push_back(key("/memory_bandwidth/*/device", KeyType::kString, "cpu or cuda:<index>"));
  t.push_back(byte_count("/memory_bandwidth/*/bytes", "bytes", 1, "bytes moved per call"));
  t.push_back(integer("/memory_bandwidth/*/ranks_concurrent", "processes", 1,
                      "ranks that ran the kernel at the same time"));
  add_spread(t, "/memory_bandwidth/*");
  t.push_back(num("/memory_bandwidth/*/gbytes_per_s", "GB/s", 0, true, "median, 1e9 B/s", true));
  t.push_back(num("/memory_bandwidth/*/gbytes_per_s_min", "GB/s", 0, true, "slowest"));
  t.push_back(num("/memory_bandwidth/*/gbytes_per_s_max", "GB/s", 0, true, "fastest"));

  t.push_back(key("/kernels", KeyType::kArray, "memory-bound kernels"));
  t.push_back(key("/kernels/*", KeyType::kObject, "one kernel at one size"));
  t.push_back(key("/kernels/*/name", KeyType::kString, "adam_fp32, cast_fp32_bf16, ...", true));
  t.push_back(key("/kernels/*/device", KeyType::kString, "cpu or cuda:<index>"));
  t.push_back(byte_count("/kernels/*/elements", "elements", 1, "elements processed per call"));
  t.push_back(byte_count("/kernels/*/bytes", "bytes", 1, "bytes read + written per call"));
  add_spread(t, "/kernels/*");
  t.push_back(num("/kernels/*/gbytes_per_s", "GB/s", 0, true, "bytes / median time / 1e9"));
}

// The profile's keys: the collective sweeps and their fits.
void add_collective_keys(std::vector<KeySpec>& t) {
  const std::string c = "/collectives";
  t.push_back(key(c, KeyType::kObject, "collective sweep (nccl-tests vocabulary)"));
  t.push_back(key(c + "/backend", KeyType::kString, "gloo, nccl"));
  t.push_back(key(c + "/version", KeyType::kString, "library version"));
  t.push_back(integer(c + "/ranks", "ranks", 1, "ranks in the collective", true));
  t.push_back(integer(c + "/nodes", "nodes", 1, "hosts the ranks ran on"));
  t.push_back(key(c + "/nccl_env", KeyType::kObject,
                  "NCCL_* variables the log's INFO lines say were set by the environment"));
  t.push_back(key(c + "/nccl_env/{}", KeyType::kString, "the value as printed"));
  t.push_back(integer(c + "/gpus_per_process", "GPUs", 1,
                      "GPUs one thread launched (nccl-tests -g N; its small calls carry N host "
                      "launches a process-per-GPU job does not)"));
  t.push_back(key(c + "/transport", KeyType::kString, "tcp, nccl, ..."));
  t.push_back(key(c + "/source", KeyType::kString, "ddpsim calibrate or the imported file"));
  t.push_back(key(c + "/ops", KeyType::kObject, "one table per collective", true));
  const std::string o = c + "/ops/{}";
  t.push_back(key(o, KeyType::kObject, "all_reduce, reduce_scatter, all_gather or broadcast"));
  t.push_back(key(o + "/dtype", KeyType::kString, "element type (float32)"));
  t.push_back(key(o + "/redop", KeyType::kString, "reduction (sum, none)"));
  t.push_back(integer(o + "/root", "rank", 0, "broadcast root"));
  {
    KeySpec rows = key(o + "/rows", KeyType::kArray, "one row per size and placement", true);
    rows.minimum = 1;
    t.push_back(rows);
  }
  const std::string r = o + "/rows/*";
  t.push_back(key(r, KeyType::kObject, "one size"));
  t.push_back(byte_count(r + "/size_bytes", "bytes", 0, "bytes of the largest buffer", true));
  t.push_back(byte_count(r + "/count", "elements", 0, "elements (nccl-tests count)"));
  t.push_back(key(r + "/in_place", KeyType::kBoolean, "in-place call", true));
  t.push_back(integer(r + "/repeats", "", 1, "timed calls"));
  t.push_back(num(r + "/time_us", "us", 0, false, "median time of one call", true));
  t.push_back(num(r + "/time_us_mean", "us", 0, false,
                  "mean of the calls (nccl-tests' time column is an average)"));
  t.push_back(num(r + "/time_us_min", "us", 0, false, "fastest call"));
  t.push_back(num(r + "/time_us_max", "us", 0, false, "slowest call"));
  t.push_back(num(r + "/time_us_p10", "us", 0, false, "10th percentile of the calls"));
  t.push_back(num(r + "/time_us_p90", "us", 0, false, "90th percentile of the calls"));
  t.push_back(num(r + "/algbw_gbytes_per_s", "GB/s", 0, false, "size / time"));
  t.push_back(num(r + "/busbw_gbytes_per_s", "GB/s", 0, false, "algbw x nccl-tests factor"));
  t.push_back(integer(r + "/wrong", "elements", 0, "elements that differed from the expected"));
  const std::string f = o + "/fit";
  t.push_back(key(f, KeyType::kObject, "piecewise alpha-beta fit of the rows"));
  t.push_back(key(f + "/model", KeyType::kString, "what was fitted"));
  t.push_back(choice(f + "/rows", {"out_of_place", "in_place"}, "which rows were fitted"));
  t.push_back(num(f + "/r_squared", "", -1e300, false, "weighted R^2 over all rows"));
  t.push_back(num(f + "/rms_relative_error", "", 0, false, "rms of (fit - measured) / measured"));
  t.push_back(key(f + "/breakpoints_bytes", KeyType::kArray, "sizes where a segment ends"));
  t.push_back(num(f + "/breakpoints_bytes/*", "bytes", 0, true, "breakpoint"));
  t.push_back(key(f + "/segments", KeyType::kArray, "one line per size range", true));
  const std::string s = f + "/segments/*";
  t.push_back(key(s, KeyType::kObject, "t = alpha_s + beta_s_per_byte * size"));
  t.push_back(num(s + "/min_bytes", "bytes", 0, false, "smallest size fitted", true));
  t.push_back(num(s + "/max_bytes", "bytes", 0, false, "largest size fitted", true));
  t.push_back(integer(s + "/points", "", 1, "rows fitted"));
  t.push_back(num(s + "/alpha_s", "s", 0, false, "intercept", true));
  t.push_back(num(s + "/beta_s_per_byte", "s/B", 0, false, "slope", true));
  t.push_back(num(s + "/algbw_gbytes_per_s", "GB/s", 0, true, "1 / beta"));
  t.push_back(num(s + "/busbw_gbytes_per_s", "GB/s", 0, true, "busbw factor / beta"));
  t.push_back(num(s + "/latency_per_step_us", "us", 0, false, "alpha / ring steps"));
  t.push_back(num(s + "/r_squared", "", -1e300, false, "weighted R^2 of the segment"));
  t.push_back(num(s + "/rms_relative_error", "", 0, false, "rms relative residual"));
  t.push_back(key(f + "/residuals", KeyType::kArray, "per fitted row"));
  t.push_back(key(f + "/residuals/*", KeyType::kObject, "one row"));
  t.push_back(num(f + "/residuals/*/size_bytes", "bytes", 0, false, "size", true));
  t.push_back(num(f + "/residuals/*/time_us", "us", 0, false, "measured", true));
  t.push_back(num(f + "/residuals/*/fit_us", "us", -1e300, false, "fitted", true));
  t.push_back(num(f + "/residuals/*/relative", "", -1e300, false, "(fit - measured) / measured"));
}

// The profile's keys: compute beside a collective.
void add_interference_keys(std::vector<KeySpec>& t) {
  const std::string in = "/interference";
  t.push_back(key(in, KeyType::kObject,
                  "compute slowdown of a GEMM while a collective runs on a communication thread"));
  {
    KeySpec fk =
        num(in + "/factor", "", 1, false,
            "max(1, ratio): the slowdown the simulator applies (simulation.interference)", true);
    fk.maximum = 100;
    t.push_back(fk);
  }
  t.push_back(num(in + "/ratio", "", 0, true,
                  "mean concurrent GEMM time / mean alone (medians in profiles without means; "
                  "< 1 only by noise)"));
  t.push_back(num(in + "/ratio_median", "", 0, true, "median concurrent / median alone"));
  t.push_back(choice(in + "/op", {"all_reduce", "reduce_scatter", "all_gather", "broadcast"},
                     "the collective that ran concurrently", true));
  t.push_back(
      byte_count(in + "/collective_bytes", "bytes", 1, "message size of that collective", true));
  t.push_back(integer(in + "/ranks", "processes", 1, "ranks that measured concurrently"));
  t.push_back(key(in + "/method", KeyType::kString, "how it was measured"));
  t.push_back(key(in + "/gemm", KeyType::kObject, "the GEMM timed", true));
  for (const char* d : {"m", "n", "k"}) {
    t.push_back(integer(in + "/gemm/" + d, "", 1, "GEMM extent", true));
  }
  t.push_back(integer(in + "/gemm/count", "", 1, "independent instances (default 1)"));
  t.push_back(key(in + "/gemm/transa", KeyType::kBoolean, "A is stored transposed"));
  t.push_back(key(in + "/gemm/transb", KeyType::kBoolean, "B is stored transposed"));
  t.push_back(choice(in + "/gemm/dtype", kGemmDtypes, "operand dtype"));
  t.push_back(key(in + "/per_rank_ratio", KeyType::kArray, "each rank's own ratio"));
  t.push_back(num(in + "/per_rank_ratio/*", "", 0, true, "that rank's ratio"));
  t.push_back(key(in + "/alone", KeyType::kObject, "GEMM with no collective in flight", true));
  add_spread(t, in + "/alone");
  t.push_back(num(in + "/alone/time_mean_s", "s", 0, true, "mean time of one call"));
  t.push_back(key(in + "/concurrent", KeyType::kObject,
                  "the same GEMM while the collective runs on another thread", true));
  add_spread(t, in + "/concurrent");
  t.push_back(num(in + "/concurrent/time_mean_s", "s", 0, true, "mean time of one call"));
  t.push_back(num(in + "/concurrent/overlap_fraction", "", 0, false,
                  "share of the concurrent GEMMs that ran entirely while a collective was in "
                  "flight"));
  t.push_back(integer(in + "/collectives_completed", "", 0,
                      "collectives the communication thread finished during the concurrent "
                      "phase"));
}

// The profile's keys: the torch section.
void add_torch_keys(std::vector<KeySpec>& t) {
  // Written by ddpsim-calibrate --backend torch (calibrate/torch/torch_calibrate.py): the
  // scenario's layers, optimizer and gloo all-reduce timed through PyTorch itself, and their
  // contention with a synthetic compute (simulator/analytic/torch_profile.hpp reads it).
  const std::string tc = "/torch";
  t.push_back(key(tc, KeyType::kObject, "costs measured through PyTorch (--backend torch)"));
  t.push_back(key(tc + "/torch_version", KeyType::kString, "torch.__version__", true));
  t.push_back(integer(tc + "/ranks", "processes", 2, "ranks that ran at once", true));
  t.push_back(integer(tc + "/threads_per_rank", "", 1, "torch.set_num_threads per rank"));
  t.push_back(integer(tc + "/gloo_threads", "", 1, "ProcessGroupGloo worker threads"));
  t.push_back(key(tc + "/method", KeyType::kString, "how it was measured"));
  t.push_back(key(tc + "/utc", KeyType::kString, "when it was measured"));
  t.push_back(key(tc + "/load_average", KeyType::kArray, "1/5/15-minute load before"));
  t.push_back(num(tc + "/load_average/*", "", 0, false, "load average"));
  t.push_back(integer(tc + "/warmup_steps", "", 0, "steps before the timed ones"));
  t.push_back(integer(tc + "/iters", "", 1, "timed all-reduces per size and mode"));
  t.push_back(key(tc + "/workloads", KeyType::kArray, "one entry per calibrated workload", true));
  const std::string tw = tc + "/workloads/*";
  t.push_back(key(tw, KeyType::kObject, "one workload at one batch and optimizer"));
  t.push_back(key(tw + "/workload", KeyType::kString, "the workload's name", true));
  t.push_back(byte_count(tw + "/parameters", "", 1, "untied parameters", true));
  t.push_back(integer(tw + "/per_gpu_batch", "samples", 1, "micro-batch per rank", true));
  t.push_back(choice(tw + "/optimizer", {"sgd", "momentum", "adam", "adamw"}, "torch.optim", true));
  t.push_back(integer(tw + "/steps", "", 1, "timed steps behind the medians"));
  t.push_back(num(tw + "/forward_s", "s", 0, false, "median forward + loss"));
  t.push_back(num(tw + "/backward_s", "s", 0, false, "median loss.backward()"));
  t.push_back(num(tw + "/optimizer_s", "s", 0, false,
                  "median opt.step() + zero_grad(set_to_none=True)", true));
  t.push_back(byte_count(tw + "/optimizer_minor_faults", "", 0, "median minor page faults in it"));
  t.push_back(key(tw + "/layers", KeyType::kArray, "the workload's layers in order", true));
  t.push_back(key(tw + "/layers/*", KeyType::kObject, "one layer"));
  t.push_back(key(tw + "/layers/*/name", KeyType::kString, "the workload layer's name", true));
  t.push_back(num(tw + "/layers/*/forward_s", "s", 0, false, "median forward", true));
  t.push_back(num(tw + "/layers/*/backward_s", "s", 0, false, "median backward", true));
  t.push_back(key(tc + "/all_reduce", KeyType::kArray, "torch's gloo all_reduce per size", true));
  t.push_back(key(tc + "/all_reduce/*", KeyType::kObject, "one size"));
  t.push_back(byte_count(tc + "/all_reduce/*/size_bytes", "bytes", 1, "fp32 message size", true));
  t.push_back(
      num(tc + "/all_reduce/*/sync_s", "s", 0, true, "10%-trimmed mean, one at a time", true));
  t.push_back(num(tc + "/all_reduce/*/pair_s", "s", 0, true,
                  "10%-trimmed mean per all-reduce, two in flight", true));
  const std::string tn = tc + "/contention";
  t.push_back(key(tn, KeyType::kObject,
                  "a synthetic forward + backward and gloo all-reduces sharing the cores"));
  t.push_back(key(tn + "/compute", KeyType::kString, "the synthetic compute that was timed"));
  t.push_back(byte_count(tn + "/size_bytes", "bytes", 1, "each all-reduce's fp32 size", true));
  t.push_back(integer(tn + "/all_reduces_in_flight", "", 1, "all-reduces running at once"));
  t.push_back(integer(tn + "/reps", "", 1, "overlapped runs behind the medians"));
  t.push_back(integer(tn + "/compute_passes", "", 1,
                      "forward + backward passes in each timed compute window"));
  t.push_back(num(tn + "/compute_alone_s", "s", 0, true, "median compute window alone"));
  t.push_back(num(tn + "/compute_overlapped_s", "s", 0, true,
                  "median compute window with all-reduces running"));
  t.push_back(num(tn + "/all_reduce_alone_s", "s", 0, true, "median all-reduce alone"));
  t.push_back(num(tn + "/all_reduce_overlapped_s", "s", 0, false,
                  "median all-reduce that ran inside the compute"));
  t.push_back(integer(tn + "/all_reduces_inside_compute", "", 0,
                      "all-reduces that started and ended inside the compute"));
  t.push_back(
      integer(tn + "/compute_covered_reps", "", 0, "runs whose compute the all-reduces outlasted"));
  t.push_back(num(tn + "/compute_slowdown", "", 0, true,
                  "compute overlapped / alone, the largest size's", true));
  t.push_back(
      num(tn + "/all_reduce_slowdown", "", 0, true, "all-reduce inside the compute / alone", true));
  t.push_back(key(tn + "/by_size", KeyType::kArray,
                  "the same at 1 MiB, x4 up to the largest size (looked up per bucket)", true));
  const std::string tr = tn + "/by_size/*";
  t.push_back(key(tr, KeyType::kObject, "one all-reduce size"));
  t.push_back(byte_count(tr + "/size_bytes", "bytes", 1, "each all-reduce's fp32 size", true));
  t.push_back(num(tr + "/compute_slowdown", "", 0, true, "compute overlapped / alone", true));
  t.push_back(num(tr + "/all_reduce_slowdown", "", 0, true, "all-reduce inside / alone", true));
  t.push_back(num(tr + "/compute_alone_s", "s", 0, true, "median compute window alone"));
  t.push_back(num(tr + "/compute_overlapped_s", "s", 0, true, "median window overlapped"));
  t.push_back(num(tr + "/all_reduce_alone_s", "s", 0, true, "median all-reduce alone"));
  t.push_back(num(tr + "/all_reduce_overlapped_s", "s", 0, false, "median inside the compute"));
  t.push_back(integer(tr + "/all_reduces_inside_compute", "", 0, "all-reduces inside it"));
}

// The profile's keys: per-layer times imported from a profiler trace.
void add_layer_time_keys(std::vector<KeySpec>& t) {
  t.push_back(key("/layer_times", KeyType::kObject, "per-layer times from a profiler trace"));
  t.push_back(key("/layer_times/source", KeyType::kString, "the trace file"));
  t.push_back(key("/layer_times/device", KeyType::kString, "gpu (kernel times) or cpu (op times)"));
  t.push_back(key("/layer_times/rule", KeyType::kString, "how times were attributed"));
  t.push_back(key("/layer_times/format", KeyType::kString,
                  "\"legacy autograd profiler\" for a bare-array trace (absent: Kineto)"));
  t.push_back(num("/layer_times/step_s", "s", 0, false, "wall time of the profiled step"));
  t.push_back(num("/layer_times/unattributed_s", "s", 0, false, "time not in any layer"));
  t.push_back(key("/layer_times/layers", KeyType::kArray, "layers in forward order", true));
  t.push_back(key("/layer_times/layers/*", KeyType::kObject, "one layer"));
  t.push_back(key("/layer_times/layers/*/name", KeyType::kString, "annotation name", true));
  t.push_back(num("/layer_times/layers/*/forward_s", "s", 0, false, "forward time", true));
  t.push_back(num("/layer_times/layers/*/backward_s", "s", 0, false, "backward time", true));
  t.push_back(integer("/layer_times/layers/*/forward_events", "", 0, "events summed"));
  t.push_back(integer("/layer_times/layers/*/backward_events", "", 0, "events summed"));
  // Added by the Kineto importer (model/imports/kineto_import.hpp): steps, phases, what was left
  // out of the layers, and the collectives of the traced step (model/imports/trace_comm.hpp).
  const std::string lt = "/layer_times";
  t.push_back(integer(lt + "/steps", "", 1, "profiled steps the times are means over"));
  t.push_back(num(lt + "/step_min_s", "s", 0, false, "shortest profiled step (CPU span)"));
  t.push_back(num(lt + "/cpu_step_s", "s", 0, false, "mean ProfilerStep span on the CPU"));
  t.push_back(num(lt + "/gpu_step_s", "s", 0, false, "span of the steps' GPU work per step"));
  t.push_back(num(lt + "/step_max_s", "s", 0, false, "longest profiled step"));
  t.push_back(key(lt + "/whole_model", KeyType::kBoolean,
                  "no module annotations: one layer, the whole model"));
  t.push_back(key(lt + "/phases", KeyType::kObject, "GPU (or CPU op) time per step by phase"));
  for (const char* p :
       {"forward_s", "backward_s", "optimizer_s", "data_loader_s", "communication_launch_s"}) {
    t.push_back(num(lt + "/phases/" + p, "s", 0, false, "time per step in that phase"));
  }
  t.push_back(key(lt + "/linkage", KeyType::kObject, "how GPU events were linked to ops"));
  for (const char* p : {"by_correlation", "by_external_id", "unlinked"}) {
    t.push_back(integer(lt + "/linkage/" + p, "", 0, "GPU events linked that way"));
  }
  t.push_back(key(lt + "/excluded", KeyType::kArray, "annotations that are not layers"));
  t.push_back(key(lt + "/excluded/*", KeyType::kObject, "one annotation name"));
  t.push_back(key(lt + "/excluded/*/name", KeyType::kString, "the annotation"));
  t.push_back(key(lt + "/excluded/*/kind", KeyType::kString, "what it is"));
  t.push_back(integer(lt + "/excluded/*/count", "", 0, "occurrences inside the steps"));
  t.push_back(num(lt + "/excluded/*/per_step_s", "s", 0, false, "its duration per step"));
  t.push_back(key(lt + "/warnings", KeyType::kArray, "what the import noticed"));
  t.push_back(key(lt + "/warnings/*", KeyType::kString, "one warning"));
  const std::string cm = lt + "/communication";
  t.push_back(key(cm, KeyType::kObject, "the collectives of the traced steps"));
  t.push_back(key(cm + "/backend", KeyType::kString, "nccl or gloo"));
  t.push_back(key(cm + "/source", KeyType::kString, "which events are the collectives"));
  t.push_back(integer(cm + "/world_size", "ranks", 1, "ranks of the job"));
  t.push_back(integer(cm + "/rank", "", 0, "the traced rank"));
  t.push_back(integer(cm + "/steps", "", 1, "profiled steps"));
  t.push_back(num(cm + "/collectives_per_step", "", 0, false, "collectives per step"));
  t.push_back(num(cm + "/comm_s", "s", 0, false, "summed collective time per step"));
  t.push_back(num(cm + "/exposed_s", "s", 0, false, "communication with no compute, per step"));
  t.push_back(key(cm + "/ops", KeyType::kObject, "per collective op"));
  t.push_back(key(cm + "/ops/{}", KeyType::kObject, "one op"));
  t.push_back(num(cm + "/ops/{}/count", "", 0, false, "calls per step"));
  t.push_back(
      num(cm + "/ops/{}/bytes", "bytes", 0, false, "bytes per step (when every size is known)"));
  t.push_back(key(cm + "/per_step", KeyType::kArray, "each profiled step"));
  t.push_back(key(cm + "/per_step/*", KeyType::kObject, "one step"));
  t.push_back(key(cm + "/per_step/*/step", KeyType::kString, "ProfilerStep#N"));
  t.push_back(num(cm + "/per_step/*/comm_s", "s", 0, false, "summed collective time"));
  t.push_back(num(cm + "/per_step/*/exposed_s", "s", 0, false, "exposed communication"));
  t.push_back(key(cm + "/per_step/*/collectives", KeyType::kArray, "in start order"));
  t.push_back(key(cm + "/per_step/*/collectives/*", KeyType::kObject, "one collective"));
  t.push_back(key(cm + "/per_step/*/collectives/*/op", KeyType::kString, "all_reduce, ..."));
  t.push_back(byte_count(cm + "/per_step/*/collectives/*/bytes", "bytes", 0, "message size"));
  t.push_back(key(cm + "/per_step/*/collectives/*/dtype", KeyType::kString,
                  "element type as the trace names it (Float, BFloat16, ...)"));
  t.push_back(key(cm + "/per_step/*/collectives/*/start_s", KeyType::kNumber,
                  "start, from the step's start"));
  t.push_back(
      key(cm + "/per_step/*/collectives/*/end_s", KeyType::kNumber, "end, from the step's start"));
}

std::vector<KeySpec> build_profile_keys() {
  std::vector<KeySpec> t;
  add_header_keys(t);
  add_gemm_keys(t);
  add_memory_keys(t);
  add_collective_keys(t);
  add_interference_keys(t);
  add_torch_keys(t);
  add_layer_time_keys(t);
  return t;
}

}  // namespace profile_rows
}  // namespace

const KeyTable& profile_keys() {
  static const KeyTable t{"calibration profile", profile_rows::build_profile_keys()};
  return t;
}

}  // namespace ddpsim::model
