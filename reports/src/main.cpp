// dyncheck: list, run, report and calibrate the registered claims.
//
// Exit codes: 0 all verdicts as expected (PASS, or the --expect'ed outcome); 1 a FAIL (or, for
// `report`, a claim not passing or a mutant not caught; for `calibrate`, an observed failure rate
// inconsistent with the promised one); 2 usage or parameter error; 3 an ERROR verdict, or (for
// `report`) a file that could not be written, with its path and the OS error on stderr;
// 4 an INCONCLUSIVE verdict (the budget cannot decide; not a pass).
//
// Every input is checked before any claim runs: --param values (plain decimal only, within the
// parameter's range, each parameter at most once), --seed and DYNCHECK_SEED (a decimal integer in
// [0, 2^64 - 1]), --threads and DYNCHECK_THREADS (a decimal integer in [1, 1024]), --seeds, and
// that --out is (or can be created as) a directory. Report files are written to "<name>.partial"
// and renamed into place, so a failed write never replaces a good file with a partial one.

#include <algorithm>
#include <chrono>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "dyncheck/checks/registry.hpp"
#include "dyncheck/checks/runner.hpp"
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/reports/files.hpp"
#include "dyncheck/reports/json.hpp"
#include "dyncheck/reports/markdown.hpp"
#include "dyncheck/reports/plot.hpp"
#include "dyncheck/reports/run_options.hpp"
#include "dyncheck/reports/sweep.hpp"
#ifdef DYNCHECK_HAVE_MPI
#include "sweep_mpi.hpp"
#endif

namespace {

using namespace dyncheck;
using checks::Outcome;
using reports::CommonOptions;
using reports::run_options;

constexpr int exit_fail = 1, exit_usage = 2, exit_error = 3, exit_inconclusive = 4;

// A sweep has at most this many points: beyond it a grid is a typo more often than a plan, and
// its journal and outputs grow past what a report can show.
constexpr std::size_t max_sweep_points = 100000;

void add_common(CLI::App& command, CommonOptions& options) {
  command.add_option("--budget", options.budget, "smoke | ci | full")->check(CLI::IsMember({"smoke", "ci", "full"}));
  command.add_option("--seed", options.seed,
                     "master seed, a decimal integer in [0, 2^64 - 1] (default: DYNCHECK_SEED or 20261122)");
  command.add_option("--threads", options.threads,
                     fmt::format("worker threads, a decimal integer in [1, {}] (default: DYNCHECK_THREADS or all cores)",
                                 checks::max_threads));
  command.add_flag("--quiet", options.quiet, "no progress on stderr");
}

/// Progress on stderr, only when it is a terminal (logs of CI stay clean).
class Progress {
 public:
  explicit Progress(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO) == 1) {}
  void start(const std::string& label) {
    if (!enabled_) return;
    std::lock_guard lock(mutex_);
    label_ = label;
    std::fprintf(stderr, "\r\033[K%s", label_.c_str());
  }
  std::function<void(std::string_view, std::size_t, std::size_t)> callback() {
    if (!enabled_) return {};
    return [this](std::string_view stage, std::size_t done, std::size_t total) {
      std::lock_guard lock(mutex_);
      std::fprintf(stderr, "\r\033[K%s: %.*s %zu/%zu", label_.c_str(), static_cast<int>(stage.size()), stage.data(),
                   done, total);
    };
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool enabled_;
  std::mutex mutex_;
  std::string label_;
};

/// With `allow_unavailable`, a verdict that is ERROR only because the claim's external input is missing
/// (Verdict::input_unavailable, printed with its reason) does not set the exit code.
int exit_code(const std::vector<checks::Verdict>& all, std::optional<Outcome> expected, bool allow_unavailable = false) {
  std::vector<checks::Verdict> verdicts;
  for (const auto& verdict : all) {
    if (!(allow_unavailable && verdict.input_unavailable)) verdicts.push_back(verdict);
  }
  if (expected) {
    for (const auto& verdict : verdicts) {
      if (verdict.outcome != *expected) return verdict.outcome == Outcome::error ? exit_error : exit_fail;
    }
    return 0;
  }
  int code = 0;
  for (const auto& verdict : verdicts) {
    if (verdict.outcome == Outcome::error) return exit_error;
    if (verdict.outcome == Outcome::fail) code = exit_fail;
    if (verdict.outcome == Outcome::inconclusive && code == 0) code = exit_inconclusive;
  }
  return code;
}

/// One line per verdict; with `details`, one more per comparison that did not pass.
void print_verdict(const checks::Verdict& verdict, bool details = true) {
  const std::string name = verdict.claim_id + (verdict.mutant.empty() ? "" : " [mutant " + verdict.mutant + "]");
  fmt::print("{:<12} {}  margin {:.3g}  ({} comparisons, {:.2f} s)\n", checks::to_string(verdict.outcome), name,
             verdict.margin(), verdict.comparisons.size(), verdict.wall_seconds);
  if (!verdict.error.empty()) fmt::print("             error: {}\n", verdict.error);
  if (!details) return;
  for (const auto& comparison : verdict.comparisons) {
    if (comparison.outcome() == Outcome::pass) continue;
    const bool beyond = comparison.outcome() == Outcome::fail;
    fmt::print("             {}: {}: theory {:.6g} vs measured {:.6g} ± {:.3g}; discrepancy {:.3g}, tolerance {:.3g} "
               "(num {:.3g} + bias {:.3g} + stat {:.3g}){}\n",
               checks::to_string(comparison.outcome()), comparison.quantity, comparison.theory, comparison.measured,
               comparison.half_width, comparison.discrepancy(), comparison.tolerance.total(),
               comparison.tolerance.numerical.value, comparison.tolerance.bias.value,
               comparison.tolerance.statistical.value,
               beyond ? std::string() : fmt::format(" wider than the resolution {:.3g}", comparison.resolution));
  }
}

int command_list(bool json) {
  const auto claims = checks::builtin_registry().all();
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto* claim : claims) list.push_back(reports::to_json(claim->info()));
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto* claim : claims) {
    const auto& info = claim->info();
    fmt::print("{}  {}  {}\n    {}\n", info.id, checks::to_string(info.tag), info.source, info.statement);
  }
  return 0;
}

