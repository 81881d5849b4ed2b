#pragma once
// A causal transformer language model trained with libtorch (PyTorch's C++ API), the model of JoMA's
// `decoder_wiki.py` with `use_baseline=true` (specs/joma.md §6): the PyTorch-tutorial TransformerEncoder
// (embedding x sqrt(emsize), sinusoidal positional encoding, dropout, post-norm encoder layers with
// d_hid = emsize and ReLU, a linear decoder), a causal mask, Adam with a constant learning rate,
// gradient-norm clipping, bptt-long windows of `batch` parallel streams.
//
// libtorch is an optional component: it lives in a separate plugin (libdyncheck_torch_lm.so) that this
// interface loads on first use, so nothing else in dyncheck includes a torch header or pays torch's
// start-up (287 shared libraries, ~0.35 s a process). Without the plugin, `torch_unavailable()` names
// the missing component and the command that installs it, and `train_transformer_lm` throws that message.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dyncheck::sim::text {

struct LmConfig {
  std::int64_t vocabulary = 0;  ///< token ids are in [0, vocabulary)
  std::int64_t emsize = 200;    ///< embedding size = d_hid (the feed-forward width)
  std::int64_t layers = 1;
  std::int64_t heads = 1;
  double dropout = 0.2;
  double learning_rate = 1e-4;  ///< Adam, constant
  double clip = 0.5;            ///< gradient-norm clipping
  std::int64_t bptt = 35;       ///< window (sequence) length
  std::int64_t batch = 20;      ///< parallel training streams
  std::int64_t eval_batch = 10;  ///< parallel validation streams
  std::int64_t steps = 1000;    ///< minibatches (optimizer steps)
  std::int64_t eval_every = 100;  ///< checkpoint interval in steps (also at step 0 and at `steps`)
  std::int64_t eval_windows = 0;  ///< validation windows per checkpoint (0: the whole validation stream)
  std::uint64_t seed = 1;       ///< the run's own CPU generator (initialisation and dropout)
  /// Test hook: zero the query and key projections at initialisation and never train them, so attention
  /// is uniform over the keys the mask allows (the entropy is then the mean of ln n over query positions).
  bool uniform_attention = false;
};

struct LmCheckpoint {
  std::int64_t step = 0;
  double train_loss = 0;  ///< mean training cross-entropy since the previous checkpoint (NaN at step 0)
  double val_loss = 0;    ///< mean validation cross-entropy (nats/token), eval mode (no dropout)
  /// Per layer: attention entropy (nats), averaged over query positions, windows and streams, with the
  /// causal mask (keys 1..n for query n).
  std::vector<double> entropy;
  /// Per layer: the same logits' softmax over all bptt keys, including those the causal mask excludes
  /// (a wrong measurement, kept for the mutant that uses it).
  std::vector<double> entropy_all_keys;
  /// Per layer: the mean over query positions (windows, streams) of (max - min of the logits the mask
  /// allows)^2 / 8, an upper bound on the same mean of ln n - H (Popoviciu: ln n - H = KL(p || uniform)
  /// = int_0^1 t Var_{p_t}(z) dt <= range^2 / 8 along p_t = softmax(t z)).
  std::vector<double> entropy_deficit_bound;
};

struct LmRun {
  std::vector<LmCheckpoint> checkpoints;
  double train_seconds = 0;      ///< wall time of the training steps only (no evaluation)
  double train_cpu_seconds = 0;  ///< CPU time of the run's thread over the same steps
  double tokens_per_second = 0;  ///< training tokens (steps x bptt x batch) per train_seconds
  std::string backend;           ///< "libtorch <version>, <threads> thread(s)"
};

/// nullopt when the libtorch plugin loads; otherwise why not, with the command that installs it.
std::optional<std::string> torch_unavailable();

/// Several runs (e.g. seeds x learning rates), `parallel` at a time on their own threads. Each run uses one
/// intra-op thread and its own generator, so its numbers do not depend on `parallel` (bit for bit, on one
/// machine and BLAS). Throws as train_transformer_lm does, for the first failed run.
std::vector<LmRun> train_transformer_lms(const std::vector<std::int64_t>& train,
                                         const std::vector<std::int64_t>& validation,
                                         const std::vector<LmConfig>& configs, unsigned parallel);

/// Trains on `train` (batchified into `batch` streams) and evaluates on `validation` at every checkpoint.
/// Throws std::runtime_error when the plugin is unavailable, std::invalid_argument on a bad config or a
/// token id outside [0, vocabulary), and std::runtime_error when a loss becomes non-finite.
LmRun train_transformer_lm(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& validation,
                           const LmConfig& config);

/// The mean of ln n over n = 1..bptt: the entropy of uniform causal attention averaged over query positions.
double uniform_causal_entropy(std::int64_t bptt);

}  // namespace dyncheck::sim::text
