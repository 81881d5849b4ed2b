// The libtorch plugin (the only torch translation unit of dyncheck): the model of JoMA's decoder_wiki.py
// with use_baseline=true, i.e. the PyTorch word-language-model tutorial's TransformerModel with a causal
// mask (specs/joma.md §6), its training loop and the per-layer attention entropy.
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "torch_lm_api.hpp"

namespace dyncheck::sim::text {
namespace {

// The tutorial's PositionalEncoding: x + pe[:L], then dropout; pe[p, 2i] = sin(p / 10000^{2i/d}),
// pe[p, 2i+1] = cos(...); max_len 5000.
struct PositionalEncodingImpl : torch::nn::Module {
  PositionalEncodingImpl(std::int64_t d, double dropout, std::int64_t max_len = 5000)
      : drop(register_module("drop", torch::nn::Dropout(dropout))) {
    auto position = torch::arange(max_len, torch::kFloat).unsqueeze(1);
    auto div = torch::exp(torch::arange(0, d, 2, torch::kFloat) * (-std::log(10000.0) / static_cast<double>(d)));
    pe = torch::zeros({max_len, 1, d});
    pe.index_put_({torch::indexing::Slice(), 0, torch::indexing::Slice(0, torch::indexing::None, 2)},
                  torch::sin(position * div));
    pe.index_put_({torch::indexing::Slice(), 0, torch::indexing::Slice(1, torch::indexing::None, 2)},
                  torch::cos(position * div));
    pe = register_buffer("pe", pe);
  }
  torch::Tensor forward(const torch::Tensor& x) { return drop(x + pe.slice(0, 0, x.size(0))); }
  torch::nn::Dropout drop;
  torch::Tensor pe;
};
TORCH_MODULE(PositionalEncoding);

struct LanguageModelImpl : torch::nn::Module {
  explicit LanguageModelImpl(const LmConfig& c)
      : emsize(c.emsize),
        embedding(register_module("embedding", torch::nn::Embedding(c.vocabulary, c.emsize))),
        position(register_module("position", PositionalEncoding(c.emsize, c.dropout))),
        decoder(register_module("decoder", torch::nn::Linear(c.emsize, c.vocabulary))) {
    for (std::int64_t l = 0; l < c.layers; ++l) {
      layers.push_back(register_module(
          "layer" + std::to_string(l),
          torch::nn::TransformerEncoderLayer(
              torch::nn::TransformerEncoderLayerOptions(c.emsize, c.heads).dim_feedforward(c.emsize).dropout(
                  c.dropout))));
    }
    // The tutorial's init_weights: embedding and decoder weight U(-0.1, 0.1), decoder bias 0.
    torch::NoGradGuard no_grad;
    embedding->weight.uniform_(-0.1, 0.1);
    decoder->weight.uniform_(-0.1, 0.1);
    decoder->bias.zero_();
    if (c.uniform_attention) {
      for (auto& layer : layers) {
        layer->self_attn->in_proj_weight.slice(0, 0, 2 * c.emsize).zero_();
        layer->self_attn->in_proj_bias.slice(0, 0, 2 * c.emsize).zero_();
      }
    }
  }

  // src [L, B] -> logits [L, B, V]. With `entropy` set, also the per-layer attention entropy (mean over
  // queries and streams) with the mask, and without it (all keys).
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& mask, std::vector<double>* entropy = nullptr,
                        std::vector<double>* entropy_all = nullptr) {
    auto h = position(embedding(src) * std::sqrt(static_cast<double>(emsize)));
    for (auto& layer : layers) {
      if (entropy != nullptr) {
        const auto masked = std::get<1>(layer->self_attn->forward(h, h, h, {}, true, mask));  // [B, L, S]
        entropy->push_back(-torch::xlogy(masked, masked).sum(-1).mean().item<double>());
        const auto all = std::get<1>(layer->self_attn->forward(h, h, h, {}, true, {}));
        entropy_all->push_back(-torch::xlogy(all, all).sum(-1).mean().item<double>());
      }
      h = layer(h, mask);
    }
    return decoder(h);
  }

  std::int64_t emsize;
  torch::nn::Embedding embedding;
  PositionalEncoding position;
  torch::nn::Linear decoder;
  std::vector<torch::nn::TransformerEncoderLayer> layers;
};
TORCH_MODULE(LanguageModel);

// The tutorial's batchify: the stream cut to a multiple of `streams`, as `streams` columns [rows, streams].
torch::Tensor batchify(const std::vector<std::int64_t>& ids, std::int64_t streams) {
  const auto rows = static_cast<std::int64_t>(ids.size()) / streams;
  auto data = torch::from_blob(const_cast<std::int64_t*>(ids.data()), {rows * streams}, torch::kLong).clone();
  return data.view({streams, rows}).t().contiguous();
}

void validate(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& validation, const LmConfig& c) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("train_transformer_lm: " + what);
  };
  require(c.vocabulary >= 2, "vocabulary must be at least 2");
  require(c.emsize >= 2 && c.emsize % 2 == 0, "emsize must be even and at least 2");
  require(c.layers >= 1 && c.heads >= 1 && c.emsize % c.heads == 0, "layers >= 1, heads >= 1 dividing emsize");
  require(c.dropout >= 0 && c.dropout < 1, "dropout must be in [0, 1)");
  require(c.learning_rate > 0 && std::isfinite(c.learning_rate), "learning_rate must be positive");
  require(c.clip > 0, "clip must be positive");
  require(c.bptt >= 1 && c.bptt <= 5000 && c.batch >= 1 && c.eval_batch >= 1, "bptt in [1, 5000], batch >= 1");
  require(c.steps >= 0 && c.eval_every >= 1 && c.eval_windows >= 0, "steps >= 0, eval_every >= 1, eval_windows >= 0");
  require(c.threads >= 1, "threads must be at least 1");
  require(static_cast<std::int64_t>(train.size()) >= c.batch * (c.bptt + 1),
          "the training stream is shorter than one window per stream");
  require(static_cast<std::int64_t>(validation.size()) >= c.eval_batch * (c.bptt + 1),
          "the validation stream is shorter than one window per stream");
  for (const auto* ids : {&train, &validation}) {
    for (const auto id : *ids) require(id >= 0 && id < c.vocabulary, "a token id is outside [0, vocabulary)");
  }
}

