// ddpsim-exec: the real DDP executor (`ddpsim exec` runs it).
//
//   ddpsim-exec SCENARIO.json [--nproc N] [--steps S] [--out RESULT.json] [--trace TRACE.json]
//
// Without launcher variables it starts the ranks itself (launch_local, one per "GPU" of the
// scenario or --nproc); under torchrun/mpirun it is one rank. Rank 0 prints the step-time
// breakdown and writes the results and the trace only when every rank finished (atomically).
// Exit codes: 0 ok, 2 bad input or a scenario the executor refuses, 1 a failed run.
#include <cblas.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/gloo_communicator.hpp"
#include "calibrate/comm/launcher.hpp"
#include "calibrate/comm/rank.hpp"
#include "calibrate/comm/sweep.hpp"
#include "calibrate/exec/cuda_run.hpp"
#include "calibrate/exec/executor.hpp"
#include "calibrate/exec/results.hpp"
#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/process_env.hpp"
#include "model/run_context.hpp"
#include "model/scenario/scenario.hpp"

namespace {

std::string part_path(const ddpsim::comm::RankInfo& me, int rank) {
  return (std::filesystem::path(me.store_dir) / fmt::format("exec-rank{}.json.part", rank))
      .string();
}

nlohmann::json context_json(const ddpsim::comm::Communicator& comm) {
  nlohmann::json c = ddpsim::model::run_context_json("ddpsim-exec");
  c["device"] = "cpu";
  c["backend"] = comm.backend();
  c["backend_version"] = comm.version();
  c["transport"] = comm.transport();
  c["blas"] = openblas_get_config();
  c["blas_threads_per_rank"] = 1;
  return c;
}

// The command line: what to run and the overrides of the scenario.
struct Options {
  std::string scenario_path, out_path, trace_path, dump_path, loss = "mse";
  int nproc = 0, steps = 0, batch = 0, accum = 0, warmup = 1;
  double lr = 0, timeout_s = 30, launch_timeout_s = 3600;
  std::string overlap, noise = "true";
  double noise_ema = 0.95;
  bool independent = false;
  std::string backend = "cpu";

  ddpsim::exec::ExecOverrides overrides() const {
    ddpsim::exec::ExecOverrides ov;
    if (nproc) ov.ranks = nproc;
    if (steps) ov.steps = steps;
    if (batch) ov.per_gpu_batch = batch;
    if (accum) ov.grad_accumulation = accum;
    if (!overlap.empty()) ov.overlap = overlap == "true";
    if (lr > 0) ov.lr = lr;
    ov.warmup_steps = warmup;
    ov.noise_scale = noise == "true";
    ov.noise_ema_beta = noise_ema;
    ov.independent = independent;
    ov.cuda = backend == "cuda";
    ov.loss = loss == "mse" ? ddpsim::exec::Loss::kMse : ddpsim::exec::Loss::kCrossEntropy;
    return ov;
  }
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("scenario", o.scenario_path, "scenario JSON (model.mlp or a GPT-2 hf_config)")
      ->required();
  app.add_option("--nproc", o.nproc, "ranks (default: cluster.gpus)")
      ->check(ddpsim::model::integer_in(1, 64));
  app.add_option("--steps", o.steps, "measured steps (default: simulation.steps)")
      ->check(ddpsim::model::integer_in(1, 100000));
  app.add_option("--warmup-steps", o.warmup, "steps before the measured ones (default 1)")
      ->check(ddpsim::model::integer_in(0, 1000));
  app.add_option("--per-gpu-batch", o.batch, "override training.per_gpu_batch")
      ->check(ddpsim::model::integer_in(1, 1 << 20));
  app.add_option("--grad-accumulation", o.accum, "override training.grad_accumulation")
      ->check(ddpsim::model::integer_in(1, 1024));
  app.add_option("--overlap", o.overlap, "override parallelism.overlap (true|false)")
      ->check(CLI::IsMember({"true", "false"}));
  app.add_option("--lr", o.lr, "learning rate (default: training.lr scaled, else 0.05 / 1e-3)")
      ->check(ddpsim::model::positive_number(1e6));
  app.add_option("--loss", o.loss, "mse | cross_entropy")
      ->check(CLI::IsMember({"mse", "cross_entropy"}));
  app.add_option("--noise-scale", o.noise,
                 "measure the gradient noise scale B_simple (true|false, default true)")
      ->check(CLI::IsMember({"true", "false"}));
  app.add_option("--noise-ema", o.noise_ema,
                 "EMA factor smoothing the noise-scale estimates (default 0.95)")
      ->check(ddpsim::model::number_in(0.0, 0.999999));
  app.add_flag("--independent,--no-comm", o.independent,
               "efficiency baseline: the same per-rank work, all ranks at once, no collectives "
               "(no all-reduce; ddp only)");
  app.add_option("--backend", o.backend,
                 "cpu (OpenBLAS + Gloo, every rank) | cuda (cuBLAS bf16 GPT-2 on one GPU; exit 77 "
                 "without a device)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--out", o.out_path, "results JSON (predict's keys, per-step arrays)");
  app.add_option("--trace", o.trace_path, "Chrome trace of the measured run (one pid per rank)");
  app.add_option("--dump-params", o.dump_path, "final parameters of rank 0, raw float32");
  app.add_option("--timeout-s", o.timeout_s, "Gloo timeout of every collective")
      ->check(ddpsim::model::positive_number(1e6));
  app.add_option("--launch-timeout-s", o.launch_timeout_s, "limit for the whole run")
      ->check(ddpsim::model::positive_number(1e6));
}

// Starts the ranks (this program again, under launch_local) and waits for them. A failed run must
// not leave an earlier complete-looking result behind, nor one that rank 0 wrote while another
// rank was failing (all ranks have exited when launch_local returns), nor the temporary file of
// an interrupted atomic write: a results file exists only after a run in which every rank
// succeeded.
int launch_ranks(const ddpsim::exec::ExecConfig& cfg, const Options& o, int argc, char** argv) {
  std::vector<std::string> args{ddpsim::model::self_exe("ddpsim-exec")};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  ddpsim::comm::LaunchOptions lo;
  lo.timeout_s = o.launch_timeout_s;
  auto remove_outputs = [&] {
    std::error_code ec;
    for (const std::string& p : {o.out_path, o.trace_path, o.dump_path}) {
      if (p.empty()) continue;
      const std::filesystem::path path(p);
      std::filesystem::remove(path, ec);
      const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
      const std::string tmp_prefix = path.filename().string() + ".tmp.";
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().filename().string().rfind(tmp_prefix, 0) == 0) {
          std::filesystem::remove(e.path(), ec);
        }
      }
    }
  };
  remove_outputs();
  // What rank 0 writes belongs to this run until every rank has finished: a SIGINT/SIGTERM
  // stops the ranks (launch_local), then removes what rank 0 had written.
  ddpsim::model::RunOutputs outputs;
  for (const std::string& p : {o.out_path, o.trace_path, o.dump_path}) {
    if (!p.empty()) outputs.add(p);
  }
  const int rc = ddpsim::comm::launch_local(cfg.ranks, args, lo);
  if (rc != 0) remove_outputs();
  outputs.keep();
  return rc == 0 ? 0 : 1;
}

