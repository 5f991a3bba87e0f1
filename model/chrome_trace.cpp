#include "model/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "model/error.hpp"

namespace ddpsim::model {

namespace {

using nlohmann::json;

// Microseconds with exactly three decimals from integer nanoseconds, without rounding through a
// double; nlohmann would reformat such numbers, so the events are assembled as text.
std::string micros(std::int64_t ns) {
  const std::int64_t whole = ns / 1000;
  const std::int64_t frac = ns % 1000;
  if (ns < 0) return fmt::format("-{}.{:03}", -whole, -frac);
  return fmt::format("{}.{:03}", whole, frac);
}

void check_serial(const std::vector<TraceSpan>& spans) {
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> lanes;
  for (const TraceSpan& s : spans) lanes[{s.rank, s.stream}].emplace_back(s.start_ns, s.end_ns);
  for (auto& [lane, v] : lanes) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      DDPSIM_ASSERT(v[i].first >= v[i - 1].second, "overlapping spans on one stream");
    }
  }
}

json metadata_event(const char* name, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", args}};
}

}  // namespace

std::string chrome_trace_text(const std::vector<TraceSpan>& spans, const json& metadata,
                              const std::vector<int>& ranks, bool serial_streams) {
  std::set<int> shown(ranks.begin(), ranks.end());
  for (const TraceSpan& s : spans) {
    DDPSIM_ASSERT(s.end_ns >= s.start_ns, "a span ending before it starts");
    shown.insert(s.rank);
  }
  if (serial_streams) check_serial(spans);
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string& ev) {
    if (!first) out += ",\n";
    first = false;
    out += ev;
  };
  for (int r : shown) {
    add(metadata_event("process_name", r, 0, {{"name", "rank " + std::to_string(r)}}).dump());
    add(metadata_event("process_sort_index", r, 0, {{"sort_index", r}}).dump());
    add(metadata_event("thread_name", r, kComputeStream, {{"name", "compute"}}).dump());
    add(metadata_event("thread_name", r, kCommStream, {{"name", "communication"}}).dump());
  }
  for (const TraceSpan& s : spans) {
    json args = {{"step", s.step + 1}};
    if (!s.layer.empty()) args["layer"] = s.layer;
    if (s.bytes >= 0) args["bytes"] = s.bytes;
    const char* cat = s.stream == kComputeStream ? "compute" : "collective";
    add(
        fmt::format("{{\"ph\": \"X\", \"name\": {}, \"cat\": \"{}\", \"pid\": {}, \"tid\": {}, "
                    "\"ts\": {}, \"dur\": {}, \"args\": {}}}",
                    json(s.name).dump(), cat, s.rank, s.stream, micros(s.start_ns),
                    micros(s.end_ns - s.start_ns), args.dump()));
  }
  // Bytes in flight on each rank's communication stream: a counter that steps to a collective's
  // bytes when it starts and back to 0 when it ends (the stream is serial, so at most one
  // collective is in flight per rank). At equal times the 0 comes first, so back-to-back
  // collectives read as the next one's bytes.
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> counters;
  for (const TraceSpan& s : spans) {
    if (s.stream != kCommStream || s.bytes < 0) continue;
    counters[s.rank].emplace_back(s.start_ns, s.bytes);
    counters[s.rank].emplace_back(s.end_ns, 0);
  }
  for (auto& [rank, points] : counters) {
    std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    for (const auto& [t, bytes] : points) {
      add(
          fmt::format("{{\"ph\": \"C\", \"name\": \"comm bytes in flight\", \"pid\": {}, "
                      "\"tid\": {}, \"ts\": {}, \"args\": {{\"bytes\": {}}}}}",
                      rank, kCommStream, micros(t), bytes));
    }
  }
  json meta = metadata;
  if (meta.is_object() && !meta.contains("ranks")) meta["ranks"] = shown;
  out += "\n], \"displayTimeUnit\": \"ms\", \"otherData\": " + meta.dump() + "}\n";
  return out;
}

}  // namespace ddpsim::model
