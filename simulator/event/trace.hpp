// trace.hpp: a Chrome Trace Event Format file (Perfetto, chrome://tracing) of an event run.
//
// The layout is model/chrome_trace.hpp's, the one the executor's measured traces share, so the
// two open side by side.
// Spans on one (rank, stream) never overlap (simulate_event keeps each stream serial; this is
// checked with DDPSIM_ASSERT). Which ranks appear is decided by the caller: simulate_event keeps
// the first EventOptions::timeline_max_ranks (64) ranks plus the slowest one by default.
// The file is written atomically (model/atomic_file.hpp); errors throw Error.
//
//   EventOptions o; o.record_timeline = true;
//   EventResult r = simulate_event(plan, o);
//   write_chrome_trace("trace.json", r.timeline, {{"scenario", "gpt2-xl"}});
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulator/event/simulate.hpp"

namespace ddpsim::model {
class RunOutputs;  // model/interrupt.hpp
}  // namespace ddpsim::model

namespace ddpsim::sim {

/// The trace document as written: ts/dur with exactly three decimals.
std::string chrome_trace_text(const std::vector<Span>& spans,
                              const nlohmann::json& metadata = nlohmann::json::object());

/// The same document parsed (for tests and callers that post-process it).
nlohmann::json chrome_trace_json(const std::vector<Span>& spans,
                                 const nlohmann::json& metadata = nlohmann::json::object());

/// Throws Error("--trace PATH: cannot be written (REASON)") when `path` cannot be created: its
/// folder is missing and cannot be made, is not a folder, or refuses a new file (probed with a
/// temporary file that is removed again; an existing `path` is left alone), or `path` is a folder.
/// Call it before simulating so that bad input fails at once and no trace of an earlier sweep point
/// is left behind.
void check_trace_path(const std::string& path);

/// Writes chrome_trace_json(spans, metadata) to `path` atomically (a temporary file in the same
/// folder, then a rename; the temporary file is removed on any failure). Errors name `path`.
/// With `outputs`, the file joins the run's files (model/atomic_file.hpp write_file_atomic).
void write_chrome_trace(const std::string& path, const std::vector<Span>& spans,
                        const nlohmann::json& metadata = nlohmann::json::object(),
                        model::RunOutputs* outputs = nullptr);

}  // namespace ddpsim::sim
