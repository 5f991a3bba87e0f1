// Fidelity report writers: the FidelityReport that compare_fidelity (fidelity.cpp) computes, as
// results/fidelity.json and results/FIDELITY.md.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/fidelity/fidelity.hpp"
#include "simulator/fidelity/markdown.hpp"
#include "simulator/optional_json.hpp"
#include "simulator/report.hpp"

namespace ddpsim::sim {

using nlohmann::json;

namespace {

json summary_json(const std::vector<ErrorSummary>& v) {
  json out = json::array();
  for (const auto& s : v) {
    out.push_back({{"group", s.group},
                   {"count", s.count},
                   {"median_abs_error", s.median_abs},
                   {"max_abs_error", s.max_abs}});
  }
  return out;
}

std::string pct(double rel) { return fmt::format("{:+.1f}%", rel * 100); }
std::string abs_pct(double rel) { return fmt::format("{:.1f}%", rel * 100); }

// One markdown table of busbw bands; `what` names the first column ("sweep", "log").
std::string band_table(const char* what, const std::vector<BusbwBand>& bands) {
  std::string md = fmt::format(
      "| {} | preset | size band | count | geomean \\|error\\| | max \\|error\\| | median error |\n"
      "|---|---|---|---|---|---|---|\n",
      what);
  for (const auto& b : bands) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(b.sweep), b.preset,
                      b.band, b.count, abs_pct(b.geomean_abs_error), abs_pct(b.max_abs_error),
                      pct(b.median_error));
  }
  return md;
}

// Four significant digits, no exponent for the magnitudes these rows have.
std::string value_text(double v) {
  if (v >= 1000) return fmt::format("{:.0f}", v);
  if (v >= 1) return fmt::format("{:.4g}", v);
  return fmt::format("{:.4f}", v);
}

std::string summary_table(const std::vector<ErrorSummary>& v) {
  if (v.empty()) return "No rows.\n";
  std::string md = "| rows | count | median \\|error\\| | max \\|error\\| |\n|---|---|---|---|\n";
  for (const auto& s : v) {
    md += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(s.group), s.count,
                      abs_pct(s.median_abs), abs_pct(s.max_abs));
  }
  return md;
}

std::string rows_table(const std::vector<TrainingComparison>& rows, bool held_out) {
  std::string md =
      "| id | published | ddpsim | unit | error | MFU published / ddpsim | fits | setup as "
      "predicted | source |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.held_out != held_out) continue;
    auto pct_or_dash = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.1f}%", *v * 100) : std::string("-");
    };
    const std::string mfu_text = pct_or_dash(r.published_mfu) + " / " + pct_or_dash(r.ddpsim_mfu);
    const std::string src = r.source_url.empty()
                                ? r.source
                                : fmt::format("[{}]({}), {}", r.source, r.source_url, r.location);
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(r.id),
                      value_text(r.published), value_text(r.ddpsim), markdown_cell(r.unit),
                      pct(r.relative_error), mfu_text, r.fits_in_memory ? "yes" : "**no**",
                      markdown_cell(r.setup), markdown_cell(src));
  }
  return md;
}

}  // namespace