/// `run <claim> --save-variants DIR`: the claim and every mutant from one measurement; all verdicts
/// to DIR/<claim>.json (ctest's mutant tests read them); the exit code is the claim's own.
int command_run_variants(const checks::Claim& claim, const checks::RunOptions& options, const std::string& directory,
                         std::optional<Outcome> expected, bool quiet) {
  Progress progress(quiet);
  checks::RunOptions with_progress = options;
  with_progress.progress = progress.callback();
  progress.start(claim.info().id);
  const std::vector<checks::Verdict> verdicts =
      checks::run_claim_variants(claim, with_progress, checks::all_variants(claim));
  progress.finish();
  nlohmann::json array = nlohmann::json::array();
  for (const auto& verdict : verdicts) {
    print_verdict(verdict, verdict.mutant.empty());
    array.push_back(reports::to_json(verdict));
  }
  std::filesystem::create_directories(directory);
  reports::write_file_atomically(std::filesystem::path(directory) / (claim.info().id + ".json"), array.dump(1) + "\n");
  return exit_code({verdicts.front()}, expected);
}

int command_run(const std::vector<std::string>& selectors, const CommonOptions& common, bool json,
                const std::string& mutant, const std::string& expect, const std::string& save_variants,
                bool allow_unavailable) {
  const auto& registry = checks::builtin_registry();
  const auto claims = registry.select(selectors);
  checks::RunOptions options = run_options(common, claims);
  if (!mutant.empty() && claims.size() != 1) {
    throw checks::ParamError("mutant", "--mutant needs exactly one claim id");
  }
  if (!save_variants.empty() && (claims.size() != 1 || !mutant.empty())) {
    throw checks::ParamError("save-variants", "--save-variants needs exactly one claim id and no --mutant");
  }
  options.mutant = mutant;
  std::optional<Outcome> expected;
  if (expect == "pass") expected = Outcome::pass;
  if (expect == "fail") expected = Outcome::fail;

  if (!save_variants.empty()) return command_run_variants(*claims.front(), options, save_variants, expected, common.quiet);

  Progress progress(common.quiet);
  options.progress = progress.callback();
  std::vector<checks::Verdict> verdicts;
  nlohmann::json array = nlohmann::json::array();
  for (const auto* claim : claims) {
    progress.start(claim->info().id);
    verdicts.push_back(checks::run_claim(*claim, options));
    progress.finish();
    if (json) {
      array.push_back(reports::to_json(verdicts.back()));
    } else {
      print_verdict(verdicts.back());
    }
  }
  if (json) std::cout << array.dump(2) << "\n";
  return exit_code(verdicts, expected, allow_unavailable);
}

