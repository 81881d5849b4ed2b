#pragma once
// The one-layer, one-head attention model of specs/topic.md §3, its MLM losses and their gradients,
// and the SGD / Adam steps on minibatches of documents.
//
//   f(X)_n = W^dec W^V (E X) softmax_keys((W^K E X)^T (W^Q E x_n) / sqrt(d)) + b^dec
//
// No residual, LayerNorm or FFN. The softmax of query n runs over the key set: (C) the positions
// not selected by the mask (the authors' code), or (P) every position (standard BERT). Outputs are
// the V word logits; the loss is taken at selected positions with the original word as target:
// squared ||o_n - e_{x_n}||^2 (summed over the V outputs) or cross-entropy -log softmax(o_n)_{x_n}.
//
// Cost. The attention logit of key token c for query token b is B(c, b) with
// B = (W^K E)^T (W^Q E) / sqrt(d), so a query's attention depends only on its token and on the key
// token counts of its document: a document costs O(N) to count, then O(#distinct key tokens x V)
// per distinct selected query token; no N x V one-hot matrix is formed. Per step the effective maps
// M = W^dec W^V E (V x n_in) and B (n_in x n_in) are formed once (skipped on the fast paths: a
// one-hot frozen E with an identity frozen decoder makes M a block of W^V; frozen uniform attention
// skips B), and the gradients of M and B are pulled back to the parameters once per step.
// Arithmetic: double; exp and log through dyncheck::portable.

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "dyncheck/sim/topic/documents.hpp"

namespace dyncheck::sim::topic {

enum class KeySet { unselected /* (C) */, all /* (P) */ };
enum class Loss { squared, cross_entropy };

/// Which parts exist as free parameters, and the fast paths for frozen ones.
struct Structure {
  int V = 100;           ///< word outputs
  int num_inputs = 101;  ///< input ids (V + 1, or V + 4: num_input_ids)
  int d = 101;           ///< hidden size (= num_inputs when the embedding is one-hot)
  KeySet keys = KeySet::unselected;
  Loss loss = Loss::squared;
  bool one_hot_embedding = true;   ///< E = I (d = num_inputs), frozen
  bool uniform_attention = false;  ///< W^K = W^Q = 0, frozen: uniform attention over the keys
  bool identity_decoder = true;    ///< W^dec = [I_V 0], b^dec = 0, frozen (needs d >= V)
  bool train_embedding = false;    ///< E (ignored when one_hot_embedding)
  bool train_key = true;           ///< W^K (ignored when uniform_attention)
  bool train_query = true;         ///< W^Q (ignored when uniform_attention)
  bool train_value = true;         ///< W^V
  bool train_decoder = false;      ///< W^dec and b^dec (ignored when identity_decoder)
  double ridge_value = 0;          ///< + ridge_value * ||W^V||_F^2 in the objective

  /// Throws std::invalid_argument naming the inconsistency.
  void validate() const;
};

struct Parameters {
  Eigen::MatrixXd E;     ///< d x num_inputs
  Eigen::MatrixXd WK;    ///< d x d
  Eigen::MatrixXd WQ;    ///< d x d
  Eigen::MatrixXd WV;    ///< d x d
  Eigen::MatrixXd Wdec;  ///< V x d
  Eigen::VectorXd bdec;  ///< V

  /// E = I (or 0 if not one-hot... see below), W^K = W^Q = W^V = 0, W^dec = [I 0], b^dec = 0.
  static Parameters zeros(const Structure& s);
  Parameters& operator+=(const Parameters& other);
  Parameters& operator*=(double factor);
  /// Sum of squares of every entry (for gradient norms of the trainable parts, zero the others first).
  double squared_norm() const;
};

/// How a minibatch's summed token losses are normalised.
struct Normalisation {
  /// > 0: divide by this constant times the number of documents (e.g. the expected number of
  /// selected tokens per document; the minibatch gradient is then unbiased for the population
  /// objective of specs/topic.md §4). 0: divide by the batch's number of selected tokens (torch's mean).
  double tokens_per_document = 0;
};

/// Loss of a batch (normalised, with the ridge term) and its gradient (zero for frozen parts).
struct Evaluation {
  double loss = 0;
  double token_loss_sum = 0;  ///< sum over selected tokens of the per-token loss (no ridge, not normalised)
  long long tokens = 0;       ///< selected tokens in the batch
  Parameters gradient;
};

/// Scratch space of evaluate(): the per-step matrices (effective maps, their gradients, logits) and the
/// per-document counters. A training loop keeps one per run (with its Evaluation) so that a step allocates
/// nothing once the buffers have their sizes (fresh K x K matrices every step cost ~20% of a run in system
/// time: page faults and heap trimming). The contents between calls mean nothing.
struct Workspace {
  struct Group {  ///< one selected query group of a document: its input token and the targets of its positions
    int token = 0;
    std::vector<int> targets;
  };
  Eigen::MatrixXd M, B, dM, dB, dM_Et, KE, QE, dKE, dQE;
  Eigen::VectorXd dbdec, g_sum, o, g;
  std::vector<std::uint8_t> known;
  std::vector<int> count, group_of, keys;
  std::vector<Group> groups;
  std::vector<double> a, dA;
};

/// Evaluates the model on `documents`; computes the gradient when `with_gradient`.
Evaluation evaluate(const Structure& s, const Parameters& p, const std::vector<MaskedDocument>& documents,
                    Normalisation normalisation, bool with_gradient);

/// The same, into `out` (its gradient's storage reused), with the scratch space `workspace`: bit-identical to
/// evaluate(), without per-call allocations once `workspace` and `out` have been used at these sizes.
void evaluate(const Structure& s, const Parameters& p, const std::vector<MaskedDocument>& documents,
              Normalisation normalisation, bool with_gradient, Workspace& workspace, Evaluation& out);

/// The attention a word query of token b gives to key tokens, for inspection: B(c, b) (0 with
/// uniform attention). n_in x n_in, column b.
Eigen::MatrixXd attention_logits(const Structure& s, const Parameters& p);

/// Plain SGD: theta <- theta - lr * grad on the trainable parts.
struct Sgd {
  double lr = 0.1;
  void step(const Structure& s, Parameters& p, const Parameters& gradient);
};

/// Adam (AdamW with weight decay 0, as the authors' code): bias-corrected moments, per entry.
struct Adam {
  double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  long long t = 0;
  Parameters m, v;
  void step(const Structure& s, Parameters& p, const Parameters& gradient);
};

/// Zeroes the gradient parts that `s` does not train.
void mask_frozen(const Structure& s, Parameters& gradient);

}  // namespace dyncheck::sim::topic
