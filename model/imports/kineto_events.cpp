// The SAX reader of kineto_events.hpp. Each open container has a role (the root, the event
// array, one event, its args, distributedInfo, a list inside args, anything else); a value is
// kept only when its role and key say it is one of the fields above.
#include "model/imports/kineto_events.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "model/error.hpp"
#include "model/trace_file.hpp"

namespace ddpsim::model {

namespace {

using nlohmann::json;

EventKind kind_of(std::string_view cat) {
  if (cat == "cpu_op" || cat == "Operator") return EventKind::kOp;
  if (cat == "user_annotation") return EventKind::kAnnotation;
  if (cat == "python_function") return EventKind::kPython;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") {
    return EventKind::kRuntime;
  }
  if (cat == "kernel" || cat == "Kernel") return EventKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return EventKind::kMemset;
  if (cat == "gpu_user_annotation") return EventKind::kGpuAnnotation;
  return EventKind::kOther;
}

enum class Role : std::uint8_t { kRoot, kEvents, kEvent, kArgs, kDist, kArgList, kOther };

// The event being read: its fields arrive in any order.
struct Pending {
  std::string ph, name, cat, pid, tid;
  bool has_ts = false, has_dur = false;
  double ts = 0, dur = 0;
  std::int64_t ext = kNoId, corr = kNoId, seq = kNoId;
  CollectiveArgs args;
  bool has_args = false;
  std::string bad;  // the first malformed field, for the error
  void reset() { *this = Pending(); }
};

class KinetoSaxReader : public json::json_sax_t {
 public:
  KinetoSaxReader(KinetoTrace& out, const std::string& file) : t_(out), file_(file) {}

  bool null() override { return scalar(Value{}); }
  bool boolean(bool) override { return scalar(Value{}); }
  bool number_integer(number_integer_t v) override {
    return scalar(Value{true, static_cast<double>(v), v});
  }
  bool number_unsigned(number_unsigned_t v) override {
    const auto i = v > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())
                       ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(v);
    return scalar(Value{true, static_cast<double>(v), i});
  }
  bool number_float(number_float_t v, const string_t&) override {
    const bool whole = std::isfinite(v) && std::fabs(v) < 9.2e18;
    return scalar(Value{true, v, whole ? static_cast<std::int64_t>(v) : kNoId});
  }
  bool string(string_t& s) override {
    Value v;
    v.text = &s;
    return scalar(v);
  }
  bool binary(binary_t&) override { return scalar(Value{}); }

  bool start_object(std::size_t) override {
    check_depth();
    const Role parent = stack_.empty() ? Role::kOther : stack_.back();
    Role r = Role::kOther;
    if (stack_.empty()) {
      r = Role::kRoot;
    } else if (parent == Role::kEvents) {
      r = Role::kEvent;
      ev_.reset();
      ++t_.array_entries;
    } else if (parent == Role::kEvent && key_ == "args") {
      r = Role::kArgs;
    } else if (parent == Role::kRoot && key_ == "distributedInfo") {
      r = Role::kDist;
    }
    stack_.push_back(r);
    return true;
  }
  bool end_object() override {
    if (stack_.back() == Role::kEvent) finish_event();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    check_depth();
    const Role parent = stack_.empty() ? Role::kOther : stack_.back();
    Role r = Role::kOther;
    if (stack_.empty()) {
      r = Role::kEvents;
      t_.bare_array = true;
    } else if (parent == Role::kRoot && key_ == "traceEvents") {
      r = Role::kEvents;
      t_.has_trace_events = true;
    } else if (parent == Role::kArgList) {
      r = Role::kArgList;
      ++list_depth_;
    } else if (parent == Role::kArgs && (key_ == "Input Dims" || key_ == "Input type")) {
      r = Role::kArgList;
      list_key_ = key_;
      list_open_ = true;
      list_depth_ = 1;
      dims_product_ = 1;
      dims_seen_ = false;
    } else if (parent == Role::kEvents) {
      ++t_.array_entries;
    }
    stack_.push_back(r);
    return true;
  }
  bool end_array() override {
    if (stack_.back() == Role::kArgList) {
      // "Input Dims": [[d0, d1], ...]: the first inner list is the first tensor's shape.
      if (list_depth_ == 2 && list_key_ == "Input Dims" && list_open_) {
        if (dims_seen_) {
          ev_.args.in_nelems = dims_product_;
          ev_.has_args = true;
        }
        list_open_ = false;
      }
      --list_depth_;
    }
    stack_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    if (stack_.size() == 1 && stack_.back() == Role::kRoot && t_.top_keys.size() < 8) {
      t_.top_keys.push_back(k);
    }
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&,
                   const nlohmann::detail::exception& e) override {
    if (e.id == 101 && byte <= 1 && t_.array_entries == 0 && stack_.empty()) {
      throw InputError(file_, "", "a PyTorch profiler trace (JSON)", "an empty file");
    }
    throw InputError(file_, "", "valid JSON", "a syntax error at byte " + std::to_string(byte));
  }