LmRun train(const std::vector<std::int64_t>& train_ids, const std::vector<std::int64_t>& validation_ids,
            const LmConfig& c) {
  validate(train_ids, validation_ids, c);
  torch::set_num_threads(c.threads);
  torch::manual_seed(c.seed);
  LanguageModel model(c);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(c.learning_rate));
  const auto train_data = batchify(train_ids, c.batch);
  const auto val_data = batchify(validation_ids, c.eval_batch);
  const auto mask = torch::triu(torch::full({c.bptt, c.bptt}, -std::numeric_limits<float>::infinity()), 1);
  const auto V = c.vocabulary;

  LmRun run;
  run.backend = "libtorch " + std::string(TORCH_VERSION) + ", " + std::to_string(c.threads) + " thread(s)";
  auto evaluate = [&](std::int64_t step, double train_loss) {
    model->eval();
    torch::NoGradGuard no_grad;
    LmCheckpoint point;
    point.step = step;
    point.train_loss = train_loss;
    point.entropy.assign(static_cast<std::size_t>(c.layers), 0.0);
    point.entropy_all_keys.assign(static_cast<std::size_t>(c.layers), 0.0);
    std::int64_t windows = 0;
    double loss = 0;
    for (std::int64_t i = 0; i + c.bptt + 1 <= val_data.size(0); i += c.bptt) {  // full windows only
      if (c.eval_windows > 0 && windows >= c.eval_windows) break;
      const auto x = val_data.slice(0, i, i + c.bptt);
      const auto y = val_data.slice(0, i + 1, i + 1 + c.bptt);
      std::vector<double> entropy, entropy_all;
      const auto out = model->forward(x, mask, &entropy, &entropy_all);
      loss += torch::nn::functional::cross_entropy(out.view({-1, V}), y.reshape(-1)).item<double>();
      for (std::size_t l = 0; l < entropy.size(); ++l) {
        point.entropy[l] += entropy[l];
        point.entropy_all_keys[l] += entropy_all[l];
      }
      ++windows;
    }
    point.val_loss = loss / static_cast<double>(windows);
    for (std::size_t l = 0; l < point.entropy.size(); ++l) {
      point.entropy[l] /= static_cast<double>(windows);
      point.entropy_all_keys[l] /= static_cast<double>(windows);
    }
    if (!std::isfinite(point.val_loss)) {
      throw std::runtime_error("train_transformer_lm: validation loss is not finite at step " + std::to_string(step));
    }
    run.checkpoints.push_back(std::move(point));
    model->train();
  };

  evaluate(0, std::numeric_limits<double>::quiet_NaN());
  model->train();
  std::int64_t row = 0;
  double loss_sum = 0;
  std::int64_t loss_count = 0;
  double seconds = 0;
  for (std::int64_t step = 1; step <= c.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    if (row + c.bptt + 1 > train_data.size(0)) row = 0;  // next epoch, same order (the tutorial's loop)
    const auto x = train_data.slice(0, row, row + c.bptt);
    const auto y = train_data.slice(0, row + 1, row + 1 + c.bptt);
    row += c.bptt;
    const auto out = model->forward(x, mask);
    const auto loss = torch::nn::functional::cross_entropy(out.view({-1, V}), y.reshape(-1));
    optimizer.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), c.clip);
    optimizer.step();
    const double value = loss.item<double>();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!std::isfinite(value)) {
      throw std::runtime_error("train_transformer_lm: training loss is not finite at step " + std::to_string(step));
    }
    loss_sum += value;
    ++loss_count;
    if (step % c.eval_every == 0 || step == c.steps) {
      evaluate(step, loss_sum / static_cast<double>(loss_count));
      loss_sum = 0;
      loss_count = 0;
    }
  }
  run.train_seconds = seconds;
  run.tokens_per_second =
      seconds > 0 ? static_cast<double>(c.steps * c.bptt * c.batch) / seconds : 0.0;
  return run;
}

bool train_entry(const std::vector<std::int64_t>& train_ids, const std::vector<std::int64_t>& validation_ids,
                 const LmConfig& config, LmRun& run, std::string& error, bool& invalid_argument) {
  try {
    run = train(train_ids, validation_ids, config);
    return true;
  } catch (const std::invalid_argument& e) {
    error = e.what();
    invalid_argument = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  return false;
}

}  // namespace
}  // namespace dyncheck::sim::text

extern "C" __attribute__((visibility("default"))) const dyncheck::sim::text::plugin::Api* dyncheck_torch_lm_api() {
  static const dyncheck::sim::text::plugin::Api api{dyncheck::sim::text::plugin::abi_version,
                                                     &dyncheck::sim::text::train_entry};
  return &api;
}
