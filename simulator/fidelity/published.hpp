// published.hpp: ddpsim's predictions against every published row it can predict.
//
// Reads scenarios/data/published-measurements.json and, for each row ddpsim has a model of,
// computes the same quantity with the library (not with a copy of the formula):
//   ZeRO Table 1 / Figure 1   model_state_bytes_per_gpu (simulator/prediction/memory.hpp), K = 12,
//   in GB =
//                             1e9 bytes; tolerance half a unit of the printed digit; an integer
//                             cell the paper truncated (x printed as floor(x)) is within [v, v+1).
//   ZeRO Table 2              the largest GPT-2-like model (48 layers, widened by 64) that
//                             estimate_memory() fits in a 32 GiB V100 with ZeRO-1 and Megatron
//                             tensor parallelism MP x DP 64, exactly as tests/simulator/
//                             memory_test.cpp states its assumptions; 10% on the ZeRO-DP column,
//                             the baseline column (Megatron, not PyTorch DDP) is reported only.
//   nccl-tests busbw          collective_cost() AllReduce busbw on the hardware presets at the
//                             published size and GPU count (Azure sweeps: 15% at >= 256 MiB as
//                             tests/model/presets_test.cpp asserts, smaller sizes reported;
//                             maintainer statements of asymptotic busbw: 2% (the NVLS peak,
//                             which matches Azure's 8 GiB row: 15%); one 100G NIC: 5%; user
//                             reports on other fabrics: reported).
//   McCandlish et al.         steps_to_target of predict() at B = B_noise is 2 S_min (eq. 2.11).
//   Goyal et al.              the linear rule's learning rate at each kn of Figure 3 against the
//                             reference eta in the row's notes (exact), and the break point
//                             batch_size_warnings() warns past
//                             (simulator/prediction/lr_schedule.hpp).
// Every other row is listed with the reason it is not predicted (accuracy, throughput of other
// systems, critical batch sizes, ...), so each row of the file appears once in the report.
//
//   PublishedReport r = compare_published();            // reads the file from data_dir()
// published_report.hpp writes the report as JSON and Markdown.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario/scenario.hpp"

namespace ddpsim::sim {

enum class Agreement {
  kOk,        ///< within the stated tolerance
  kOutside,   ///< beyond it
  kReported,  ///< no tolerance is claimed: shown for information
};
const char* agreement_name(Agreement a);  ///< "ok", "outside", "reported"

struct PublishedComparison {
  std::string id;     ///< row id in published-measurements.json
  std::string group;  ///< "ZeRO Table 1 / Figure 1", "ZeRO Table 2", "nccl-tests", "Goyal et al."
  std::string quantity;  ///< what is compared
  std::string setup;     ///< how ddpsim computed it (preset, GPUs, size, assumptions)
  std::string unit;
  std::string published_text;       ///< the published value as printed
  std::optional<double> published;  ///< as a number, when it is one
  std::string ddpsim_text;
  std::optional<double> ddpsim;
  std::optional<double> relative_error;  ///< (ddpsim - published) / published
  std::string tolerance;                 ///< e.g. "15%", "+-0.05 (half the last digit)"
  Agreement agreement = Agreement::kReported;
  std::string sweep;  ///< nccl-tests rows: the sweep the row belongs to ("nccl-azure-a100")
  double bytes = 0;   ///< nccl-tests rows: the message size
};

struct NotPredicted {
  std::string id;
  std::string reason;
};

struct PublishedReport {
  std::vector<PublishedComparison> rows;
  std::vector<NotPredicted> not_predicted;
  std::size_t published_rows = 0;  ///< rows in the file
  std::size_t count(Agreement a) const;
};

/// Compares `published_rows` (the file's array). Throws ddpsim::Error when a row it predicts is
/// malformed.
PublishedReport compare_published(const nlohmann::json& published_rows);
/// Same, reading data_dir()/data/published-measurements.json.
PublishedReport compare_published();

/// The largest parameter count of the ZeRO Table 2 model family (GPT-2-like, 48 layers, head
/// dimension 64, vocabulary 50257, sequence 1024, width 64k) that fits in `capacity_bytes` with
/// `strategy` over 64 data-parallel ranks and Megatron tensor parallelism `mp`, micro-batch 1,
/// full activation checkpointing, fp16 + Adam (K = 12), default buffers and runtime terms.
double zero_table2_largest_params(int mp, model::Strategy strategy,
                                  double capacity_bytes = 32.0 * 1073741824.0);

}  // namespace ddpsim::sim
