// The rows of the "reliability" and "pricing" sections (detail/reliability_keys.hpp).
#include "model/scenario/detail/reliability_keys.hpp"

#include <vector>

#include "model/scenario/detail/key_rows.hpp"

namespace ddpsim::model::detail {

// "/reliability" and "/pricing": failures, checkpoints and what GPU time costs.
void add_reliability_keys(std::vector<KeySpec>& t) {
  t.push_back(obj("/reliability",
                  "failures and checkpoints: effective training time ratio (ETTR) and time to "
                  "train with failures (simulator/prediction/goodput.hpp)"));
  t.push_back(number("/reliability/node_mtbf_hours", "h", nullptr, 0, true,
                     "mean time between failures of one node (default 6,335: Llama 3's 419 "
                     "unexpected interruptions in 54 days on 2,048 8-GPU nodes, arXiv:2407.21783 "
                     "sec. 3.3.4); the job's MTBF is this / nodes",
                     1e9));
  t.push_back(number("/reliability/gpu_mtbf_hours", "h", nullptr, 0, true,
                     "mean time between failures of one GPU, instead of node_mtbf_hours; the "
                     "job's MTBF is this / GPUs",
                     1e9));
  t.push_back(number("/reliability/restart_minutes", "min", nullptr, 0, false,
                     "time from a failure to training again, before the checkpoint is read "
                     "(detection, rescheduling, process start, NCCL initialisation)",
                     1e6));
  t.back().required = true;
  t.push_back(obj("/reliability/checkpoint", "how checkpoints are written and read", true));
  t.push_back(str("/reliability/checkpoint/format", "dcp", {"dcp", "rank0"},
                  "dcp: torch.distributed.checkpoint, every rank writes its part (replicated "
                  "tensors once, spread over the ranks); rank0: torch.save of the full state "
                  "on rank 0, torch.load of the whole file on every rank"));
  t.push_back(number("/reliability/checkpoint/write_gbytes_per_s_per_node", "GB/s", nullptr, 0,
                     true, "storage write bandwidth of one node", 1e6));
  t.back().required = true;
  t.push_back(number("/reliability/checkpoint/read_gbytes_per_s_per_node", "GB/s", nullptr, 0, true,
                     "storage read bandwidth of one node (default: the write bandwidth)", 1e6));
  t.push_back(number("/reliability/checkpoint/aggregate_write_gbytes_per_s", "GB/s", nullptr, 0,
                     true, "the storage system's total write bandwidth (default: no shared limit)",
                     1e9));
  t.push_back(number("/reliability/checkpoint/aggregate_read_gbytes_per_s", "GB/s", nullptr, 0,
                     true, "the storage system's total read bandwidth (default: no shared limit)",
                     1e9));
  t.push_back(boolean("/reliability/checkpoint/async", false,
                      "torch.distributed.checkpoint.async_save (format dcp): training stops only "
                      "while each rank stages its state to CPU memory over PCIe; the write runs "
                      "beside training and a failure during it loses that checkpoint"));
  t.push_back(number("/reliability/checkpoint/interval_minutes", "min", nullptr, 0, true,
                     "training time between checkpoints (default: Young's optimum sqrt(2 x "
                     "checkpoint time x job MTBF))",
                     1e9));

  t.push_back(obj("/pricing", "what GPU time costs"));
  t.push_back(number("/pricing/gpu_hour_usd", "USD/GPU-hour", nullptr, 0, false,
                     "price of one GPU for one hour", 1e6));
}

}  // namespace ddpsim::model::detail