json fidelity_json(const FidelityReport& r) {
  json doc;
  doc["context"] = context_json("fidelity");
  doc["sources"] = {"scenarios/data/published-training.json",
                    "scenarios/data/published-measurements.json", "scenarios/hardware/"};
  doc["summary"] = {{"training_rows", r.training_rows},
                    {"predicted", r.rows.size()},
                    {"not_predicted", r.not_predicted.size()},
                    {"visible", summary_json(r.visible)},
                    {"held_out", summary_json(r.held_out)}};
  json rows = json::array();
  for (const auto& c : r.rows) {
    rows.push_back({{"id", c.id},
                    {"source", c.source},
                    {"source_url", c.source_url},
                    {"location", c.location},
                    {"setup", c.setup},
                    {"gpu", c.gpu},
                    {"gpus", c.gpus},
                    {"strategy", c.strategy},
                    {"quantity", c.quantity},
                    {"unit", c.unit},
                    {"held_out", c.held_out},
                    {"published", c.published},
                    {"ddpsim", c.ddpsim},
                    {"relative_error", c.relative_error},
                    {"step_time_s", c.step_time_s},
                    {"fits_in_memory", c.fits_in_memory},
                    {"published_mfu", optional_json(c.published_mfu)},
                    {"ddpsim_mfu", optional_json(c.ddpsim_mfu)}});
  }
  doc["rows"] = rows;
  json np = json::array();
  for (const auto& n : r.not_predicted) {
    np.push_back({{"id", n.id}, {"source", n.source}, {"reason", n.reason}});
  }
  doc["not_predicted"] = np;
  auto band_json = [](const std::vector<BusbwBand>& from) {
    json out = json::array();
    for (const auto& b : from) {
      out.push_back({{"sweep", b.sweep},
                     {"preset", b.preset},
                     {"band", b.band},
                     {"count", b.count},
                     {"geomean_abs_error", b.geomean_abs_error},
                     {"max_abs_error", b.max_abs_error},
                     {"median_error", b.median_error}});
    }
    return out;
  };
  doc["busbw_bands"] = band_json(r.bands);
  doc["log_busbw_bands"] = band_json(r.log_bands);
  doc["fabric_fit_busbw_bands"] = band_json(r.fabric_fit_bands);
  json consts = json::array();
  for (const auto& c : r.constants) {
    consts.push_back({{"file", c.file},
                      {"constants", c.constants},
                      {"source", c.source},
                      {"fitted_from", c.fitted_from},
                      {"end_to_end", c.end_to_end},
                      {"evidence", c.evidence}});
  }
  doc["constants"] = consts;
  json tables = json::array();
  for (const auto& k : r.kernel_tables) {
    tables.push_back(
        {{"file", k.file}, {"table", k.table}, {"entries", k.entries}, {"source", k.source}});
  }
  doc["kernel_tables"] = tables;
  check_finite(doc, "fidelity");
  return doc;
}

