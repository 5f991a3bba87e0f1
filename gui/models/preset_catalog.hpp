// preset_catalog.hpp: the presets a buyer chooses from, in the buyer's words (the buyer's review,
// defect 15: the system list gave names with no GPU, memory or network, the model list no
// parameter counts, and the model row raw JSON, `current {"preset":"gpt2-xl"}`). Each hardware
// preset is resolved as a scenario resolves it (model::resolve_hardware), each model preset read
// from its file (its checked expected_params, else the built workload's count). Read once and
// kept; a preset that does not read is listed with its message.
//
//   for (const SystemFacts& s : systemCatalog()) systemSummary(s);
//   // "8 x h100-sxm, 80 GiB each; nvlink4 in a node, 8 x 400 Gb/s ib-ndr-400 between nodes"
//   modelSummary("llama-3.1-8b", 8030261248, 8192);
//   // "llama-3.1-8b: 8.03 B parameters, 8,192 tokens per sample"
#pragma once

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

namespace ddpsim::gui {

struct SystemFacts {
  std::string name;  ///< the preset: "dgx-h100"
  std::string gpu;   ///< "h100-sxm"
  int gpusPerNode = 0;
  double memoryGib = 0;   ///< one GPU's memory
  std::string intraNode;  ///< the link inside a node: "nvlink4"
  std::string interNode;  ///< the link between nodes: "ib-ndr-400"
  int nicsPerNode = 0;
  double nicGbps = 0;  ///< one NIC, one direction, 10^9 bit/s
  std::string error;   ///< non-empty: the preset did not read (the message)
};

struct ModelFacts {
  std::string name;  ///< the preset: "llama-3.1-8b"
  std::int64_t params = 0;
  std::int64_t seqLen = 1;  ///< tokens per sample, 1 for models without a sequence
  std::string error;
};

/// Every hardware preset of the data folder, sorted by name (empty without one).
const std::vector<SystemFacts>& systemCatalog();
/// Every model preset of the data folder, sorted by name (empty without one).
const std::vector<ModelFacts>& modelCatalog();
/// The entry of `name`, or null.
const SystemFacts* systemFacts(const std::string& name);
const ModelFacts* modelFacts(const std::string& name);

/// "8.03 B", "335 M", "6.16 M": parameters with a suffix, three significant digits.
QString formatParams(std::int64_t params);
/// The GPUs, memory and network of a system in words (see the file comment); the message when
/// the preset did not read.
QString systemSummary(const SystemFacts& s);
/// "<name>: <params> parameters, <seq> tokens per sample" (without the sequence part for
/// seqLen 1; without parameters for 0).
QString modelSummary(const QString& name, std::int64_t params, std::int64_t seqLen);

}  // namespace ddpsim::gui
