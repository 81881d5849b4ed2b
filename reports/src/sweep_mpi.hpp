#pragma once
// `dyncheck sweep` across MPI ranks (issue #16), built only where MPI is installed (DYNCHECK_HAVE_MPI).
//
// Rank 0 owns the journal and the outputs and hands out grid points one at a time: to the other
// ranks on request (each sends its finished record with the request for the next point), and to a
// compute thread of its own, so that no rank is a pure coordinator. Every record is appended to
// points.jsonl and synced as soon as rank 0 has it. A record is a pure function of the sweep and the
// point index (evaluate_sweep_point), so the files are identical, byte for byte, to the serial run's
// and to a run on any other number of ranks. A rank that dies makes mpirun stop the job with a
// non-zero exit; the points already journaled are kept and `--resume` continues from them.
// While at least as many points are left as ranks, points are the unit of work; the fewer points
// left after that run in groups of ranks, one group per point, which split the point's replicates
// (sim/replicate_exchange.hpp), so that a slow last point does not leave the other ranks idle.

#include <cstddef>
#include <filesystem>
#include <functional>

#include "dyncheck/reports/sweep.hpp"

namespace dyncheck::reports::mpi {

/// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx).
bool launched_under_mpi();

/// MPI_Init_thread on construction (MPI_THREAD_FUNNELED), MPI_Finalize on destruction.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Ends every rank of the job with `code` (after a failure on one rank).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// run_sweep distributed over the session's ranks; `progress` is called on rank 0 only. Rank 0
/// throws what run_sweep would (checks::ParamError for a journal that does not match); the other
/// ranks then throw checks::ParamError too, with a message that points at rank 0's.
void run_sweep(const Session& session, const Sweep& sweep, const std::filesystem::path& directory, bool resume,
               const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace dyncheck::reports::mpi