std::string fidelity_markdown(const FidelityReport& r) {
  std::string md = "# ddpsim fidelity: presets against published training runs\n\n";
  md +=
      "Generated by `ddpsim fidelity` (`ninja -C build fidelity-update`) from "
      "`scenarios/data/published-training.json`, `scenarios/data/published-measurements.json` and "
      "`scenarios/hardware/`; do not edit by hand. The same data as JSON, with the run context: "
      "`fidelity.json`. Every prediction uses the hardware presets only (no calibration profile) "
      "and goes through the run API, as `ddpsim predict` does.\n\n"
      "Published end-to-end runs are for testing, never for fitting: no constant may be tuned to "
      "make a row below match. Rows marked `held_out` in the data file (about a third of each "
      "source's predicted rows, drawn with Python `random.Random(15).sample` over the sorted ids "
      "when the rows were added, and never redrawn after their results were seen; "
      "`scripts/held-out-draw.py` proposes a fresh draw for new data) are reported in their own "
      "tables; a change "
      "should be judged on the visible rows and then checked, once, on the held-out ones.\n\n"
      "**Units.** ddpsim predicts the time of one optimizer step of the global batch "
      "(micro-batch x accumulation x GPUs). samples/s = global batch / step time; tokens/s = "
      "global batch x sequence length / step time (per GPU: / GPUs); model FLOPs per token = "
      "6 P + 12 L d s (llm-foundry's MFU: 3 x (2 P s + 4 L d s^2) per sequence, P parameters, "
      "L layers, width d, s tokens); TFLOP/s per GPU = tokens/s per GPU x FLOPs per token / "
      "1e12; MFU = that / the publisher's peak (Composer: 312 A100 bf16, 989.4 H100 bf16). "
      "Error = (ddpsim - published) / published, in the row's quantity. `fits` is ddpsim's "
      "memory verdict for the run that did run.\n\n";
  md += fmt::format(
      "**Rows:** {} training rows, {} predicted ({} visible, {} held out), {} not predicted.\n",
      r.training_rows, r.rows.size(),
      std::count_if(r.rows.begin(), r.rows.end(), [](const auto& c) { return !c.held_out; }),
      std::count_if(r.rows.begin(), r.rows.end(), [](const auto& c) { return c.held_out; }),
      r.not_predicted.size());
  md += "\n## End-to-end training throughput: visible rows\n\n" + summary_table(r.visible);
  md += "\n" + rows_table(r.rows, false);
  md += "\n## End-to-end training throughput: held-out rows\n\n" + summary_table(r.held_out);
  md += "\n" + rows_table(r.rows, true);
  md += "\n## Training rows not predicted\n\n| id | why | source |\n|---|---|---|\n";
  for (const auto& n : r.not_predicted) {
    md += fmt::format("| `{}` | {} | {} |\n", markdown_cell(n.id), markdown_cell(n.reason),
                      markdown_cell(n.source));
  }
  md +=
      "\n## NCCL busbw error by message size\n\n"
      "Every nccl-tests sweep in `published-measurements.json` (rows whose quantity reads "
      "`OP bus bandwidth at message size SIZE`, OP one of AllReduce, AllGather, ReduceScatter, "
      "Broadcast; "
      "grouped by op, source, GPU and GPU count), predicted by the collective model on the "
      "system preset of its GPU, run as the sweep was: the NCCL release its row names "
      "(`collectives.nccl_version`), and for Azure/AI-benchmarking-guide "
      "(Benchmarks/NVIDIA/NCCLBandwidth.py: `NCCL_ALGO=NVLS all_reduce_perf -g <num_gpus>`) one "
      "thread launching every GPU's kernel (`collectives.gpus_per_process`) with NVLS forced on "
      "Hopper. Geomean and max of |busbw error| per size band, and the median signed error (+: "
      "ddpsim's busbw above the measured, too fast; -: too slow). The presets' NCCL kernel costs "
      "are fitted on one named sweep per system class (`fitted_from` below: the A100 and H100 "
      "sweeps), so those two are fits; the H200 sweep and every other log test them.\n\n";
  md += band_table("sweep", r.bands);
  md +=
      "\n## Public nccl-tests logs\n\n"
      "Every log of `scenarios/data/nccl-tests/index.json` (real `*_perf` output copied from "
      "public repositories and issues; provenance in that folder's README.md), predicted as it "
      "was run: its GPUs per node and nodes, the NCCL release it printed, `-g N` (GPUs one "
      "thread launched), a forced `NCCL_ALGO`/`NCCL_PROTO`, and its fabric's NIC preset beside "
      "its GPU's system preset, or the instance's own system preset where the index names one "
      "(`aws-p5`, `aws-p4de`). A log marked FIT set the constants it names (one per system "
      "class); every other log is a test. Geomean and max of |busbw error| per size band, and the "
      "median signed error (+: too fast, -: too slow).\n\n";
  md += band_table("log", r.log_bands);
  md +=
      "\n## A log of your own cluster, at other rank counts\n\n"
      "What `ddpsim predict --profile` does with a user's multi-node nccl-tests log "
      "(`ddpsim-calibrate import nccl-tests`): its tables replace the model at the log's rank "
      "count, and every other rank count runs NCCL's model on the NIC fitted to the log "
      "(simulator/collectives/fabric_fit.hpp: the share of the NIC rate NCCL reaches and the NIC "
      "latency that best "
      "reproduce the log's times, the log replayed as it ran). Tested here on pairs of public "
      "logs of one fabric (`fabric_group` in the index): the NIC fitted on one log, the other "
      "predicted with it; compare each with its own row above (the preset's NIC).\n\n";
  md += band_table("log (NIC fitted on another log)", r.fabric_fit_bands);
  md +=
      "\n## What set each constant\n\n"
      "Every numeric key of every hardware preset (`scenarios/hardware/`), with the preset's own "
      "`source` text and the published rows its collective constants were fitted to. "
      "**end-to-end: yes** marks a preset whose text cites end-to-end training results (MFU, "
      "pre-training, tokens/s, images/s, samples/s, training throughput) or whose `fitted_from` "
      "names a training row: such a constant was set from the kind of data this report tests "
      "with, and should be re-derived from kernel-level data.\n\n"
      "| preset file | end-to-end | constants | source | fitted_from | evidence |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& c : r.constants) {
    md +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", c.file, c.end_to_end ? "**yes**" : "no",
                    markdown_cell(c.constants), markdown_cell(c.source),
                    markdown_cell(c.fitted_from), markdown_cell(c.evidence));
  }
  md +=
      "\n## Kernel-level data behind the GPU tables\n\n"
      "The measured tables of each GPU preset and the kernel-level data set each (GEMM rates "
      "by shape: simulator/analytic/kernel_rates.hpp gemm_shape_factor; fused attention by "
      "sequence length and head dimension). None is a training run.\n\n"
      "| GPU preset | table | entries | source |\n|---|---|---|---|\n";
  for (const auto& k : r.kernel_tables) {
    md += fmt::format("| `{}` | `{}` | {} | {} |\n", k.file, k.table, markdown_cell(k.entries),
                      markdown_cell(k.source));
  }
  return md;
}

}  // namespace ddpsim::sim
