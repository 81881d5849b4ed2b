// Tests of dyncheck/sim/replicate_exchange.hpp: replicates split over the members of a process
// group give the single process's results bit for bit. The group is simulated in one process: one
// thread per member, each with its own ReplicateExchange installed, the allgather a barrier.

#include "dyncheck/sim/replicate_exchange.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/replicates.hpp"

namespace dyncheck::sim {
namespace {

ReplicateOptions options(std::size_t replicates, unsigned threads = 1) {
  ReplicateOptions o;
  o.master_seed = 20261124;
  o.stream_name = "calib.test_claim/exchanged";
  o.replicates = replicates;
  o.threads = threads;
  return o;
}

/// The shared state of a simulated group of `members` processes.
class FakeGroup {
 public:
  explicit FakeGroup(int members) : members_(members), slots_(static_cast<std::size_t>(members)), barrier_(members) {}
  int members() const { return members_; }
  std::vector<std::string> allgather(int rank, const std::string& mine) {
    slots_[static_cast<std::size_t>(rank)] = mine;
    barrier_.arrive_and_wait();
    std::vector<std::string> all = slots_;
    barrier_.arrive_and_wait();
    return all;
  }

 private:
  int members_;
  std::vector<std::string> slots_;
  std::barrier<> barrier_;
};

class FakeMember final : public ReplicateExchange {
 public:
  FakeMember(FakeGroup& group, int rank) : group_(group), rank_(rank) {}
  int size() const override { return group_.members(); }
  int rank() const override { return rank_; }
  std::vector<std::string> allgather(const std::string& mine) override {
    ++calls;
    bytes += mine.size();
    return group_.allgather(rank_, mine);
  }
  int calls = 0;
  std::size_t bytes = 0;

