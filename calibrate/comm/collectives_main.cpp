// ddpsim-collectives: an nccl-tests-style sweep of one or all collectives over Gloo or NCCL.
//
//   ddpsim-collectives --nproc 2 --op all_reduce -b 8 -e 256M -f 2 [--json OUT.json]
//   ddpsim-collectives --nproc 2 --op all_reduce -b 8 -e 4M --size-offset 1.5 --json second.json
//       (12, 24, 48, ... B: the geometric midpoints of the first sweep's sizes, the independent
//       sweep `ddpsim-calibrate check-fit PROFILE second.json` predicts)
//
// Without launcher variables in the environment it starts --nproc copies of itself through
// launch_local (a one-host torchrun); under torchrun/mpirun it runs as the rank it is given.
// Rank 0 prints the nccl-tests table and writes the profile's "collectives" section.
// Exit codes: 0 ok, 2 bad arguments, 1 run failure (a rank died, a timeout, wrong results).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "calibrate/comm/communicator.hpp"
#include "calibrate/comm/gloo_communicator.hpp"
#include "calibrate/comm/launcher.hpp"
#include "calibrate/comm/nccl_communicator.hpp"
#include "calibrate/comm/rank.hpp"
#include "calibrate/comm/sweep.hpp"
#include "model/atomic_file.hpp"
#include "model/cli_validators.hpp"
#include "model/error.hpp"
#include "model/interrupt.hpp"
#include "model/process_env.hpp"

