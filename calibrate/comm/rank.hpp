// rank.hpp: who this process is in a multi-process run, read from the launcher's variables.
//
// Understands the torchrun convention (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), which launch_local() and `torchrun` set, and OpenMPI's
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE), which `mpirun` sets, and Slurm's
// for a task that `srun` started (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID,
// SLURM_STEP_TASKS_PER_NODE with SLURM_NODEID; only when SLURM_STEP_ID is set, so a batch
// script's own environment is not taken for rank 0 of its job). torchrun variables win, then
// OpenMPI's, then Slurm's (torchrun or mpirun inside a Slurm allocation set their own).
//
// The Gloo rendezvous here is a FileStore (the installed Gloo has no TCP store), so every rank
// needs the same directory: DDPSIM_STORE_DIR names it (launch_local sets a fresh one per run).
// Without it the directory is derived from the OpenMPI job id (unique per mpirun), the Slurm job
// and step ids, or, for
// torchrun, from MASTER_ADDR:MASTER_PORT; a reused port can then meet stale keys, so set
// DDPSIM_STORE_DIR for torchrun.
//
// DDPSIM_BIND_ADDR chooses the address the TCP transport listens on (default 127.0.0.1 when all
// ranks are on this host, MASTER_ADDR when that is set and the run spans one host; useful inside
// network namespaces).
//
//   if (auto me = ddpsim::comm::rank_from_env()) run_rank(*me); else launch_local(...);
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ddpsim::comm {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string store_dir;  ///< Gloo FileStore directory shared by all ranks of the run.
  std::string bind_addr = "127.0.0.1";  ///< address the Gloo TCP device binds to.
};

/// Reads the launcher variables from the process environment. nullopt when none of RANK,
/// OMPI_COMM_WORLD_RANK and (SLURM_PROCID with SLURM_STEP_ID) is set. Throws ddpsim::Error naming
/// the variable when one is malformed (not an integer, rank outside [0, world_size)).
std::optional<RankInfo> rank_from_env();

/// The same, reading variables through `getenv` (for tests; returns nullptr when unset).
std::optional<RankInfo> rank_from_env(const std::function<const char*(const char*)>& getenv);

/// Creates the rendezvous folder `dir` (RankInfo::store_dir) when it is missing, so that Gloo's
/// FileStore finds it (it fails with "enforce fail ... realpath" otherwise, as under torchrun
/// without DDPSIM_STORE_DIR); throws Error naming the folder and why it cannot be made.
void ensure_store_dir(const std::string& dir);

}  // namespace ddpsim::comm
