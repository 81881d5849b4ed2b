#include "sweep_mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dyncheck/checks/params.hpp"
#include "dyncheck/reports/files.hpp"
#include "dyncheck/sim/replicate_exchange.hpp"

namespace dyncheck::reports::mpi {
namespace {

constexpr int tag_request = 1;  // worker -> rank 0: "" (first request) or the finished record
constexpr int tag_assign = 2;   // rank 0 -> worker: the next point index, or `stop`
constexpr std::uint64_t stop = std::numeric_limits<std::uint64_t>::max();

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI error in {}", what));
}

/// Receives the string message (a finished record, or "" for a first request) that `probe` found.
std::string receive_probed(const MPI_Status& probe) {
  int length = 0;
  check(MPI_Get_count(&probe, MPI_CHAR, &length), "MPI_Get_count");
  std::string payload(static_cast<std::size_t>(length), '\0');
  check(MPI_Recv(payload.data(), length, MPI_CHAR, probe.MPI_SOURCE, tag_request, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return payload;
}

/// The replicate exchange over one group's communicator: an allgather of byte strings.
class MpiExchange final : public sim::ReplicateExchange {
 public:
  explicit MpiExchange(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  }
  int size() const override { return size_; }
  int rank() const override { return rank_; }
  /// Collective calls made and bytes gathered so far (reported on stdout, never written to files).
  std::size_t calls() const { return calls_; }
  std::size_t bytes() const { return bytes_; }
  std::vector<std::string> allgather(const std::string& mine) override {
    if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw std::runtime_error("replicate exchange: one share exceeds 2 GiB");
    }
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    std::vector<int> offsets(static_cast<std::size_t>(size_));
    long long total = 0;
    for (std::size_t m = 0; m < lengths.size(); ++m) {
      offsets[m] = static_cast<int>(total);
      total += lengths[m];
      if (total > std::numeric_limits<int>::max()) throw std::runtime_error("replicate exchange: shares exceed 2 GiB");
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm_),
          "MPI_Allgatherv");
    ++calls_;
    bytes_ += static_cast<std::size_t>(total);
    std::vector<std::string> shares;
    shares.reserve(lengths.size());
    for (std::size_t m = 0; m < lengths.size(); ++m) {
      shares.push_back(all.substr(static_cast<std::size_t>(offsets[m]), static_cast<std::size_t>(lengths[m])));
    }
    return shares;
  }

 private:
  MPI_Comm comm_;
  int size_ = 1;
  int rank_ = 0;
  std::size_t calls_ = 0;
  std::size_t bytes_ = 0;
};

int mpi_size() {
  int size = 1;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

/// Fewer points left than ranks: the ranks form one group per point (rank r joins group r mod P,
/// P = points left), each group runs its point with the point's replicates split over its members
/// (sim::ReplicateExchange), and the group leaders (world ranks 0..P-1) send the records to rank 0.
/// The records are the serial run's, bit for bit: evaluate_sweep_point is the same call, and the
/// split replicates return the same values.
void run_groups(const std::vector<std::uint64_t>& points, const Sweep& sweep, int world_rank, SweepJournal* journal,
                const std::function<void(std::size_t, std::size_t)>& progress) {
  const int groups = static_cast<int>(points.size());
  const int group = world_rank % groups;
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, group, world_rank, &comm), "MPI_Comm_split");
  nlohmann::json record;
  std::size_t exchanges = 0;
  std::size_t bytes = 0;
  std::size_t unsplit = 0;
  std::vector<std::string> unsplit_types;
  int members = 1;
  {
    MpiExchange exchange(comm);
    const sim::ScopedReplicateExchange installed(&exchange);
    record = evaluate_sweep_point(sweep, static_cast<std::size_t>(points[static_cast<std::size_t>(group)]));
    exchanges = exchange.calls();
    bytes = exchange.bytes();
    members = exchange.size();
    unsplit = exchange.unsplit_calls();
    unsplit_types = exchange.unsplit_types();
  }
  check(MPI_Comm_free(&comm), "MPI_Comm_free");
  const bool leader = world_rank < groups;
  if (world_rank == 0) {
    // Printed only (not written to the files, which must not depend on the ranks).
    fmt::print("{} point{} left for {} ranks: one group of ranks per point; point {}: replicates split over {} rank{} "
               "in {} exchange{} ({} bytes)\n",
               groups, groups == 1 ? "" : "s", mpi_size(), points[0], members, members == 1 ? "" : "s", exchanges,
               exchanges == 1 ? "" : "s", bytes);
    if (unsplit > 0) {
      fmt::print("  {} replicate call{} computed whole by every member (no ReplicateCodec for {})\n", unsplit,
                 unsplit == 1 ? "" : "s", fmt::join(unsplit_types, "; "));
    }
    journal->append(record);
    if (progress) progress(journal->done_count(), sweep.size());
    for (int received = 1; received < groups; ++received) {
      MPI_Status probe;
      check(MPI_Probe(MPI_ANY_SOURCE, tag_request, MPI_COMM_WORLD, &probe), "MPI_Probe");
      journal->append(nlohmann::json::parse(receive_probed(probe)));
      if (progress) progress(journal->done_count(), sweep.size());
    }
  } else if (leader) {
    const std::string payload = record.dump();
    check(MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, tag_request, MPI_COMM_WORLD),
          "MPI_Send");
  }
}

}  // namespace

