// _dyncheck: the C++ library behind the Python package `dyncheck` (python/dyncheck/__init__.py).
//
// Everything crosses as JSON text produced by the same functions as the CLI's --json
// (reports::to_json), so a verdict read in Python is the CLI's, number for number: nlohmann-json
// writes each double in its shortest round-trip form and Python's json module reads it back to the
// same double. Inputs are checked by reports::run_options, the CLI's own checks; a
// checks::ParamError becomes ValueError with the CLI's message.
//
// A run executes on a C++ thread while the calling thread waits with the GIL released, waking every
// 50 ms to let Python handle signals: Ctrl-C raises KeyboardInterrupt at once, and the run is asked
// to stop (checks::Cancelled, thrown from its next progress callback).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyncheck/checks/cancelled.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/checks/registry.hpp"
#include "dyncheck/checks/runner.hpp"
#include "dyncheck/reports/json.hpp"
#include "dyncheck/reports/run_options.hpp"
#include "dyncheck/reports/sweep.hpp"

namespace py = pybind11;
using namespace dyncheck;

namespace {

/// The state a background run shares with the waiting Python thread (which may leave early on
/// KeyboardInterrupt, so the run owns a reference too).
struct Job {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::atomic<bool> cancel{false};
  std::string result;
  std::exception_ptr error;
  std::atomic<std::size_t> progress_done{0}, progress_total{0};
};

/// Runs `work` on a thread; waits with the GIL released, checking for signals every 50 ms.
/// `work` receives a progress callback that throws checks::Cancelled once cancellation is asked.
template <class Work>
std::string run_in_background(Work work, const py::object& on_progress) {
  auto job = std::make_shared<Job>();
  std::thread([job, work = std::move(work)]() mutable {
    auto progress = [job](std::string_view, std::size_t done, std::size_t total) {
      job->progress_done = done;
      job->progress_total = total;
      if (job->cancel) throw checks::Cancelled{};
    };
    std::string result;
    std::exception_ptr error;
    try {
      result = work(progress);
    } catch (const checks::Cancelled&) {
      error = std::make_exception_ptr(std::runtime_error("cancelled"));
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(job->mutex);
    job->result = std::move(result);
    job->error = error;
    job->done = true;
    job->finished.notify_all();
  }).detach();

  std::size_t shown = static_cast<std::size_t>(-1);
  while (true) {
    bool done = false;
    {
      py::gil_scoped_release release;
      std::unique_lock lock(job->mutex);
      done = job->finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return job->done; });
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {
      job->cancel = true;  // the run stops at its next progress report; Python goes on now
      throw py::error_already_set();
    }
    if (!on_progress.is_none() && job->progress_done != shown) {
      shown = job->progress_done;
      on_progress(shown, static_cast<std::size_t>(job->progress_total));
    }
  }
  if (job->error) std::rethrow_exception(job->error);
  return job->result;
}

reports::CommonOptions common_options(const std::string& budget, const std::optional<std::string>& seed,
                                      const std::optional<std::string>& threads,
                                      const std::vector<std::string>& params) {
  reports::CommonOptions common;
  common.budget = budget;
  common.seed = seed;
  common.threads = threads;
  common.params = params;
  common.quiet = true;
  if (budget != "smoke" && budget != "ci" && budget != "full") {
    throw checks::ParamError("budget", "budget must be one of smoke, ci, full; got '" + budget + "'");
  }
  return common;
}

std::string claims_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto* claim : checks::builtin_registry().all()) list.push_back(reports::to_json(claim->info()));
  return list.dump();
}

std::string families_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto* claim : checks::builtin_registry().all()) {
    const std::string& family = claim->info().family;
    if (std::find(list.begin(), list.end(), family) == list.end()) list.push_back(family);
  }
  return list.dump();
}

/// The verdicts of `selectors` as the CLI's `run --json` prints them (one array).
std::string run_json(const std::vector<std::string>& selectors, const std::vector<std::string>& params,
                     const std::string& budget, const std::optional<std::string>& seed,
                     const std::optional<std::string>& threads, const std::optional<std::string>& mutant,
                     const py::object& on_progress) {
  const auto& registry = checks::builtin_registry();
  const auto claims = registry.select(selectors);
  checks::RunOptions options = reports::run_options(common_options(budget, seed, threads, params), claims);
  if (mutant) {
    if (claims.size() != 1) throw checks::ParamError("mutant", "mutant= needs exactly one claim id");
    options.mutant = *mutant;
  }
  return run_in_background(
      [claims, options](const auto& progress) mutable {
        options.progress = progress;
        nlohmann::json verdicts = nlohmann::json::array();
        for (const auto* claim : claims) verdicts.push_back(reports::to_json(checks::run_claim(*claim, options)));
        return verdicts.dump();
      },
      on_progress);
}

/// Runs a sweep into `out` (see reports/sweep.hpp) and returns sweep.json's text.
std::string sweep_json(const std::string& id, const std::vector<std::string>& grid, const std::vector<std::string>& params,
                       const std::string& budget, const std::optional<std::string>& seed,
                       const std::optional<std::string>& threads, const std::string& out, bool resume,
                       const std::string& version, const py::object& on_progress) {
  const auto* claim = checks::builtin_registry().find(id);
  if (claim == nullptr) throw checks::ParamError("claim", "no claim named '" + id + "' (see dyncheck.claims())");
  auto sweep = std::make_shared<reports::Sweep>();
  sweep->claim = claim;
  sweep->version = version;
  for (const std::string& text : grid) sweep->axes.push_back(reports::parse_sweep_axis(*claim, text));
  sweep->options = reports::run_options(common_options(budget, seed, threads, params), {claim});
  reports::check_sweep(*sweep, 100000);
  return run_in_background(
      [sweep, out, resume](const auto& progress) {
        reports::run_sweep(*sweep, out, resume, [&progress](std::size_t done, std::size_t total) {
          progress("sweep", done, total);
        });
        std::ifstream in(std::filesystem::path(out) / "sweep.json");
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      },
      on_progress);
}

}  // namespace

void bind_theory(py::module_& m);  // theory_families.cpp, generated from DYNCHECK_FAMILIES

PYBIND11_MODULE(_dyncheck, m) {
  m.doc() = "dyncheck's C++ core; use the package `dyncheck`, not this module";
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const checks::ParamError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("claims_json", &claims_json);
  m.def("families_json", &families_json);
  m.def("run_json", &run_json, py::arg("selectors"), py::arg("params"), py::arg("budget"), py::arg("seed"),
        py::arg("threads"), py::arg("mutant"), py::arg("on_progress"));
  m.def("sweep_json", &sweep_json, py::arg("claim"), py::arg("grid"), py::arg("params"), py::arg("budget"),
        py::arg("seed"), py::arg("threads"), py::arg("out"), py::arg("resume"), py::arg("version"),
        py::arg("on_progress"));
  m.attr("version") = DYNCHECK_VERSION;
  bind_theory(m);
}