/// The families' assumption-breaking sweeps of the selected claims, each into
/// <directory>/sweeps/<claim>-<n> (replaced), at the report's budget, seed and threads.
std::vector<reports::SweepReport> run_report_sweeps(const reports::Report& report, const CommonOptions& common,
                                                    const std::filesystem::path& directory, bool quiet) {
  std::vector<reports::SweepReport> sweeps;
  for (const checks::FamilyInfo& family : report.families) {
    std::size_t n = 0;
    for (const checks::SweepSpec& spec : family.sweeps) {
      const bool selected = std::any_of(report.claims.begin(), report.claims.end(),
                                        [&](const reports::ClaimReport& c) { return c.info.id == spec.claim; });
      if (!selected) continue;
      reports::SweepReport entry;
      entry.family = family.id;
      entry.spec = spec;
      entry.directory = fmt::format("sweeps/{}-{}", spec.claim, ++n);
      const auto* claim = checks::builtin_registry().find(spec.claim);
      try {
        if (claim == nullptr) throw checks::ParamError("claim", "no claim named " + spec.claim);
        reports::Sweep sweep;
        sweep.claim = claim;
        sweep.version = DYNCHECK_VERSION;
        for (const std::string& text : spec.grid) sweep.axes.push_back(reports::parse_sweep_axis(*claim, text));
        CommonOptions sweep_common = common;
        sweep_common.params = spec.params;
        sweep.options = run_options(sweep_common, {claim});
        sweep.options.mutant = spec.mutant;
        reports::check_sweep(sweep, max_sweep_points);
        for (const auto& axis : sweep.axes) entry.axes.push_back(axis.name);
        std::filesystem::remove_all(directory / entry.directory);
        Progress progress(quiet);
        entry.points = reports::run_sweep(sweep, directory / entry.directory, false,
                                          [&](std::size_t done, std::size_t total) {
                                            progress.start(fmt::format("sweep {}: {}/{} points", spec.claim, done, total));
                                          });
        progress.finish();
        fmt::print("sweep {}: {} points\n", spec.claim, entry.points.size());
      } catch (const checks::ParamError& error) {
        // A sweep the family declares wrongly must not hide the claims' verdicts: reported, not fatal.
        entry.error = error.what();
        fmt::print("sweep {}: not run: {}\n", spec.claim, error.what());
      }
      sweeps.push_back(std::move(entry));
    }
  }
  return sweeps;
}

