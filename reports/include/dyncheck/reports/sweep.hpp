#pragma once
// Sweeps: one claim evaluated at every point of a grid of parameter values, to map where its
// theorem stops holding (issue #16).
//
// A grid is the product of axes, each `name=v1,v2,...` or `name=lo:hi:n[:log]`, every value
// checked against the claim's declared range before any work. Point i of the grid varies the last
// axis fastest. Every point runs the claim with the sweep's master seed and budget and the point's
// values as --param overrides, so that a point's verdict is exactly that of
//   dyncheck run <claim> --budget B --seed S --param <axis>=<value> ...
// (common random numbers across the grid: neighbouring points differ by the parameter, not by the
// noise). A point whose parameters the claim refuses (a cross-parameter condition or a cost limit)
// is recorded as REFUSED with the claim's message.
//
// Nothing is lost: each finished point is appended as one line to DIR/points.jsonl and synced to
// disk before the next point starts; the first line is the sweep's header (claim, axes, seed,
// budget, overrides, version). --resume checks the header against the command and skips the points
// already there. From the journal, DIR/sweep.json, DIR/sweep.csv and DIR/sweep.svg are written.
// Nothing in them depends on timing, the number of threads or processes, or interruptions.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/runner.hpp"

namespace dyncheck::reports {

struct SweepAxis {
  std::string name;
  std::string text;                 ///< as given: "eta=0.01,0.02" or "eta=1e-3:1e-1:5:log"
  std::vector<std::string> values;  ///< each value as it is passed to --param
  bool log_scale = false;           ///< plotted on a log axis
};

/// Parses one --grid argument for `claim`; throws checks::ParamError (naming the parameter and its
/// range) on a malformed axis, an unknown parameter, or a value outside the declared range.
SweepAxis parse_sweep_axis(const checks::Claim& claim, const std::string& text);

struct Sweep {
  const checks::Claim* claim = nullptr;
  std::vector<SweepAxis> axes;
  checks::RunOptions options;  ///< budget, seed, threads and the fixed --param overrides
  std::string version;         ///< dyncheck's version, part of the header a resume must match

  std::size_t size() const;
  /// The axis values of point i (last axis fastest).
  std::vector<std::string> point(std::size_t index) const;
  /// The header line of points.jsonl and of sweep.json.
  nlohmann::json header() const;
};

/// Throws checks::ParamError when two axes name the same parameter, an axis parameter is also given
/// with --param, or the grid has more than `max_points` points.
void check_sweep(const Sweep& sweep, std::size_t max_points);

/// Runs the claim at point i and returns its record: index, the point's values, outcome, margin and
/// every comparison (theory, numerical error, measurement, half-width, tolerance terms), or the
/// claim's message for a REFUSED point. No plots, no times: the record is a pure function of the
/// sweep and i.
nlohmann::json evaluate_sweep_point(const Sweep& sweep, std::size_t index);

/// DIR/points.jsonl: the header line, then one line per finished point in the order they finished.
class SweepJournal {
 public:
  /// Creates DIR/points.jsonl with the header, or with `resume` reads the existing one: its header
  /// must equal the sweep's and each line must be a point of this grid, seen once; otherwise throws
  /// checks::ParamError naming the difference or the line, and leaves the file untouched. Without
  /// `resume` an existing journal is an error (ParamError: resume it or choose another --out).
  SweepJournal(const Sweep& sweep, const std::filesystem::path& directory, bool resume);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  bool done(std::size_t index) const { return records_[index] != nullptr; }
  std::size_t done_count() const { return done_count_; }
  /// Appends the record as one line, then fsync: on return the point survives a crash.
  void append(const nlohmann::json& record);
  /// The records in grid order (every point must be done).
  std::vector<nlohmann::json> records() const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<std::unique_ptr<nlohmann::json>> records_;
  std::size_t done_count_ = 0;
};

/// Writes DIR/sweep.json, DIR/sweep.csv and DIR/sweep.svg (margin against the axis for one axis, a
/// heatmap of the margin with each verdict marked for two; no plot for more axes).
void write_sweep_outputs(const Sweep& sweep, const std::vector<nlohmann::json>& records,
                         const std::filesystem::path& directory);

/// The serial driver: every point not yet in the journal, in grid order, then the outputs.
/// `progress(done, total)` after each point. Returns the records in grid order (as in sweep.json).
std::vector<nlohmann::json> run_sweep(const Sweep& sweep, const std::filesystem::path& directory, bool resume,
               const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace dyncheck::reports