 private:
  struct Value {
    bool number = false;
    double d = 0;
    std::int64_t i = kNoId;
    const std::string* text = nullptr;
  };

  bool scalar(const Value& v) {
    if (stack_.empty()) return true;  // a bare scalar document: nothing to keep
    switch (stack_.back()) {
      case Role::kEvents:
        ++t_.array_entries;
        break;
      case Role::kEvent:
        event_field(v);
        break;
      case Role::kArgs:
        arg_field(v);
        break;
      case Role::kDist:
        if (key_ == "rank" && v.number) t_.rank = static_cast<int>(v.i);
        if (key_ == "world_size" && v.number) t_.world_size = static_cast<int>(v.i);
        if (key_ == "backend" && v.text) t_.backend = *v.text;
        break;
      case Role::kArgList:
        if (!list_open_) break;
        if (list_key_ == "Input type" && v.text && !v.text->empty()) {
          if (ev_.args.dtype.empty()) ev_.args.dtype = *v.text;
          list_open_ = false;
        } else if (list_key_ == "Input Dims" && v.number && list_depth_ == 2) {
          dims_product_ = v.i > 0 && dims_product_ < (std::int64_t{1} << 50) ? dims_product_ * v.i
                                                                             : dims_product_;
          dims_seen_ = true;
        }
        break;
      default:
        break;
    }
    return true;
  }

  static std::string as_text(const Value& v) {
    if (v.text) return *v.text;
    if (v.number && v.i != kNoId) return std::to_string(v.i);
    if (v.number) return json(v.d).dump();
    return "null";
  }

  void event_field(const Value& v) {
    if (key_ == "ph") {
      ev_.ph = as_text(v);
    } else if (key_ == "name") {
      ev_.name = as_text(v);
    } else if (key_ == "cat") {
      ev_.cat = as_text(v);
    } else if (key_ == "pid") {
      ev_.pid = as_text(v);
    } else if (key_ == "tid") {
      ev_.tid = as_text(v);
    } else if (key_ == "ts" || key_ == "dur") {
      const bool ts = key_ == "ts";
      if (!v.number && ev_.bad.empty()) ev_.bad = "\"" + key_ + "\": " + as_text(v);
      (ts ? ev_.has_ts : ev_.has_dur) = v.number;
      (ts ? ev_.ts : ev_.dur) = v.d;
    }
  }

  void arg_field(const Value& v) {
    if (v.number && v.i != kNoId) {
      if (key_ == "External id" || key_ == "external id") ev_.ext = v.i;
      if (key_ == "correlation") ev_.corr = v.i;
      if (key_ == "Sequence number") ev_.seq = v.i;
      if (key_ == "In msg nelems") {
        ev_.args.in_nelems = v.i;
        ev_.has_args = true;
      }
      if (key_ == "Group size") {
        ev_.args.group_size = v.i;
        ev_.has_args = true;
      }
    } else if (v.text) {
      if (key_ == "Collective name") {
        ev_.args.collective = *v.text;
        ev_.has_args = true;
      }
      if (key_ == "dtype") {
        ev_.args.dtype = *v.text;
        ev_.has_args = true;
      }
    }
  }