int command_report(const std::vector<std::string>& selectors, const CommonOptions& common, const std::string& out,
                   bool with_mutants, std::size_t thin_plot_series, bool with_sweeps) {
  const auto& registry = checks::builtin_registry();
  const auto claims = selectors.empty() ? registry.all() : registry.select(selectors);
  checks::RunOptions options = run_options(common, claims);
  const std::filesystem::path directory(out);
  reports::prepare_output_directory(directory);

  reports::Report report;
  report.budget = std::string(checks::to_string(options.budget.level));
  report.seed = options.seed;
  report.suite_false_failure_rate = checks::suite_false_failure_rate(claims);
  report.claims_in_suite = claims.size();
  report.version = DYNCHECK_VERSION;
  for (const auto* claim : claims) {
    const checks::FamilyInfo* family = checks::find_family(claim->info().family);
    const bool listed = std::any_of(report.families.begin(), report.families.end(),
                                    [&](const checks::FamilyInfo& f) { return f.id == claim->info().family; });
    if (family != nullptr && !listed) report.families.push_back(*family);
  }

  Progress progress(common.quiet);
  options.progress = progress.callback();
  bool all_good = true;
  for (const auto* claim : claims) {
    reports::ClaimReport entry{claim->info(), {}, {}};
    progress.start(claim->info().id);
    // The claim and its mutants from one measurement.
    std::vector<checks::Verdict> verdicts =
        checks::run_claim_variants(*claim, options, with_mutants ? checks::all_variants(*claim) : std::vector<std::string>{""});
    progress.finish();
    entry.verdict = std::move(verdicts.front());
    print_verdict(entry.verdict);
    all_good = all_good && entry.verdict.outcome == Outcome::pass;
    for (std::size_t v = 1; v < verdicts.size(); ++v) {
      entry.mutants.push_back(std::move(verdicts[v]));
      print_verdict(entry.mutants.back(), false);
      // A mutant declared to resolve only at a larger budget is reported, not required to FAIL here.
      all_good = all_good && (reports::mutant_caught(entry.mutants.back()) ||
                              !reports::mutant_must_fail(claim->info().mutants[v - 1], entry.mutants.back()));
    }
    report.claims.push_back(std::move(entry));
  }

  if (with_sweeps) report.sweeps = run_report_sweeps(report, common, directory, common.quiet);

  // Plots first and REPORT.md last, so REPORT.md never links a plot that was not written.
  // Each file is written whole or not at all; a failure throws WriteError (exit 3).
  for (const auto& claim : report.claims) {
    for (const auto& plot : claim.verdict.plots) {
      reports::draw_plot(plot, directory, reports::plot_path(claim.info.id, plot.name));
    }
  }
  // One Markdown section and one JSON file per claim (claims/<id>.md, .json): what a golden file
  // approves, so a change shows exactly which claim moved.
  if (std::error_code error; !std::filesystem::create_directories(directory / "claims", error) && error) {
    throw reports::WriteError(fmt::format("cannot create {}: {}", (directory / "claims").string(), error.message()));
  }
  for (const auto& claim : report.claims) {
    reports::write_file_atomically(directory / "claims" / (claim.info.id + ".md"), reports::to_markdown(claim));
    reports::write_file_atomically(directory / "claims" / (claim.info.id + ".json"),
                                   reports::to_json(claim, thin_plot_series).dump(2) + "\n");
  }
  reports::write_file_atomically(directory / "report.json", reports::to_json(report).dump(2) + "\n");
  reports::write_file_atomically(directory / "REPORT.md", reports::to_markdown(report));
  fmt::print("wrote {}\n", (directory / "REPORT.md").string());
  return all_good ? 0 : exit_fail;
}

