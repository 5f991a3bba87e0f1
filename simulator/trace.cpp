#include "simulator/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/atomic_file.hpp"
#include "model/error.hpp"

namespace ddpsim::sim {

namespace {

// Microseconds with exactly three decimals from integer nanoseconds, without rounding through a
// double; nlohmann would reformat such numbers, so the events are assembled as text.
std::string micros(SimTime t) {
  const std::int64_t ns = t.count();
  const std::int64_t whole = ns / 1000;
  const std::int64_t frac = ns % 1000;
  if (ns < 0) return fmt::format("-{}.{:03}", -whole, -frac);
  return fmt::format("{}.{:03}", whole, frac);
}

}  // namespace

std::string chrome_trace_text(const std::vector<Span>& spans, const nlohmann::json& metadata) {
  {
    std::set<int> ranks;
    for (const Span& s : spans) ranks.insert(s.rank);
    // Overlap check per (rank, stream): sort each lane by start.
    std::map<std::pair<int, int>, std::vector<std::pair<SimTime, SimTime>>> lanes;
    for (const Span& s : spans) {
      DDPSIM_ASSERT(s.end >= s.start, "a span ending before it starts");
      lanes[{s.rank, static_cast<int>(s.stream)}].emplace_back(s.start, s.end);
    }
    for (auto& [lane, v] : lanes) {
      std::sort(v.begin(), v.end());
      for (std::size_t i = 1; i < v.size(); ++i) {
        DDPSIM_ASSERT(v[i].first >= v[i - 1].second, "overlapping spans on one stream");
      }
    }
    std::string out = "{\"traceEvents\": [\n";
    bool first = true;
    auto add = [&](const std::string& ev) {
      if (!first) out += ",\n";
      first = false;
      out += ev;
    };
    using nlohmann::json;
    for (int r : ranks) {
      add(json{{"ph", "M"},
               {"name", "process_name"},
               {"pid", r},
               {"tid", 0},
               {"ts", 0},
               {"args", {{"name", "rank " + std::to_string(r)}}}}
              .dump());
      add(json{{"ph", "M"},
               {"name", "process_sort_index"},
               {"pid", r},
               {"tid", 0},
               {"ts", 0},
               {"args", {{"sort_index", r}}}}
              .dump());
      add(json{{"ph", "M"},
               {"name", "thread_name"},
               {"pid", r},
               {"tid", 1},
               {"ts", 0},
               {"args", {{"name", "compute"}}}}
              .dump());
      add(json{{"ph", "M"},
               {"name", "thread_name"},
               {"pid", r},
               {"tid", 2},
               {"ts", 0},
               {"args", {{"name", "communication"}}}}
              .dump());
    }
    for (const Span& s : spans) {
      json args = {{"step", s.step + 1}};
      if (!s.layer.empty()) args["layer"] = s.layer;
      if (s.bytes >= 0) args["bytes"] = s.bytes;
      const char* cat = s.stream == Stream::kCompute ? "compute" : "collective";
      add(
          fmt::format("{{\"ph\": \"X\", \"name\": {}, \"cat\": \"{}\", \"pid\": {}, \"tid\": {}, "
                      "\"ts\": {}, \"dur\": {}, \"args\": {}}}",
                      json(s.name).dump(), cat, s.rank, static_cast<int>(s.stream), micros(s.start),
                      micros(s.end - s.start), args.dump()));
    }
    // Bytes in flight on each rank's communication stream: a counter that steps to a
    // collective's bytes when it starts and back to 0 when it ends (the stream is serial, so
    // at most one collective is in flight per rank). At equal times the 0 comes first, so
    // back-to-back collectives read as the next one's bytes.
    std::map<int, std::vector<std::pair<SimTime, std::int64_t>>> counters;
    for (const Span& s : spans) {
      if (s.stream != Stream::kComm || s.bytes < 0) continue;
      counters[s.rank].emplace_back(s.start, s.bytes);
      counters[s.rank].emplace_back(s.end, 0);
    }
    for (auto& [rank, points] : counters) {
      std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : a.second < b.second;
      });
      for (const auto& [t, bytes] : points) {
        add(
            fmt::format("{{\"ph\": \"C\", \"name\": \"comm bytes in flight\", \"pid\": {}, "
                        "\"tid\": {}, \"ts\": {}, \"args\": {{\"bytes\": {}}}}}",
                        rank, static_cast<int>(Stream::kComm), micros(t), bytes));
      }
    }
    json meta = metadata;
    if (meta.is_object() && !meta.contains("ranks")) meta["ranks"] = ranks;
    out += "\n], \"displayTimeUnit\": \"ms\", \"otherData\": " + meta.dump() + "}\n";
    return out;
  }
}

nlohmann::json chrome_trace_json(const std::vector<Span>& spans, const nlohmann::json& metadata) {
  return nlohmann::json::parse(chrome_trace_text(spans, metadata));
}

namespace {

// The --trace option's own wording of a failed write.
template <class Write>
void as_trace_error(const std::string& path, Write write) {
  try {
    write();
  } catch (const model::FileWriteError& e) {
    throw Error("--trace " + path + ": cannot be written (" + e.reason() + ")");
  }
}

}  // namespace

void check_trace_path(const std::string& path) {
  as_trace_error(path, [&] { model::check_writable(path); });
}

void write_chrome_trace(const std::string& path, const std::vector<Span>& spans,
                        const nlohmann::json& metadata) {
  as_trace_error(path, [&] { model::write_file_atomic(path, chrome_trace_text(spans, metadata)); });
}

}  // namespace ddpsim::sim
