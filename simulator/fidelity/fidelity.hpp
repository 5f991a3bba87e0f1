// fidelity.hpp: ddpsim's presets against published end-to-end training runs and nccl-tests
// sweeps, and where every preset constant came from (results/FIDELITY.md).
//
// Three parts, all computed from the presets only (no calibration profile):
//  1. every row of scenarios/data/published-training.json: its "scenario" predicted through the
//     run API (simulator/run.hpp), the step time converted to the row's published quantity
//     (throughput_units.hpp), the signed relative error; rows with "not_predicted" are listed
//     with their reason. Median and max |error| overall, per GPU and per strategy, for the
//     visible rows and, separately, the rows marked "held_out" (never to be looked at when a
//     constant changes).
//  2. every nccl-tests sweep of scenarios/data/published-measurements.json (rows whose quantity
//     reads "<AllReduce|AllGather|ReduceScatter|Broadcast> bus bandwidth at message size <size>",
//     size "1KB".."8GB" or bytes, grouped by op, source, GPU and GPU count, whatever their ids;
//     the system preset from gpu_type, gpus_per_node from the row): geomean |busbw error| per
//     size band.
//  3. every constant of scenarios/hardware/{*,gpus/*,links/*}.json with the text that says
//     where it came from; a preset whose source cites end-to-end training results (MFU,
//     tokens/s, images/s, ...) or lists a training row in "fitted_from" is flagged.
// Published end-to-end runs test the model; a flagged constant breaks that rule.
//
// A training row (one object of the array): "id", "source", "source_url", "location" (table and
// row), "quoted" (the source's header and row, verbatim), the setup as published ("model",
// "gpu_type", "num_gpus", "per_gpu_batch", "grad_accumulation", "global_batch", "seq_len",
// "precision", "parallelism", "activation_checkpointing", "attention", "optimizer"), "quantity"
// (a throughput_kind_name: samples_per_s, tokens_per_s, tokens_per_s_per_gpu, step_time_s,
// tflops_per_gpu, mfu), "value" (> 0), "unit" (text), "held_out" (bool), and exactly one of
// "scenario" (a scenario document, relative paths from the data file's folder, no sweep) and
// "not_predicted" (why no scenario expresses the run). Optional: "model_dims" {"n_layers",
// "d_model"} and "mfu_peak_tflops" (ddpsim's MFU; required for tflops_per_gpu and mfu),
// "also_published" {"mfu": fraction, ...}, "mapping_notes", "notes", "setup_source".
//
//   FidelityReport r = compare_fidelity();           // reads the files under data_dir()
//   model::write_file_atomic("results/FIDELITY.md", fidelity_markdown(r));
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpsim::sim {

/// One predicted training row.
struct TrainingComparison {
  std::string id;
  std::string source;
  std::string source_url;
  std::string location;  ///< table/figure and row in the source
  std::string setup;     ///< the scenario as ddpsim ran it, in words
  std::string gpu;       ///< the GPU preset ("a100-sxm-80gb")
  std::string strategy;  ///< "ddp", "fsdp_full_shard", ...
  int gpus = 1;
  std::string quantity;  ///< throughput_kind_name()
  std::string unit;      ///< the row's unit text
  bool held_out = false;
  double published = 0;
  double ddpsim = 0;          ///< the same quantity from ddpsim's step time
  double relative_error = 0;  ///< (ddpsim - published) / published
  double step_time_s = 0;     ///< ddpsim's step
  /// ddpsim's throughput / the published one - 1 (relative_error, inverted for step_time_s rows):
  /// > 0 when ddpsim is too fast. What scenarios/data/uncertainty.json records.
  double speed_error = 0;
  double params = 0;  ///< the model's parameters
  bool fits_in_memory = true;
  std::optional<double> published_mfu;  ///< when the row gives one
  std::optional<double> ddpsim_mfu;     ///< with the row's model_dims and mfu_peak_tflops
};

struct TrainingNotPredicted {
  std::string id;
  std::string source;
  std::string reason;
};

/// |error| statistics of one group of rows.
struct ErrorSummary {
  std::string group;  ///< "all", "GPU a100-sxm-80gb", "strategy ddp"
  std::size_t count = 0;
  double median_abs = 0;
  double max_abs = 0;
};

/// Geomean |busbw error| of one size band of one nccl-tests sweep.
struct BusbwBand {
  std::string sweep;   ///< "<op> | <source> | <gpu_type> | <n> GPUs"
  std::string preset;  ///< the system preset predicted on
  std::string band;    ///< "< 64 KiB", "64 KiB - 1 MiB", "1 - 64 MiB", ">= 64 MiB"
  std::size_t count = 0;
  double geomean_abs_error = 0;
  double max_abs_error = 0;
  /// Median of (ddpsim - measured) / measured busbw: > 0 where ddpsim is too fast. The geomean
  /// says how far off a band is; the sign says which cause can explain it.
  double median_error = 0;
};

/// One preset file's constants and what set them.
struct ConstantSource {
  std::string file;         ///< relative to scenarios/hardware/
  std::string constants;    ///< "key=value, ..." (numeric leaves)
  std::string source;       ///< the file's "source" (and "description")
  std::string fitted_from;  ///< collectives.fitted_from ids, comma separated
  bool end_to_end = false;  ///< cites end-to-end training data
  std::string evidence;     ///< the words that flagged it
};

/// A measured kernel table a GPU preset carries (gemm_table, attention_kernels,
/// attention_efficiency): which kernel-level data set it.
struct KernelTable {
  std::string file;     ///< relative to scenarios/hardware/
  std::string table;    ///< the preset key
  std::string entries;  ///< what it holds, e.g. "bf16: 8 shapes, fp16: 8 shapes"
  std::string source;   ///< its own source text
};

struct FidelityReport {
  std::vector<TrainingComparison> rows;
  std::vector<TrainingNotPredicted> not_predicted;
  std::vector<ErrorSummary> visible;   ///< summary of rows with held_out false
  std::vector<ErrorSummary> held_out;  ///< summary of rows with held_out true
  std::vector<BusbwBand> bands;
  std::vector<BusbwBand> log_bands;  ///< public nccl-tests logs (nccl_logs.hpp)
  /// Logs predicted on a NIC fitted to another log of the same fabric (fabric_fit_bands).
  std::vector<BusbwBand> fabric_fit_bands;
  std::vector<ConstantSource> constants;
  std::vector<KernelTable> kernel_tables;
  std::size_t training_rows = 0;
};

/// Median and max |relative_error| of `rows` whose held_out equals `held_out`: "all", then one
/// group per GPU preset and per strategy (sorted). Groups without rows are left out.
std::vector<ErrorSummary> summarize(const std::vector<TrainingComparison>& rows, bool held_out);

/// The busbw band of a message size in bytes.
const char* busbw_band(double bytes);

/// training_rows: the array of published-training.json (training_file names it in errors and
/// resolves the scenarios' relative paths); measurements: published-measurements.json's array;
/// hardware_dir: the folder of the system presets. Throws ddpsim::Error on a malformed row.
FidelityReport compare_fidelity(const nlohmann::json& training_rows,
                                const std::string& training_file,
                                const nlohmann::json& measurements,
                                const std::filesystem::path& hardware_dir);
/// Same, reading data_dir()/data/published-training.json, published-measurements.json and
/// data_dir()/hardware.
FidelityReport compare_fidelity();

/// {"context", "sources", "summary": {"visible", "held_out"}, "rows", "not_predicted",
/// "busbw_bands", "constants", "kernel_tables"}.
nlohmann::json fidelity_json(const FidelityReport& r);
/// results/FIDELITY.md: no date or revision in it, so it changes only when a number does.
std::string fidelity_markdown(const FidelityReport& r);

}  // namespace ddpsim::sim