bool launched_under_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

Session::Session(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("the MPI library does not provide MPI_THREAD_FUNNELED");
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

Session::~Session() { MPI_Finalize(); }

void Session::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void run_sweep(const Session& session, const Sweep& sweep, const std::filesystem::path& directory, bool resume,
               const std::function<void(std::size_t, std::size_t)>& progress) {
  if (session.size() == 1) {
    reports::run_sweep(sweep, directory, resume, progress);
    return;
  }
  const auto ranks = static_cast<std::size_t>(session.size());
  // Phase 2, on every rank: the points left (fewer than the ranks) run in groups of ranks that split
  // their replicates. Rank 0 broadcasts which points are left.
  auto run_rest = [&](std::vector<std::uint64_t> points, SweepJournal* journal) {
    std::uint64_t count = points.size();
    check(MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    if (count == 0) return;
    points.resize(count);
    check(MPI_Bcast(points.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    run_groups(points, sweep, session.rank(), journal, progress);
  };

  if (session.rank() != 0) {
    // Rank 0 says whether the journal could be opened; on a mismatch every rank stops.
    int status = 0;
    check(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    if (status != 0) throw checks::ParamError("resume", "rank 0 refused the sweep (see its message)");
    // Phase 1: one point at a time, until rank 0 says stop.
    std::string payload;
    while (true) {
      check(MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, tag_request, MPI_COMM_WORLD),
            "MPI_Send");
      std::uint64_t index = 0;
      check(MPI_Recv(&index, 1, MPI_UINT64_T, 0, tag_assign, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      if (index == stop) break;
      payload = evaluate_sweep_point(sweep, static_cast<std::size_t>(index)).dump();
    }
    run_rest({}, nullptr);
    return;
  }

  // Rank 0.
  std::unique_ptr<SweepJournal> journal;
  int status = 0;
  std::exception_ptr refused;
  try {
    prepare_output_directory(directory);
    journal = std::make_unique<SweepJournal>(sweep, directory, resume);
  } catch (...) {
    status = 1;
    refused = std::current_exception();
  }
  check(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (refused) std::rethrow_exception(refused);

  const std::size_t total = sweep.size();
  std::mutex mutex;
  std::deque<std::size_t> pending;
  for (std::size_t i = 0; i < total; ++i) {
    if (!journal->done(i)) pending.push_back(i);
  }
  // Phase 1 hands out points one per rank while at least as many points are left as ranks; the
  // fewer than `ranks` points left after that are phase 2's, where no rank waits idle for another.
  auto next = [&]() -> std::uint64_t {
    std::lock_guard lock(mutex);
    if (pending.size() < ranks) return stop;
    const std::size_t index = pending.front();
    pending.pop_front();
    return index;
  };
  if (progress) progress(journal->done_count(), total);

  try {
    // Rank 0's own share, computed beside the coordination (which alone calls MPI).
    std::vector<nlohmann::json> local_results;
    std::exception_ptr local_error;
    bool local_done = false;
    std::thread local([&] {
      try {
        for (std::uint64_t index = next(); index != stop; index = next()) {
          nlohmann::json record = evaluate_sweep_point(sweep, static_cast<std::size_t>(index));
          std::lock_guard lock(mutex);
          local_results.push_back(std::move(record));
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        local_error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      local_done = true;
    });

    int active_workers = session.size() - 1;
    try {
      while (true) {
        std::vector<nlohmann::json> finished;
        bool local_finished = false;
        {
          std::lock_guard lock(mutex);
          finished.swap(local_results);
          local_finished = local_done;
          if (local_error) std::rethrow_exception(local_error);
        }
        for (const nlohmann::json& record : finished) {
          journal->append(record);
          if (progress) progress(journal->done_count(), total);
        }
        if (local_finished && active_workers == 0) break;
        int flag = 0;
        MPI_Status probe;
        check(MPI_Iprobe(MPI_ANY_SOURCE, tag_request, MPI_COMM_WORLD, &flag, &probe), "MPI_Iprobe");
        if (flag == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          continue;
        }
        const std::string payload = receive_probed(probe);
        if (!payload.empty()) {
          journal->append(nlohmann::json::parse(payload));
          if (progress) progress(journal->done_count(), total);
        }
        const std::uint64_t index = next();
        check(MPI_Send(&index, 1, MPI_UINT64_T, probe.MPI_SOURCE, tag_assign, MPI_COMM_WORLD), "MPI_Send");
        if (index == stop) --active_workers;
      }
    } catch (const std::exception& error) {
      // The other ranks wait for rank 0: end the whole job, keeping what the journal holds (the
      // local thread is not joined: abort ends the process).
      fmt::print(stderr, "dyncheck: rank 0: {}; stopping every rank (the finished points stay in {})\n", error.what(),
                 (directory / "points.jsonl").string());
      session.abort(3);
    }
    local.join();
    run_rest(std::vector<std::uint64_t>(pending.begin(), pending.end()), journal.get());
  } catch (const std::exception& error) {
    // The other ranks wait for rank 0: end the whole job, keeping what the journal holds.
    fmt::print(stderr, "dyncheck: rank 0: {}; stopping every rank (the finished points stay in {})\n", error.what(),
               (directory / "points.jsonl").string());
    session.abort(3);
  }
  write_sweep_outputs(sweep, journal->records(), directory);
}

}  // namespace dyncheck::reports::mpi
