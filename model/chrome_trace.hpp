// chrome_trace.hpp: the one Chrome Trace Event Format writer (Perfetto, chrome://tracing) of
// ddpsim, so that a simulated step (`ddpsim predict --engine event --trace`) and a measured one
// (`ddpsim exec --trace`) have the same layout and open side by side.
//
// Layout: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {metadata}}; one pid per
// rank (process_name "rank N", sorted by rank), tid 1 = compute stream, tid 2 = communication
// stream (thread_name metadata rows); one "X" (complete) event per span with ts and dur in
// microseconds written with exactly three decimals from integer nanoseconds (as Kineto writes
// them; assembled as text so no double rounds them); args carry the 1-based step, the layer name
// (compute) or the bytes on the wire (collectives). Per rank a "C" (counter) series "comm bytes
// in flight" on tid 2: the bytes of the collective running on its communication stream, 0
// between collectives. otherData gets "ranks" (ascending) unless the metadata has that key.
//
//   std::vector<TraceSpan> spans = {{.rank = 0, .stream = kComputeStream, .name = "fwd fc0",
//                                    .start_ns = 0, .end_ns = 1500}};
//   std::string text = chrome_trace_text(spans, {{"scenario", "mlp"}});
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddpsim::model {

inline constexpr int kComputeStream = 1;  ///< tid of the compute stream
inline constexpr int kCommStream = 2;     ///< tid of the communication stream

/// One busy interval of one stream of one rank.
struct TraceSpan {
  int rank = 0;
  int stream = kComputeStream;  ///< kComputeStream or kCommStream
  int step = 0;                 ///< 0-based (written 1-based)
  std::string name;             ///< "fwd h.3", "allreduce bucket 2", "optimizer", ...
  std::string layer;            ///< the layer's name for compute spans, else empty
  std::int64_t bytes = -1;      ///< bytes on the wire for collectives, else -1
  std::int64_t start_ns = 0;    ///< from the trace's time 0
  std::int64_t end_ns = 0;      ///< >= start_ns
};

/// The trace document as written. `ranks` (optional) lists ranks to name even without spans
/// (a measured rank that recorded nothing); the named ranks are its union with the spans'.
/// `serial_streams`: assert (DDPSIM_ASSERT, an internal error) that the spans of one (rank,
/// stream) never overlap; a simulator's streams are serial by construction.
std::string chrome_trace_text(const std::vector<TraceSpan>& spans,
                              const nlohmann::json& metadata = nlohmann::json::object(),
                              const std::vector<int>& ranks = {}, bool serial_streams = false);

}  // namespace ddpsim::model
