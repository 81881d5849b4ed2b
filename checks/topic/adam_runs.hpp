#pragma once
// The training experiment shared by the topic claims that train the attention jointly from a small initialisation
// (topic.two_stage_value_before_attention: W^K, W^Q, W^V, squared loss under Adam and CE under plain SGD;
// topic.everything_free_block_pattern: every parameter, CE, Adam), and the block contrast both read off a learned matrix.

#include <Eigen/Core>

#include <initializer_list>
#include <vector>

#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/replicates.hpp"
#include "dyncheck/sim/topic/documents.hpp"
#include "dyncheck/sim/topic/model.hpp"

namespace dyncheck::checks::topic {

/// Same-topic (off-diagonal) mean minus other-topic mean of the first V x V block of A (with v = 1 there is no
/// same-topic pair: the diagonal mean stands in).
inline double block_contrast(const Eigen::MatrixXd& A, int T, int v) {
  const int V = T * v;
  double same = 0, diff = 0;
  long long ns = 0, nd = 0;
  for (int i = 0; i < V; ++i) {
    for (int j = 0; j < V; ++j) {
      if (i == j) continue;
      if (i / v == j / v) {
        same += A(i, j);
        ++ns;
      } else {
        diff += A(i, j);
        ++nd;
      }
    }
  }
  const double same_mean = ns > 0 ? same / static_cast<double>(ns) : A.topLeftCorner(V, V).diagonal().mean();
  return same_mean - diff / static_cast<double>(nd);
}

/// The one-layer model over the V words and [MASK] (num_inputs = d = V + 1), softmax attention over the unselected
/// positions (key set (C)), W^K, W^Q, W^V trained; the claim adds what else it trains.
inline sim::topic::Structure attention_structure(int V, sim::topic::Loss loss) {
  sim::topic::Structure s;
  s.V = V;
  s.num_inputs = V + 1;
  s.d = V + 1;
  s.keys = sim::topic::KeySet::unselected;
  s.loss = loss;
  s.uniform_attention = false;
  s.train_key = s.train_query = s.train_value = true;
  return s;
}

enum class Optimizer { adam, sgd };

struct AdamRunSetup {
  sim::topic::DocumentLaw law;
  sim::topic::MaskingLaw masking;
  sim::topic::Structure structure;
  Optimizer optimizer = Optimizer::adam;  ///< sgd: plain SGD (sim::topic::Sgd) with the same lr field
  double lr = 1e-3;
  double init = 0.01;  ///< the initialised matrices are init x N(0, 1) entrywise
  long long batch = 40, steps = 300;
};

/// One Adam (or plain SGD: setup.optimizer) run on its stream `rng`: the matrices `initialised` (in this order; the rest as Parameters::zeros) drawn
/// init x N(0, 1), then K steps, each on a fresh batch of B sampled and masked documents. `before_step(k, params,
/// docs)` sees each batch before its step, `after_step(k, params)` the iterate after it. Returns the final parameters.
template <class Before, class After>
sim::topic::Parameters run_adam(const AdamRunSetup& setup, std::initializer_list<Eigen::MatrixXd sim::topic::Parameters::*> initialised,
                                sim::Rng& rng, Before before_step, After after_step) {
  namespace st = sim::topic;
  const st::Structure& s = setup.structure;
  st::Parameters params = st::Parameters::zeros(s);
  for (Eigen::MatrixXd st::Parameters::*member : initialised) {
    Eigen::MatrixXd& W = params.*member;
    Eigen::VectorXd z(W.size());
    sim::fill_standard_normal(rng, z);
    W = Eigen::Map<Eigen::MatrixXd>(z.data(), W.rows(), W.cols()) * setup.init;
  }
  std::vector<st::MaskedDocument> docs(static_cast<std::size_t>(setup.batch));
  std::vector<int> words;
  std::vector<double> theta;
  st::Adam adam;
  adam.lr = setup.lr;
  st::Sgd sgd;
  sgd.lr = setup.lr;
  st::Workspace workspace;  // reused every step (no per-step allocation)
  st::Evaluation e;
  for (long long k = 1; k <= setup.steps; ++k) {
    for (auto& d : docs) {
      st::sample_document(setup.law, rng, words, theta);
      st::mask_document(setup.masking, s.V, words, rng, d);
    }
    before_step(k, static_cast<const st::Parameters&>(params), static_cast<const std::vector<st::MaskedDocument>&>(docs));
    st::evaluate(s, params, docs, {}, true, workspace, e);
    if (setup.optimizer == Optimizer::sgd) {
      sgd.step(s, params, e.gradient);
    } else {
      adam.step(s, params, e.gradient);
    }
    after_step(k, static_cast<const st::Parameters&>(params));
  }
  return params;
}

}  // namespace dyncheck::checks::topic
