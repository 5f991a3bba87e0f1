#include "simulator/event/trace.hpp"

#include "model/atomic_file.hpp"
#include "model/chrome_trace.hpp"
#include "model/error.hpp"

namespace ddpsim::sim {

std::string chrome_trace_text(const std::vector<Span>& spans, const nlohmann::json& metadata) {
  std::vector<model::TraceSpan> out;
  out.reserve(spans.size());
  for (const Span& s : spans) {
    out.push_back({s.rank, static_cast<int>(s.stream), s.step, s.name, s.layer, s.bytes,
                   s.start.count(), s.end.count()});
  }
  return model::chrome_trace_text(out, metadata, {}, /*serial_streams=*/true);
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
                        const nlohmann::json& metadata, model::RunOutputs* outputs) {
  as_trace_error(
      path, [&] { model::write_file_atomic(path, chrome_trace_text(spans, metadata), outputs); });
}

}  // namespace ddpsim::sim