// Calibration of one claim or of a whole selection (ids or families). Each claim runs over `seeds`
// fresh seeds (a pure function of the master seed, the claim and the run). The promise is checked
// twice: per claim, with its Clopper-Pearson interval at confidence 1 - 0.05 / k (Bonferroni over
// the k selected claims, so that a consistent suite is called inconsistent at most 5% of the time),
// and pooled: every run of every claim fails with probability at most its share, so the total
// number of failures is stochastically below Binomial(k * seeds, share) and its 95% interval must
// reach down to the share.
int command_calibrate(const std::vector<std::string>& selectors, const std::string& seeds_text,
                      const std::optional<std::string>& share_text, const CommonOptions& common) {
  const auto& registry = checks::builtin_registry();
  const auto claims = selectors.empty() ? registry.all() : registry.select(selectors);
  const std::size_t seeds =
      checks::parse_unsigned_decimal("seeds", "--seeds", seeds_text, 1, 1000000, "[1, 1000000]");
  checks::RunOptions options = run_options(common, claims);
  if (share_text) {
    // The claims' share for this calibration only: with the fixed per-claim share (1e-5) a rate
    // several times too high would need ~1e6 seeds to show; at 0.05, a few hundred suffice.
    const checks::ParamSpec spec{"false-failure-share", 0.05, 0, 0.5, false, true,
                                 "the claim's false-failure share for this calibration", true};
    options.false_failure_share = checks::parse_param_value(spec, *share_text);
  }
  const std::uint64_t master = options.seed;
  const double per_claim_confidence = 1.0 - 0.05 / static_cast<double>(claims.size());
  Progress progress(common.quiet);
  std::size_t total_failures = 0;
  double total_promised = 0;
  bool consistent = true;
  std::size_t refused = 0;
  for (const auto* claim : claims) {
    const std::string& id = claim->info().id;
    std::size_t counts[4] = {0, 0, 0, 0};
    // In a suite calibration a claim that refuses its point at this budget and share (a cost
    // limit, exit 2 when run alone) is reported and left out of the pooled count.
    bool claim_refused = false;
    for (std::size_t r = 0; r < seeds && !claim_refused; ++r) {
      options.seed = checks::calibration_seed(master, id, r);
      progress.start(fmt::format("{} seed {}/{}", id, r + 1, seeds));
      checks::Verdict verdict;
      try {
        verdict = checks::run_claim(*claim, options);
      } catch (const checks::ParamError& error) {
        if (claims.size() == 1) throw;
        progress.finish();
        fmt::print("{} at budget {}: refused, left out: {}\n", id, common.budget, error.what());
        claim_refused = true;
        continue;
      }
      if (verdict.input_unavailable && claims.size() > 1) {
        // Its data or optional component is missing: no run happened, so no rate to calibrate.
        progress.finish();
        fmt::print("{}: left out: {}\n", id, verdict.error);
        claim_refused = true;
        continue;
      }
      ++counts[static_cast<int>(verdict.outcome)];
      if (verdict.outcome != Outcome::pass) {
        progress.finish();
        fmt::print("seed {}: ", options.seed);
        print_verdict(verdict);
      }
    }
    progress.finish();
    if (claim_refused) {
      ++refused;
      continue;
    }
    const double promised = options.false_failure_share > 0 ? options.false_failure_share : claim->info().false_failure_share;
    const std::size_t failures = counts[1] + counts[3];
    total_failures += failures;
    total_promised += promised * static_cast<double>(seeds);
    const auto interval = checks::stats::clopper_pearson(failures, seeds, per_claim_confidence);
    const bool claim_consistent = interval.lower <= promised;
    consistent = consistent && claim_consistent;
    fmt::print("{} at budget {}: {} seeds: {} PASS, {} FAIL, {} INCONCLUSIVE, {} ERROR\n", id, common.budget, seeds,
               counts[0], counts[1], counts[2], counts[3]);
    fmt::print("observed false-failure rate {:.3g} ({:.4g}% Clopper-Pearson [{:.3g}, {:.3g}]); promised at most {:.3g}: {}\n",
               static_cast<double>(failures) / static_cast<double>(seeds), 100 * per_claim_confidence, interval.lower,
               interval.upper, promised, claim_consistent ? "consistent" : "INCONSISTENT");
    if (counts[2] != 0) {
      fmt::print("INCONCLUSIVE runs are not failures of the promise but show the budget is too small to decide.\n");
    }
  }
  if (claims.size() > 1) {
    if (refused == claims.size()) throw checks::ParamError("claims", "every selected claim refused its point");
    const std::size_t runs = (claims.size() - refused) * seeds;
    const double promised = total_promised / static_cast<double>(runs);
    const auto interval = checks::stats::clopper_pearson(total_failures, runs, 0.95);
    const bool pooled_consistent = interval.lower <= promised;
    consistent = consistent && pooled_consistent;
    fmt::print("pooled over {} claims ({} refused) x {} seeds: {} failures, rate {:.3g} (95% Clopper-Pearson [{:.3g}, {:.3g}]); "
               "promised at most {:.3g} on average: {}\n",
               claims.size() - refused, refused, seeds, total_failures, static_cast<double>(total_failures) / static_cast<double>(runs),
               interval.lower, interval.upper, promised, pooled_consistent ? "consistent" : "INCONSISTENT");
  }
  return consistent ? 0 : exit_fail;
}


#ifdef DYNCHECK_HAVE_MPI
/// The MPI session of a `dyncheck sweep` started by mpirun (main creates it), else null.
std::unique_ptr<reports::mpi::Session> mpi_session;
#endif