// Rank 0's summary of the run on stdout.
void print_summary(const ddpsim::exec::ExecConfig& cfg, const ddpsim::comm::Communicator& comm,
                   const nlohmann::json& res) {
  std::printf(
      "ddpsim-exec: %s, %s on %d ranks (gloo %s over tcp), per-rank batch %lld x %d, %s, hook "
      "%s, overlap %s\n",
      cfg.model_label.c_str(),
      cfg.independent ? "independent (no collectives)"
      : cfg.zero1     ? "zero1"
                      : "ddp",
      cfg.ranks, comm.version().c_str(), static_cast<long long>(cfg.per_gpu_batch),
      cfg.grad_accumulation, cfg.optimizer_name.c_str(), cfg.hook_name.c_str(),
      cfg.overlap ? "on" : "off");
  std::printf(
      "median of %d steps: step %.3f ms = forward %.3f + backward %.3f + exposed comm %.3f + "
      "optimizer %.3f ms; comm %.3f ms in %d buckets; loss %.5f -> %.5f\n",
      cfg.steps, 1e3 * res.at("step_time_s").get<double>(),
      1e3 * res.at("forward_time_s").get<double>(), 1e3 * res.at("backward_time_s").get<double>(),
      1e3 * res.at("exposed_comm_s").get<double>(), 1e3 * res.at("optimizer_time_s").get<double>(),
      1e3 * res.at("comm_time_s").get<double>(),
      static_cast<int>(res.at("bucket_count").get<int>()), res.at("loss_first").get<double>(),
      res.at("loss_last").get<double>());
  const auto& ns = res.at("noise_scale");
  if (ns.at("estimable").get<bool>() && !ns.at("b_simple").is_null()) {
    std::printf(
        "gradient noise scale B_simple %.4g samples (EMA %.3g over %zu steps; B_small %lld, "
        "B_big %lld); extra all_gather of %d bytes per rank: median %.3f ms/step (%.2f%% of a "
        "step), norms %.3f ms/step\n",
        ns.at("b_simple").get<double>(), cfg.noise_ema_beta, ns.at("steps").size(),
        static_cast<long long>(cfg.rank_batch()), static_cast<long long>(cfg.global_batch()),
        ns.at("collective").at("bytes_per_rank").get<int>(),
        1e3 * ns.at("collective").at("median_time_s").get<double>(),
        100 * ns.at("collective").at("median_fraction_of_step").get<double>(),
        1e3 * ns.at("norm_median_time_s").get<double>());
  } else if (cfg.noise_scale) {
    std::printf("gradient noise scale: not estimable (%s)\n",
                ns.contains("reason") ? ns.at("reason").get<std::string>().c_str()
                                      : "the smoothed |G|^2 estimate is not positive");
  }
}