  std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& m,
                       std::vector<std::string>& v, std::string s) {
    auto [it, added] = m.try_emplace(std::move(s), static_cast<std::uint32_t>(v.size()));
    if (added) v.push_back(it->first);
    return it->second;
  }

  void finish_event() {
    const std::size_t index = t_.array_entries - 1;
    if (ev_.ph != "X") return;
    if (!ev_.has_ts || !ev_.has_dur || !(ev_.dur >= 0) || !std::isfinite(ev_.ts) ||
        !std::isfinite(ev_.dur)) {
      std::string got = ev_.bad;
      if (got.empty()) got = !ev_.has_ts ? "no ts" : !ev_.has_dur ? "no dur" : "dur < 0";
      throw InputError(file_, "/traceEvents/" + std::to_string(index),
                       "a complete event (ph X) with numeric ts and dur >= 0", got);
    }
    // Microseconds in a double resolve 1 us up to 2^53 (285 years; Kineto's epoch timestamps
    // are ~1.7e15). Past it, a trace shifted by 1e300 read as steps of 0.000 ms.
    constexpr double kMaxUs = 9007199254740992.0;
    if (std::fabs(ev_.ts) > kMaxUs || ev_.dur > kMaxUs || std::fabs(ev_.ts + ev_.dur) > kMaxUs) {
      throw InputError(file_, "/traceEvents/" + std::to_string(index) + "/ts",
                       "ts and ts + dur within 2^53 us (9.0e15, where a double still resolves "
                       "1 us)",
                       json(ev_.ts).dump() + " and dur " + json(ev_.dur).dump());
    }
    TraceEvent e;
    e.ts = ev_.ts;
    e.dur = ev_.dur;
    e.ext = ev_.ext;
    e.corr = ev_.corr;
    e.seq = ev_.seq;
    e.kind = kind_of(ev_.cat);
    e.name = intern(name_ids_, t_.names, std::move(ev_.name));
    e.thread = intern(thread_ids_, t_.threads, ev_.pid + "/" + ev_.tid);
    const std::string& n = t_.names[e.name];
    // Sizes are kept for collectives only: Input Dims are on every op of a record_shapes trace.
    const bool collective = n.rfind("nccl", 0) == 0 || n.rfind("gloo:", 0) == 0 ||
                            n == "record_param_comms" || n.rfind("c10d::", 0) == 0 ||
                            !ev_.args.collective.empty();
    if (ev_.has_args && collective) {
      e.args = static_cast<std::int32_t>(t_.collective_args.size());
      t_.collective_args.push_back(std::move(ev_.args));
    }
    t_.events.push_back(e);
  }

  KinetoTrace& t_;
  const std::string& file_;
  std::vector<Role> stack_;
  // A trace nests 4 levels (root, traceEvents, event, args) plus arg lists; anything far deeper
  // is not a profiler trace (and nothing built from it may recurse that deep).
  void check_depth() const {
    if (stack_.size() >= 256) {
      throw InputError(file_, "", "a PyTorch profiler trace: JSON nested at most 256 levels deep",
                       "deeper nesting");
    }
  }
  std::string key_, list_key_;
  bool list_open_ = false, dims_seen_ = false;
  int list_depth_ = 0;
  std::int64_t dims_product_ = 1;
  Pending ev_;
  std::unordered_map<std::string, std::uint32_t> name_ids_, thread_ids_;
};

}  // namespace

KinetoTrace read_kineto_trace(std::istream& in, const std::string& file) {
  KinetoTrace t;
  KinetoSaxReader r(t, file);
  try {
    json::sax_parse(in, &r, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {
    std::string what = e.what();
    const auto bracket = what.find("] ");
    throw InputError(file, "", "valid JSON with finite numbers",
                     bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
  return t;
}

KinetoTrace read_kineto_file(const std::string& path) {
  TraceFile f(path, "a PyTorch profiler trace");
  // No trace has 64 MiB of whitespace or one 64 MiB name between two JSON separators.
  f.limit_json_runs(std::uint64_t{64} << 20);
  try {
    return read_kineto_trace(f.stream(), path);
  } catch (const InputError& e) {
    // The parser sees a leading NUL byte as the end of its input: a file of zeros is not empty.
    if (e.got() == "an empty file" && !f.gzipped() && f.file_bytes() > 0) {
      throw InputError(path, "", e.expected(),
                       "no JSON text: binary data (a NUL byte) at byte 0 of " +
                           std::to_string(f.file_bytes()) + " bytes");
    }
    throw;
  }
}

}  // namespace ddpsim::model