int command_sweep(const std::string& id, const std::vector<std::string>& grid, const CommonOptions& common,
                  const std::string& mutant, const std::optional<std::string>& out, bool resume) {
  const auto* claim = checks::builtin_registry().find(id);
  if (claim == nullptr) throw checks::ParamError("claim", "no claim named '" + id + "' (see `dyncheck list`)");
  reports::Sweep sweep;
  sweep.claim = claim;
  sweep.version = DYNCHECK_VERSION;
  for (const std::string& text : grid) sweep.axes.push_back(reports::parse_sweep_axis(*claim, text));
  sweep.options = run_options(common, {claim});
  sweep.options.mutant = mutant;
  reports::check_sweep(sweep, max_sweep_points);
  const std::filesystem::path directory = out ? std::filesystem::path(*out) : std::filesystem::path("sweeps") / id;
  bool rank_zero = true;
  Progress progress(common.quiet);
  const auto started = std::chrono::steady_clock::now();
  std::size_t first_done = 0;
  bool first = true;
  auto report_progress = [&](std::size_t done, std::size_t total) {
    if (first) {
      first_done = done;
      first = false;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::size_t run = done - first_done;
    const std::string left =
        run == 0 ? "" : fmt::format(", about {:.0f} s left", seconds / static_cast<double>(run) * static_cast<double>(total - done));
    progress.start(fmt::format("{}: {}/{} points{}", id, done, total, left));
  };
#ifdef DYNCHECK_HAVE_MPI
  if (mpi_session && mpi_session->size() > 1) {
    rank_zero = mpi_session->rank() == 0;
    // One claim thread per rank unless asked otherwise: the ranks are the parallelism.
    if (!common.threads && std::getenv("DYNCHECK_THREADS") == nullptr) sweep.options.threads = 1;
    try {
      reports::mpi::run_sweep(*mpi_session, sweep, directory, resume, report_progress);
    } catch (const checks::ParamError&) {
      throw;  // before any work, on every rank alike
    } catch (const std::exception& error) {
      fmt::print(stderr, "dyncheck: rank {}: {}; stopping every rank\n", mpi_session->rank(), error.what());
      mpi_session->abort(exit_error);
    }
  } else {
    reports::run_sweep(sweep, directory, resume, report_progress);
  }
#else
  reports::run_sweep(sweep, directory, resume, report_progress);
#endif
  progress.finish();
  if (!rank_zero) return 0;
  // Throughput of this invocation (points computed now, not those a --resume found in the journal);
  // printed only, never written to the files, which must not depend on ranks or timing.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::size_t computed = first ? 0 : sweep.size() - first_done;
  int ranks = 1;
#ifdef DYNCHECK_HAVE_MPI
  if (mpi_session) ranks = mpi_session->size();
#endif
  fmt::print("wrote {}, sweep.csv and sweep.svg ({} points; {} computed in {:.2f} s on {} rank{}: {:.3g} points/s)\n",
             (directory / "sweep.json").string(), sweep.size(), computed, seconds, ranks, ranks == 1 ? "" : "s",
             seconds > 0 ? static_cast<double>(computed) / seconds : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dyncheck: checks theorems about transformer training dynamics against simulation"};
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "list every claim with its id, source and statement");
  bool list_json = false;
  list->add_flag("--json", list_json, "machine-readable output");

  auto* run = app.add_subcommand("run", "run claims (ids or families) and print their verdicts");
  std::vector<std::string> run_selectors;
  CommonOptions run_common;
  bool run_json = false;
  std::string mutant, expect;
  run->add_option("claims", run_selectors, "claim ids or family names")->required();
  add_common(*run, run_common);
  run->add_option("--param", run_common.params, "override a parameter: name=value (repeatable)");
  run->add_flag("--json", run_json, "print verdicts as JSON");
  run->add_option("--mutant", mutant, "run a deliberately wrong variant of the claim's theory");
  run->add_option("--expect", expect, "exit 0 exactly when every verdict is this")->check(CLI::IsMember({"pass", "fail"}));
  std::string save_variants;
  run->add_option("--save-variants", save_variants,
                  "run one claim and all its mutants from one measurement; write their verdicts to DIR/<claim>.json");
  bool allow_unavailable = false;
  run->add_flag("--allow-unavailable", allow_unavailable,
                "a claim whose external input (data set, optional component) is missing is ERROR with the reason "
                "printed, but does not set the exit code (for suites that must pass without optional data)");

  auto* report = app.add_subcommand("report", "run claims and their mutants; write REPORT.md, report.json, plots");
  std::vector<std::string> report_selectors;
  CommonOptions report_common;
  std::string out = "reports/latest";
  bool no_mutants = false;
  report->add_option("claims", report_selectors, "claim ids or families (default: all)");
  add_common(*report, report_common);
  report->add_option("--param", report_common.params, "override a parameter: name=value (repeatable)");
  report->add_option("--out", out, "output directory");
  report->add_flag("--no-mutants", no_mutants, "skip the mutant runs");
  bool report_sweeps = false;
  report->add_flag("--sweeps", report_sweeps,
                   "also run each family's assumption-breaking sweeps (section \"Where the theorems stop holding\")");
  std::size_t thin_plot_series = 0;
  report->add_option("--thin-plot-series", thin_plot_series,
                     "in claims/<id>.json only: keep at most N evenly spaced points of each plot series (golden files)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{100000}));

  auto* calibrate = app.add_subcommand("calibrate", "run claims over fresh seeds; compare their failure rates with the promise");
  std::vector<std::string> calibrate_selectors;
  std::string seeds = "50";
  CommonOptions calibrate_common;
  calibrate->add_option("claims", calibrate_selectors, "claim ids or family names (default: all)");
  calibrate->add_option("--seeds", seeds, "number of seeds, a decimal integer in [1, 1000000] (default 50)");
  std::optional<std::string> calibrate_share;
  calibrate->add_option("--false-failure-share", calibrate_share,
                        "run the claim at this false-failure share, a number in (0, 0.5] (default: its own, 1e-5), "
                        "and compare the observed rate with it");
  add_common(*calibrate, calibrate_common);
  calibrate->add_option("--param", calibrate_common.params, "override a parameter: name=value (repeatable)");

  auto* sweep = app.add_subcommand("sweep", "run one claim at every point of a parameter grid (where does it stop holding?)");
  std::string sweep_id;
  std::vector<std::string> sweep_grid;
  CommonOptions sweep_common;
  std::optional<std::string> sweep_out;
  bool sweep_resume = false;
  sweep->add_option("claim", sweep_id, "claim id")->required();
  sweep->add_option("--grid", sweep_grid, "an axis: name=v1,v2,... or name=lo:hi:n[:log] (repeatable; the grid is their product)")
      ->required();
  add_common(*sweep, sweep_common);
  sweep->add_option("--param", sweep_common.params, "fix a parameter that is not an axis: name=value (repeatable)");
  std::string sweep_mutant;
  sweep->add_option("--mutant", sweep_mutant,
                    "evaluate this mutant of the claim (a named wrong theory, e.g. a theorem's statement without its "
                    "hypothesis) at every point instead of the claim");
  sweep->add_option("--out", sweep_out, "output directory (default: sweeps/<claim>)");
  sweep->add_flag("--resume", sweep_resume, "continue the sweep in --out: skip the points its points.jsonl holds");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : exit_usage;
  }

  try {
    if (*list) return command_list(list_json);
    if (*run) return command_run(run_selectors, run_common, run_json, mutant, expect, save_variants, allow_unavailable);
    if (*report) return command_report(report_selectors, report_common, out, !no_mutants, thin_plot_series, report_sweeps);
#ifdef DYNCHECK_HAVE_MPI
    if (*sweep && reports::mpi::launched_under_mpi()) mpi_session = std::make_unique<reports::mpi::Session>(argc, argv);
#endif
    if (*sweep) return command_sweep(sweep_id, sweep_grid, sweep_common, sweep_mutant, sweep_out, sweep_resume);
    if (*calibrate) return command_calibrate(calibrate_selectors, seeds, calibrate_share, calibrate_common);
  } catch (const checks::ParamError& error) {
    fmt::print(stderr, "dyncheck: {}\n", error.what());
    return exit_usage;
  } catch (const reports::WriteError& error) {
    fmt::print(stderr, "dyncheck: {}\n", error.what());
    return exit_error;
  } catch (const std::exception& error) {
    fmt::print(stderr, "dyncheck: error: {}\n", error.what());
    return exit_error;
  }
  return exit_usage;
}