// One rank of a launched run: train, write this rank's part, and on rank 0 gather the parts
// into the results, the trace and the parameter dump.
int run_this_rank(const ddpsim::exec::ExecConfig& cfg, const ddpsim::comm::RankInfo& me,
                  const Options& o) {
  openblas_set_num_threads(1);  // one core per rank, as torchrun's OMP_NUM_THREADS=1
  try {
    if (me.world_size != cfg.ranks) {
      throw ddpsim::Error(fmt::format("launched with {} ranks but the run needs {} (--nproc)",
                                      me.world_size, cfg.ranks));
    }
    auto comm = ddpsim::comm::make_gloo(
        me, std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000)));
    ddpsim::exec::RankRecord rec = ddpsim::exec::run_rank(cfg, *comm);
    ddpsim::model::write_file_atomic(part_path(me, me.rank),
                                     ddpsim::exec::rank_record_json(rec).dump());
    comm->barrier();  // every part written
    if (me.rank == 0) {
      std::vector<nlohmann::json> ranks;
      for (int r = 0; r < me.world_size; ++r) {
        std::ifstream f(part_path(me, r));
        ranks.push_back(nlohmann::json::parse(f));
        std::filesystem::remove(part_path(me, r));
      }
      const auto ctx = context_json(*comm);
      const auto doc = ddpsim::exec::results_json(cfg, ranks, ctx);
      const auto& res = doc.at("results")[0];
      print_summary(cfg, *comm, res);
      if (!o.out_path.empty()) ddpsim::model::write_file_atomic(o.out_path, doc.dump(2) + "\n");
      if (!o.trace_path.empty()) {
        ddpsim::model::write_file_atomic(
            o.trace_path, ddpsim::exec::chrome_trace_text(ranks, {{"scenario", cfg.scenario_file},
                                                                  {"source", "ddpsim-exec"},
                                                                  {"context", ctx}}));
      }
      if (!o.dump_path.empty()) {
        ddpsim::model::write_file_atomic(
            o.dump_path, std::string(reinterpret_cast<const char*>(rec.final_params.data()),
                                     rec.final_params.size() * sizeof(float)));
      }
    }
    return 0;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim-exec", "rank " + std::to_string(me.rank) + ": " + e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT/SIGTERM: the ranks are stopped, temporaries and this run's outputs removed, one line,
  // exit 130/143 (model/interrupt.hpp).
  ddpsim::model::install_interrupt_handlers("ddpsim-exec");
  CLI::App app{
      "ddpsim-exec: train a scenario's MLP or GPT-2 data-parallel (PyTorch DDP semantics) "
      "over Gloo, or its GPT-2 on one GPU (--backend cuda), and measure each step"};
  Options o;
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line, like every other input error (CLI11's own exit() adds a second line).
    ddpsim::print_error("ddpsim-exec", e.what());
    return 2;
  }
  ddpsim::exec::ExecConfig cfg;
  std::optional<ddpsim::comm::RankInfo> me;
  try {
    // Before anything is removed or run (launch_ranks clears the outputs first): never onto
    // the scenario, nor onto each other, nor onto a FIFO or a device.
    ddpsim::model::check_output_path("--out", o.out_path,
                                     {o.scenario_path, o.trace_path, o.dump_path});
    ddpsim::model::check_output_path("--trace", o.trace_path, {o.scenario_path, o.dump_path});
    ddpsim::model::check_output_path("--dump-params", o.dump_path, {o.scenario_path});
    cfg = ddpsim::exec::config_from_scenario(ddpsim::model::load_scenario(o.scenario_path),
                                             o.overrides());
    me = ddpsim::comm::rank_from_env();
    if (cfg.cuda) {
      ddpsim::exec::check_cuda_backend(cfg);
    } else {
      ddpsim::exec::check_memory(cfg, ddpsim::exec::mem_available_bytes());
    }
  } catch (const ddpsim::Error& e) {
    ddpsim::print_error("ddpsim-exec", e.what());
    return 2;
  }

  if (cfg.cuda) {
    try {
      return ddpsim::exec::run_cuda_backend(cfg, o.out_path);
    } catch (const std::exception& e) {
      ddpsim::print_error("ddpsim-exec", std::string("--backend cuda: ") + e.what());
      return 1;
    }
  }
  if (!me) return launch_ranks(cfg, o, argc, argv);
  return run_this_rank(cfg, *me, o);
}
