#pragma once
// The model of JoMA's Table 1 (the authors' ssl/real-dataset/decoder_only_hier.py, classes SABlock and
// Model, commit 2471901 of facebookresearch/luckmatters; specs/joma.md §5), trained with libtorch in the
// same optional plugin as the real-text language model (transformer_lm.hpp says why it is a plugin):
//
//   h_0 = Embedding(M, d)[x]                              (N(0, 1) init; no positional encoding)
//   per block (n layers, 1 head, post-LN):
//     a   = softmax(Q K^T / sqrt(d) + causal mask) V,  Q, K, V = W_q h, W_k h, W_v h  (no bias)
//     u   = LN(a + h)
//     z   = relu(W_1 u + b_1)                            (the FFN hidden layer, width d_hidden)
//     h'  = LN2(W_2 z + b_2 + u)
//   logits = W h_n[last position] + b;  loss = cross-entropy with the class label (mean over the batch);
//   Adam(lr, weight_decay as L2 in the gradient: torch.optim.Adam's weight_decay), no clipping, no dropout.
// Linear layers use PyTorch's default init U(+-1/sqrt(fan_in)) for weight and bias; LayerNorm 1, 0, eps 1e-5.
//
// One exact rewriting: the generator gives every sample of class c the same sequence, so the mean
// cross-entropy of a batch of B labels is sum_c (n_c / B) CE_c, with n_c the count of class c in the batch.
// The plugin forwards each class's sequence once and weights its loss by n_c / B: the same loss and
// gradient as forwarding the B samples (up to float32 summation order), at C/B of the cost (C classes).
//
// Measured at each checkpoint step (eval mode; the model has no dropout, so the same function): for each
// class sequence, the loss and the prediction, and per layer the FFN hidden z max-pooled over the L
// positions (padding included: the script's hiddens[l].max(dim=1)).

#include <cstdint>
#include <string>
#include <vector>

namespace dyncheck::sim::text {

struct HierModelConfig {
  std::int64_t vocabulary = 100;  ///< M (token ids in [0, M))
  std::int64_t length = 30;       ///< L
  std::int64_t classes = 20;      ///< output classes
  std::int64_t layers = 3;
  std::int64_t d = 1024;
  std::int64_t d_hidden = 4096;  ///< the script's default hidden_multi_type "d": 4 d
  double learning_rate = 1e-4;
  double weight_decay = 1e-4;
  std::int64_t steps = 10000;
  std::int64_t batch = 128;
  std::vector<std::int64_t> checkpoints{0};  ///< steps (0 = at initialisation) at which to measure, increasing
  std::uint64_t seed = 1;                    ///< the run's own CPU generator (initialisation)
};

struct HierModelData {
  std::vector<std::int64_t> class_tokens;  ///< [classes x L]: the sequence of each class
  std::vector<std::int64_t> labels;        ///< [steps x batch]: the training labels, batch after batch
};

struct HierCheckpoint {
  std::int64_t step = 0;
  double train_loss = 0;   ///< mean batch loss over the steps since the previous checkpoint (NaN at step 0)
  double class_loss = 0;   ///< cross-entropy averaged over the class sequences (each class once)
  double accuracy = 0;     ///< share of classes whose sequence is classified right
  /// pooled[l]: [classes x d_hidden], layer l's FFN hidden max-pooled over positions.
  std::vector<std::vector<float>> pooled;
};

struct HierRun {
  std::vector<HierCheckpoint> checkpoints;
  double train_seconds = 0;      ///< wall time of the training steps
  double train_cpu_seconds = 0;  ///< CPU time of the run's thread over the same steps
  std::string backend;
};

/// Several runs, `parallel` at a time on their own threads, one intra-op thread each (so a run's numbers do
/// not depend on `parallel`). Throws std::runtime_error when the plugin is unavailable (the message names the
/// install command, as torch_unavailable() does) or a loss is not finite, std::invalid_argument on a bad
/// config or data (sizes, a token or label out of range).
std::vector<HierRun> train_hier_models(const std::vector<HierModelData>& data,
                                       const std::vector<HierModelConfig>& configs, unsigned parallel);

}  // namespace dyncheck::sim::text
