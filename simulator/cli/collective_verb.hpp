// collective_verb.hpp: `ddpsim collective`, an nccl-tests-style table of modelled collectives:
//
//   ddpsim collective --hardware dgx-h100 --gpus 16 [--op all_reduce] [--min-bytes 8]
//                     [--max-bytes 8G] [--algorithm auto] [--proto auto] [--launch process]
//
// The system is a preset name or a JSON hardware section, checked by the scenario reader (errors
// name "<command line>" and the scenario key). Returns the exit code (0).
#pragma once

#include <optional>
#include <string>

namespace ddpsim::cli {

// `ddpsim collective`'s switches: the system, the sweep and how NCCL is run.
struct CollectiveOptions {
  std::string hw = "dgx-h100", op = "all_reduce", min_b = "8", max_b = "1G", algo = "auto",
              proto = "auto", launch = "process", redop = "sum", nccl_version;
  int gpus = 8;
  std::optional<int> gpus_per_process;
  bool graphs = false;
};

/// Prints the table for `o` on standard output.
int run_collective(const CollectiveOptions& o);

}  // namespace ddpsim::cli