namespace {

// "8", "64K", "4M", "1G" (powers of 1024, as nccl-tests reads -b/-e).
std::int64_t parse_size(const std::string& s) {
  std::size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (const std::exception&) {
    throw ddpsim::Error("expected a size such as 8, 64K, 4M or 1G, got '" + s + "'");
  }
  std::string unit = s.substr(pos);
  std::int64_t mult = 1;
  if (unit == "K" || unit == "k")
    mult = 1 << 10;
  else if (unit == "M" || unit == "m")
    mult = 1 << 20;
  else if (unit == "G" || unit == "g")
    mult = 1 << 30;
  else if (!unit.empty() && unit != "B")
    throw ddpsim::Error("expected a size such as 8, 64K, 4M or 1G, got '" + s + "'");
  if (v < 0) throw ddpsim::Error("expected a positive size, got '" + s + "'");
  return v * mult;
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT/SIGTERM: the ranks stopped, temporaries removed, one line, exit 130/143.
  ddpsim::model::install_interrupt_handlers("ddpsim-collectives");
  CLI::App app{"ddpsim-collectives: nccl-tests-style collective sweep over Gloo (CPU) or NCCL"};
  int nproc = 2;
  std::string op = "all_reduce", backend = "gloo", minb = "8", maxb = "256M", json_out;
  std::int64_t factor = 2;
  int warmup = 5, iters = 20, root = 0;
  double timeout_s = 60;
  double size_offset = 1.0;
  bool quick = false, no_in_place = false;
  app.add_option("--nproc", nproc, "ranks to start on this host (ignored under torchrun/mpirun)")
      ->check(ddpsim::model::integer_in(1, 256));
  app.add_option("--op", op, "all_reduce | reduce_scatter | all_gather | broadcast | all");
  app.add_option("--backend", backend, "gloo | nccl")->check(CLI::IsMember({"gloo", "nccl"}));
  app.add_option("-b,--minbytes", minb, "smallest size (bytes of the largest buffer; K/M/G)");
  app.add_option("-e,--maxbytes", maxb, "largest size");
  app.add_option("-f,--stepfactor", factor, "size growth factor")
      ->check(ddpsim::model::integer_in(2, 1024));
  app.add_option("-w,--warmup_iters", warmup, "untimed calls per size")
      ->check(ddpsim::model::integer_in(1, 10000));
  app.add_option("-n,--iters", iters, "timed calls per size")
      ->check(ddpsim::model::integer_in(1, 100000));
  app.add_option("-r,--root", root, "broadcast root")->check(ddpsim::model::integer_in(0, 255));
  app.add_option("--timeout-s", timeout_s, "per-collective timeout and launcher limit x10")
      ->check(ddpsim::model::positive_number(1e6));
  app.add_option("--size-offset", size_offset,
                 "first size = minbytes x this (1.5: midpoints between the powers of two)")
      ->check(ddpsim::model::number_in(1.0, 1024.0));
  app.add_flag("--quick", quick, "sizes up to 4 MiB, 2 warmup and 5 timed calls");
  app.add_flag("--no-in-place", no_in_place, "only out-of-place rows");
  app.add_option("--json", json_out, "write the profile's collectives section here (atomically)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line, like every other input error (CLI11's own exit() adds a second line).
    ddpsim::print_error("ddpsim-collectives", e.what());
    return 2;
  }

  ddpsim::comm::SweepOptions so;
  try {
    if (op != "all") so.ops = {ddpsim::comm::op_from_name(op)};
    so.min_bytes = parse_size(minb);
    so.max_bytes = parse_size(maxb);
    if (so.min_bytes < 4 || so.max_bytes < so.min_bytes) {
      throw ddpsim::Error("expected 4 <= minbytes <= maxbytes, got " + minb + " and " + maxb);
    }
    so.step_factor = factor;
    so.size_offset = size_offset;
    (void)ddpsim::comm::sweep_sizes(so);  // bad combinations are refused before ranks start
    ddpsim::model::check_output_path("--json", json_out, {});  // not a FIFO, a device, a folder
  } catch (const ddpsim::Error& e) {
    ddpsim::print_error("ddpsim-collectives", e.what());
    return 2;
  }
  try {
    so.step_factor = factor;
    so.warmup = warmup;
    so.iters = iters;
    so.quick = quick;
    so.in_place_too = !no_in_place;
    so.root = root;

    auto me = ddpsim::comm::rank_from_env();
    if (!me) {
      std::vector<std::string> args{ddpsim::model::self_exe("ddpsim-collectives")};
      for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
      ddpsim::comm::LaunchOptions lo;
      // A full 256 MiB sweep of four ops takes minutes over loopback TCP; the limit only
      // guards against a hang the per-call timeouts did not catch.
      lo.timeout_s = std::max(600.0, 10 * timeout_s);
      return ddpsim::comm::launch_local(nproc, args, lo) == 0 ? 0 : 1;
    }

    const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    auto comm = backend == "nccl" ? ddpsim::comm::make_nccl(*me, timeout)
                                  : ddpsim::comm::make_gloo(*me, timeout);
    so.ranks_per_node = me->local_world_size;
    if (comm->rank() == 0) {
      std::printf("# ddpsim-collectives: %s %s, %d ranks, transport %s\n", comm->backend().c_str(),
                  comm->version().c_str(), comm->size(), comm->transport().c_str());
      const std::string note = ddpsim::comm::oversubscription_note(
          comm->backend(), me->local_world_size, ddpsim::comm::usable_cores());
      if (!note.empty()) std::printf("# warning: %s\n", note.c_str());
    }
    // One sweep per op so that each gets its own table, as nccl-tests' binaries do.
    nlohmann::json section;
    for (ddpsim::model::CollectiveOp o : std::vector<ddpsim::model::CollectiveOp>(so.ops)) {
      if (comm->rank() == 0) {
        std::printf("#\n# %s\n%s", std::string(ddpsim::model::collective_op_name(o)).c_str(),
                    ddpsim::comm::format_header().c_str());
        std::fflush(stdout);
      }
      ddpsim::comm::SweepOptions one = so;
      one.ops = {o};
      auto part = ddpsim::comm::run_sweep(*comm, one, [&](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      });
      if (comm->rank() != 0) continue;
      if (section.is_null()) {
        section = part;
      } else {
        for (auto& [name, entry] : part.at("ops").items()) section["ops"][name] = entry;
      }
    }
    std::int64_t wrong = 0;
    if (comm->rank() == 0) {
      for (const auto& [name, entry] : section.at("ops").items()) {
        for (const auto& row : entry.at("rows")) wrong += row.at("wrong").get<std::int64_t>();
      }
      if (!json_out.empty()) {
        ddpsim::model::write_file_atomic(json_out, section.dump(2) + "\n");
      }
      std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(wrong),
                  wrong == 0 ? "OK" : "FAILED");
      std::fflush(stdout);
      try {
        ddpsim::comm::verify_sweep(section);
      } catch (const ddpsim::Error& e) {
        ddpsim::print_error("ddpsim-collectives", e.what());
      }
    }
    comm->barrier();
    return wrong == 0 ? 0 : 1;
  } catch (const ddpsim::InputError& e) {
    ddpsim::print_error("ddpsim-collectives", e.what());
    return 2;
  } catch (const ddpsim::UnsupportedError& e) {
    ddpsim::print_error("ddpsim-collectives", e.what());
    return 2;
  } catch (const std::exception& e) {
    ddpsim::print_error("ddpsim-collectives", e.what());
    return 1;
  }
}
