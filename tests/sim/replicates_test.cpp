// Tests of dyncheck/sim/replicates.hpp.

#include "dyncheck/sim/replicates.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyncheck/sim/random/standard_normal.hpp"

namespace dyncheck::sim {
namespace {

ReplicateOptions options(std::size_t replicates, unsigned threads) {
  ReplicateOptions o;
  o.master_seed = 20261122;
  o.stream_name = "calib.test_claim/experiment";
  o.replicates = replicates;
  o.threads = threads;
  return o;
}

// A replicate with a data-dependent amount of work, so threads finish out of order.
double replicate_statistic(std::size_t k, Rng& rng) {
  const int steps = 100 + static_cast<int>(rng() % 2000);
  double sum = static_cast<double>(k);
  for (int i = 0; i < steps; ++i) sum += standard_normal(rng);
  return sum;
}

TEST(SimRunReplicates, ResultsAreIdenticalForOneTwoAndSevenThreads) {
  const auto one = run_replicates(options(50, 1), replicate_statistic);
  const auto two = run_replicates(options(50, 2), replicate_statistic);
  const auto seven = run_replicates(options(50, 7), replicate_statistic);
  ASSERT_EQ(one.size(), 50U);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, seven);
}

TEST(SimRunReplicates, ReplicateKGetsDeriveStreamK) {
  const ReplicateOptions o = options(10, 3);
  const auto first_words =
      run_replicates(o, [](std::size_t, Rng& rng) -> std::uint64_t { return rng(); });
  for (std::size_t k = 0; k < first_words.size(); ++k) {
    Rng expected = derive_stream(o.master_seed, o.stream_name, k);
    EXPECT_EQ(first_words[k], expected()) << "replicate " << k;
  }
}

TEST(SimRunReplicates, ZeroReplicatesGiveAnEmptyResult) {
  int calls = 0;
  const auto result = run_replicates(options(0, 4), [&](std::size_t, Rng&) { return ++calls; });
  EXPECT_TRUE(result.empty());
  EXPECT_EQ(calls, 0);
}

TEST(SimRunReplicates, ResultsNeedNotBeDefaultConstructible) {
  struct NoDefault {
    explicit NoDefault(std::size_t v) : value(v) {}
    std::size_t value;
  };
  const auto result =
      run_replicates(options(20, 3), [](std::size_t k, Rng&) { return NoDefault(k * k); });
  for (std::size_t k = 0; k < result.size(); ++k) EXPECT_EQ(result[k].value, k * k);
}

TEST(SimRunReplicates, RethrowsTheExceptionOfTheLowestFailingIndex) {
  for (const unsigned threads : {1U, 2U, 7U}) {
    try {
      run_replicates(options(40, threads), [](std::size_t k, Rng& rng) {
        replicate_statistic(k, rng);
        if (k == 13 || k == 29 || k == 35) throw std::runtime_error("failed " + std::to_string(k));
        return k;
      });
      FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "failed 13") << threads << " threads";
    }
  }
}

TEST(SimRunReplicates, ProgressIsCalledOncePerReplicateAndNeverConcurrently) {
  ReplicateOptions o = options(64, 4);
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::size_t> seen;
  o.progress = [&](std::size_t done, std::size_t total) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    EXPECT_EQ(total, 64U);
    seen.push_back(done);
    inside.fetch_sub(1);
  };
  run_replicates(o, replicate_statistic);
  EXPECT_FALSE(overlapped.load());
  ASSERT_EQ(seen.size(), 64U);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i + 1);
}

TEST(SimRunReplicates, ForEachReplicateRunsVoidFunctionsWithTheSameStreams) {
  const ReplicateOptions o = options(30, 4);
  std::vector<double> filled(30);
  for_each_replicate(o, [&](std::size_t k, Rng& rng) { filled[k] = replicate_statistic(k, rng); });
  EXPECT_EQ(filled, run_replicates(o, replicate_statistic));
  EXPECT_THROW(for_each_replicate(o,
                                  [](std::size_t k, Rng&) {
                                    if (k == 3) throw std::logic_error("three");
                                  }),
               std::logic_error);
}

TEST(SimRunReplicates, DefaultThreadCountReadsTheEnvironment) {
  const char* saved = std::getenv("DYNCHECK_THREADS");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("DYNCHECK_THREADS", "3", 1);
  EXPECT_EQ(default_thread_count(), 3U);
  for (const char* invalid : {"0", "-2", "4x", "", "99999"}) {
    ::setenv("DYNCHECK_THREADS", invalid, 1);
    EXPECT_GE(default_thread_count(), 1U) << invalid;
    ::unsetenv("DYNCHECK_THREADS");
    const unsigned hardware = default_thread_count();
    ::setenv("DYNCHECK_THREADS", invalid, 1);
    EXPECT_EQ(default_thread_count(), hardware) << invalid;
  }
  if (saved != nullptr) {
    ::setenv("DYNCHECK_THREADS", saved_value.c_str(), 1);
  } else {
    ::unsetenv("DYNCHECK_THREADS");
  }
}

}  // namespace
}  // namespace dyncheck::sim