 private:
  FakeGroup& group_;
  int rank_;
};

/// Runs `body(member)` on `members` threads, each with its member's exchange installed.
void in_group(int members, const std::function<void(FakeMember&)>& body) {
  FakeGroup group(members);
  std::vector<FakeMember> member;
  member.reserve(static_cast<std::size_t>(members));
  for (int r = 0; r < members; ++r) member.emplace_back(group, r);
  std::vector<std::jthread> threads;
  for (int r = 0; r < members; ++r) {
    threads.emplace_back([&, r] {
      const ScopedReplicateExchange installed(&member[static_cast<std::size_t>(r)]);
      body(member[static_cast<std::size_t>(r)]);
    });
  }
}

Eigen::MatrixXd replicate_matrix(std::size_t k, Rng& rng) {
  Eigen::MatrixXd m(2 + static_cast<Eigen::Index>(k % 3), 3);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = standard_normal(rng) + static_cast<double>(k);
  return m;
}

TEST(SimReplicateExchange, SplitMatricesEqualTheSingleProcessBitForBit) {
  const auto single = run_replicates(options(23), replicate_matrix);
  for (int members : {2, 3, 5, 30}) {
    std::vector<std::vector<Eigen::MatrixXd>> got(static_cast<std::size_t>(members));
    std::vector<int> calls(static_cast<std::size_t>(members));
    in_group(members, [&](FakeMember& me) {
      got[static_cast<std::size_t>(me.rank())] = run_replicates(options(23, 2), replicate_matrix);
      calls[static_cast<std::size_t>(me.rank())] = me.calls;
    });
    for (int r = 0; r < members; ++r) {
      SCOPED_TRACE(testing::Message() << members << " members, rank " << r);
      EXPECT_EQ(calls[static_cast<std::size_t>(r)], 1);
      ASSERT_EQ(got[static_cast<std::size_t>(r)].size(), single.size());
      for (std::size_t k = 0; k < single.size(); ++k) {
        ASSERT_EQ(got[static_cast<std::size_t>(r)][k].rows(), single[k].rows());
        for (Eigen::Index i = 0; i < single[k].size(); ++i) {
          EXPECT_EQ(got[static_cast<std::size_t>(r)][k].data()[i], single[k].data()[i]);
        }
      }
    }
  }
}

TEST(SimReplicateExchange, EachMemberComputesOnlyItsShare) {
  std::array<std::atomic<int>, 3> computed{};
  in_group(3, [&](FakeMember& me) {
    (void)run_replicates(options(10), [&](std::size_t k, Rng&) {
      ++computed[static_cast<std::size_t>(me.rank())];
      return static_cast<double>(k);
    });
  });
  EXPECT_EQ(computed[0].load(), 4);  // k = 0, 3, 6, 9
  EXPECT_EQ(computed[1].load(), 3);
  EXPECT_EQ(computed[2].load(), 3);
}

struct Outcome {
  double value = 0;
  std::vector<long long> counts;
  std::pair<int, Eigen::VectorXd> tagged;
  auto exchange_fields() { return std::tie(value, counts, tagged); }
};

TEST(SimReplicateExchange, StructsWithExchangeFieldsAreSplit) {
  auto f = [](std::size_t k, Rng& rng) {
    Outcome o;
    o.value = standard_normal(rng);
    o.counts.assign(k % 4, static_cast<long long>(k));
    o.tagged = {static_cast<int>(k), Eigen::VectorXd::Constant(static_cast<Eigen::Index>(k % 2 + 1), o.value)};
    return o;
  };
  static_assert(ReplicateExchangeable<Outcome>);
  const auto single = run_replicates(options(9), f);
  std::vector<std::vector<Outcome>> got(2);
  std::vector<int> calls(2);
  in_group(2, [&](FakeMember& me) {
    got[static_cast<std::size_t>(me.rank())] = run_replicates(options(9), f);
    calls[static_cast<std::size_t>(me.rank())] = me.calls;
  });
  for (const auto& g : got) {
    ASSERT_EQ(g.size(), single.size());
    for (std::size_t k = 0; k < single.size(); ++k) {
      EXPECT_EQ(g[k].value, single[k].value);
      EXPECT_EQ(g[k].counts, single[k].counts);
      EXPECT_EQ(g[k].tagged.first, single[k].tagged.first);
      EXPECT_EQ(g[k].tagged.second, single[k].tagged.second);
    }
  }
  EXPECT_EQ(calls[0], 1);
}

struct Opaque {
  double value = 0;  // no exchange_fields: computed by every member
};

TEST(SimReplicateExchange, ResultsWithoutACodecAreComputedByEveryMember) {
  static_assert(!ReplicateExchangeable<Opaque>);
  std::atomic<int> computed{0};
  std::vector<int> calls(2);
  in_group(2, [&](FakeMember& me) {
    const auto r = run_replicates(options(6), [&](std::size_t k, Rng&) {
      ++computed;
      return Opaque{static_cast<double>(k)};
    });
    EXPECT_EQ(r[5].value, 5.0);
    calls[static_cast<std::size_t>(me.rank())] = me.calls;
    // Counted and named, so that the sweep can say which calls were not split.
    EXPECT_EQ(me.unsplit_calls(), 1U);
    ASSERT_EQ(me.unsplit_types().size(), 1U);
    EXPECT_NE(me.unsplit_types()[0].find("Opaque"), std::string::npos) << me.unsplit_types()[0];
  });
  EXPECT_EQ(computed.load(), 12);
  EXPECT_EQ(calls[0], 0);
}

TEST(SimReplicateExchange, NestedCallsAreNotSplit) {
  std::vector<int> calls(2);
  std::vector<std::vector<double>> got(2);
  auto inner = [](std::size_t k, Rng& rng) { return standard_normal(rng) + static_cast<double>(k); };
  auto outer = [&](std::size_t, Rng&) {
    const auto values = run_replicates(options(4), inner);  // depth 1 on this thread: local
    return values[0] + values[3];
  };
  const auto single = run_replicates(options(5), outer);
  in_group(2, [&](FakeMember& me) {
    got[static_cast<std::size_t>(me.rank())] = run_replicates(options(5), outer);
    calls[static_cast<std::size_t>(me.rank())] = me.calls;
  });
  EXPECT_EQ(got[0], single);
  EXPECT_EQ(got[1], single);
  EXPECT_EQ(calls[0], 1);  // the outer call only
  EXPECT_EQ(calls[1], 1);
}

TEST(SimReplicateExchange, AFailureAnywhereRethrowsTheSingleProcessExceptionEverywhere) {
  auto f = [](std::size_t k, Rng&) -> double {
    if (k == 7 || k == 4) throw std::domain_error("replicate " + std::to_string(k));
    return static_cast<double>(k);
  };
  std::vector<std::string> messages(3);
  in_group(3, [&](FakeMember& me) {
    try {
      (void)run_replicates(options(9), f);
    } catch (const std::domain_error& e) {
      messages[static_cast<std::size_t>(me.rank())] = e.what();
    }
  });
  for (const auto& message : messages) EXPECT_EQ(message, "replicate 4");  // index 4 is rank 1's share
}

TEST(SimReplicateExchange, FewerReplicatesThanMembers) {
  std::vector<std::vector<double>> got(4);
  in_group(4, [&](FakeMember& me) {
    got[static_cast<std::size_t>(me.rank())] =
        run_replicates(options(2), [](std::size_t k, Rng&) { return static_cast<double>(k) + 0.5; });
  });
  for (const auto& g : got) EXPECT_EQ(g, (std::vector<double>{0.5, 1.5}));
}

TEST(SimReplicateExchange, TruncatedMessagesAreRejected) {
  std::string bytes;
  ReplicateCodec<Eigen::MatrixXd>::write(bytes, Eigen::MatrixXd::Ones(2, 2));
  bytes.pop_back();
  const char* in = bytes.data();
  Eigen::MatrixXd m;
  EXPECT_THROW(ReplicateCodec<Eigen::MatrixXd>::read(in, bytes.data() + bytes.size(), m), std::runtime_error);
}

TEST(SimReplicateExchange, NoExchangeOutsideTheScope) {
  FakeGroup group(1);
  FakeMember member(group, 0);
  {
    const ScopedReplicateExchange installed(&member);
    EXPECT_EQ(current_replicate_exchange(), &member);
  }
  EXPECT_EQ(current_replicate_exchange(), nullptr);
}

}  // namespace
}  // namespace dyncheck::sim
