// The libtorch plugin (the only torch translation unit of dyncheck): the model of JoMA's decoder_wiki.py
// with use_baseline=true, i.e. the PyTorch word-language-model tutorial's TransformerModel with a causal
// mask (specs/joma.md §6), its training loop and the per-layer attention entropy.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <atomic>
#include <thread>

#include <chrono>
#include <ctime>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "keep_freed_memory.hpp"
#include "torch_lm_api.hpp"

namespace dyncheck::sim::text {
namespace {

// Dropout with the run's own generator (nn::Dropout draws from the global one, which parallel runs would share).
torch::Tensor dropout(const torch::Tensor& x, double p, bool training, at::Generator& generator) {
  if (!training || p == 0) return x;
  // one mask tensor, scaled in place: x * (bernoulli(1 - p) / (1 - p))
  return x * torch::empty_like(x).bernoulli_(1 - p, generator).div_(1 - p);
}

// U(-b, b) from the run's generator.
void uniform(torch::Tensor t, double b, at::Generator& generator) { t.uniform_(-b, b, generator); }

// One post-norm encoder layer of torch.nn.TransformerEncoderLayer (1.13, norm_first = false, ReLU), written
// with torch ops so that its dropouts use the run's generator:
//   a = MHA(x) with dropout p on the attention weights;  x = LN1(x + drop(a));
//   x = LN2(x + drop(W2 drop(relu(W1 x + b1)) + b2)).
// Parameters and their initialisation are those of the PyTorch module (MultiheadAttention: in_proj
// xavier_uniform, in_proj_bias 0, out_proj U(+-1/sqrt(d)) with bias 0; linear1/2: U(+-1/sqrt(fan_in)) for
// weight and bias; LayerNorm 1 and 0, eps 1e-5).
struct EncoderLayerImpl : torch::nn::Module {
  EncoderLayerImpl(std::int64_t d_model, std::int64_t n_heads, std::int64_t d_hid, double dropout_p,
                   at::Generator& generator)
      : d(d_model),
        heads(n_heads),
        p(dropout_p),
        in_proj_weight(register_parameter("in_proj_weight", torch::empty({3 * d_model, d_model}))),
        in_proj_bias(register_parameter("in_proj_bias", torch::zeros({3 * d_model}))),
        out_proj(register_module("out_proj", torch::nn::Linear(d_model, d_model))),
        linear1(register_module("linear1", torch::nn::Linear(d_model, d_hid))),
        linear2(register_module("linear2", torch::nn::Linear(d_hid, d_model))),
        norm1(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}).eps(1e-5)))),
        norm2(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}).eps(1e-5)))) {
    torch::NoGradGuard no_grad;
    uniform(in_proj_weight, std::sqrt(6.0 / static_cast<double>(d + 3 * d)), generator);  // xavier, fans (d, 3d)
    uniform(out_proj->weight, 1 / std::sqrt(static_cast<double>(d)), generator);
    out_proj->bias.zero_();
    uniform(linear1->weight, 1 / std::sqrt(static_cast<double>(d)), generator);
    uniform(linear1->bias, 1 / std::sqrt(static_cast<double>(d)), generator);
    uniform(linear2->weight, 1 / std::sqrt(static_cast<double>(d_hid)), generator);
    uniform(linear2->bias, 1 / std::sqrt(static_cast<double>(d_hid)), generator);
  }

  // Attention logits [B, H, L, L] (query rows, key columns) of x [L, B, d], and the values [B, H, L, dh].
  std::pair<torch::Tensor, torch::Tensor> logits(const torch::Tensor& x) const {
    const auto L = x.size(0), B = x.size(1), dh = d / heads;
    auto qkv = torch::nn::functional::linear(x, in_proj_weight, in_proj_bias).chunk(3, -1);
    auto split = [&](const torch::Tensor& t) { return t.reshape({L, B * heads, dh}).transpose(0, 1); };  // [BH, L, dh]
    const auto q = split(qkv[0]) / std::sqrt(static_cast<double>(dh));
    const auto k = split(qkv[1]), v = split(qkv[2]);
    return {torch::bmm(q, k.transpose(1, 2)), v};
  }

  // With `entropy`: also the attention entropy (mean over heads, queries and streams) with the mask and
  // without it (all keys), and the mean over queries of (max - min of the logits the mask allows)^2 / 8.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, at::Generator& generator,
                        double* entropy = nullptr, double* entropy_all = nullptr, double* deficit_bound = nullptr) {
    const auto L = x.size(0), B = x.size(1);
    auto [scores, v] = logits(x);
    const auto weights = torch::softmax(scores + mask, -1);  // [BH, L, L]
    if (entropy != nullptr) {
      *entropy = -torch::xlogy(weights, weights).sum(-1).mean().item<double>();
      const auto all = torch::softmax(scores, -1);
      *entropy_all = -torch::xlogy(all, all).sum(-1).mean().item<double>();
      // mask is 0 on allowed keys and -inf on the others: + mask hides them from max, - mask from min.
      const auto range = std::get<0>((scores + mask).max(-1)) - std::get<0>((scores - mask).min(-1));
      *deficit_bound = (range * range / 8).mean().item<double>();
    }
    auto attended = torch::bmm(dropout(weights, p, is_training(), generator), v);  // [BH, L, dh]
    attended = attended.transpose(0, 1).reshape({L, B, d});
    auto h = norm1(x + dropout(out_proj(attended), p, is_training(), generator));
    auto ff = linear2(dropout(torch::relu(linear1(h)), p, is_training(), generator));
    return norm2(h + dropout(ff, p, is_training(), generator));
  }

  std::int64_t d, heads;
  double p;
  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj, linear1, linear2;
  torch::nn::LayerNorm norm1, norm2;
};
TORCH_MODULE(EncoderLayer);

struct LanguageModelImpl : torch::nn::Module {
  LanguageModelImpl(const LmConfig& c, at::Generator& generator)
      : emsize(c.emsize),
        p(c.dropout),
        embedding(register_module("embedding", torch::nn::Embedding(c.vocabulary, c.emsize))),
        decoder(register_module("decoder", torch::nn::Linear(c.emsize, c.vocabulary))) {
    // The tutorial's PositionalEncoding buffer: pe[p, 2i] = sin(p / 10000^{2i/d}), pe[p, 2i+1] = cos(...).
    const std::int64_t max_len = 5000;
    auto position = torch::arange(max_len, torch::kFloat).unsqueeze(1);
    constexpr double ln_10000 = 9.210340371976184;  // ln 10000, correctly rounded (no glibc log: portability guard)
    auto div = torch::exp(torch::arange(0, c.emsize, 2, torch::kFloat) * (-ln_10000 / static_cast<double>(c.emsize)));
    pe = torch::zeros({max_len, 1, c.emsize});
    pe.index_put_({torch::indexing::Slice(), 0, torch::indexing::Slice(0, torch::indexing::None, 2)}, torch::sin(position * div));
    pe.index_put_({torch::indexing::Slice(), 0, torch::indexing::Slice(1, torch::indexing::None, 2)}, torch::cos(position * div));
    pe = register_buffer("pe", pe);
    for (std::int64_t l = 0; l < c.layers; ++l) {
      layers.push_back(register_module("layer" + std::to_string(l),
                                       EncoderLayer(c.emsize, c.heads, c.emsize, c.dropout, generator)));
    }
    // The tutorial's init_weights: embedding and decoder weight U(-0.1, 0.1), decoder bias 0.
    torch::NoGradGuard no_grad;
    uniform(embedding->weight, 0.1, generator);
    uniform(decoder->weight, 0.1, generator);
    decoder->bias.zero_();
    if (c.uniform_attention) {
      for (auto& layer : layers) {
        layer->in_proj_weight.slice(0, 0, 2 * c.emsize).zero_();
        layer->in_proj_bias.slice(0, 0, 2 * c.emsize).zero_();
      }
    }
  }

  // src [L, B] -> logits [L, B, V]; with `entropy`, the per-layer entropies are appended.
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& mask, at::Generator& generator,
                        std::vector<double>* entropy = nullptr, std::vector<double>* entropy_all = nullptr,
                        std::vector<double>* deficit_bound = nullptr) {
    auto h = embedding(src) * std::sqrt(static_cast<double>(emsize));
    h = dropout(h + pe.slice(0, 0, src.size(0)), p, is_training(), generator);
    for (auto& layer : layers) {
      double e = 0, e_all = 0, bound = 0;
      h = layer->forward(h, mask, generator, entropy != nullptr ? &e : nullptr, &e_all, &bound);
      if (entropy != nullptr) {
        entropy->push_back(e);
        entropy_all->push_back(e_all);
        deficit_bound->push_back(bound);
      }
    }
    return decoder(h);
  }

  std::int64_t emsize;
  double p;
  torch::nn::Embedding embedding;
  torch::nn::Linear decoder;
  torch::Tensor pe;
  std::vector<EncoderLayer> layers;
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
  auto generator = at::make_generator<at::CPUGeneratorImpl>(c.seed);
  LanguageModel model(c, generator);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(c.learning_rate));
  const auto train_data = batchify(train_ids, c.batch);
  const auto val_data = batchify(validation_ids, c.eval_batch);
  const auto mask = torch::triu(torch::full({c.bptt, c.bptt}, -std::numeric_limits<float>::infinity()), 1);
  const auto V = c.vocabulary;

  LmRun run;
  run.backend = "libtorch " + std::string(TORCH_VERSION) + ", 1 intra-op thread, own CPU generator";
  auto evaluate = [&](std::int64_t step, double train_loss) {
    model->eval();
    torch::NoGradGuard no_grad;
    LmCheckpoint point;
    point.step = step;
    point.train_loss = train_loss;
    point.entropy.assign(static_cast<std::size_t>(c.layers), 0.0);
    point.entropy_all_keys.assign(static_cast<std::size_t>(c.layers), 0.0);
    point.entropy_deficit_bound.assign(static_cast<std::size_t>(c.layers), 0.0);
    std::int64_t windows = 0;
    double loss = 0;
    for (std::int64_t i = 0; i + c.bptt + 1 <= val_data.size(0); i += c.bptt) {  // full windows only
      if (c.eval_windows > 0 && windows >= c.eval_windows) break;
      const auto x = val_data.slice(0, i, i + c.bptt);
      const auto y = val_data.slice(0, i + 1, i + 1 + c.bptt);
      std::vector<double> entropy, entropy_all, bound;
      const auto out = model->forward(x, mask, generator, &entropy, &entropy_all, &bound);
      loss += torch::nn::functional::cross_entropy(out.view({-1, V}), y.reshape(-1)).item<double>();
      for (std::size_t l = 0; l < entropy.size(); ++l) {
        point.entropy[l] += entropy[l];
        point.entropy_all_keys[l] += entropy_all[l];
        point.entropy_deficit_bound[l] += bound[l];
      }
      ++windows;
    }
    point.val_loss = loss / static_cast<double>(windows);
    for (std::size_t l = 0; l < point.entropy.size(); ++l) {
      point.entropy[l] /= static_cast<double>(windows);
      point.entropy_all_keys[l] /= static_cast<double>(windows);
      point.entropy_deficit_bound[l] /= static_cast<double>(windows);
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
  double seconds = 0, cpu_seconds = 0;
  const auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  for (std::int64_t step = 1; step <= c.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_now();
    if (row + c.bptt + 1 > train_data.size(0)) row = 0;  // next epoch, same order (the tutorial's loop)
    const auto x = train_data.slice(0, row, row + c.bptt);
    const auto y = train_data.slice(0, row + 1, row + 1 + c.bptt);
    row += c.bptt;
    const auto out = model->forward(x, mask, generator);
    const auto loss = torch::nn::functional::cross_entropy(out.view({-1, V}), y.reshape(-1));
    optimizer.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), c.clip);
    optimizer.step();
    const double value = loss.item<double>();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu_seconds += cpu_now() - cpu_start;
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
  run.train_cpu_seconds = cpu_seconds;
  run.tokens_per_second =
      seconds > 0 ? static_cast<double>(c.steps * c.bptt * c.batch) / seconds : 0.0;
  return run;
}

bool train_entry(const std::vector<std::int64_t>& train_ids, const std::vector<std::int64_t>& validation_ids,
                 const std::vector<LmConfig>& configs, unsigned parallel, std::vector<LmRun>& runs, std::string& error,
                 bool& invalid_argument) {
  // Every run uses one intra-op thread (set once, process-wide) and its own generator, so a run's numbers
  // do not depend on how many runs go at once; `parallel` runs go at once, each on its own std::thread.
  static std::once_flag threads_set;
  std::call_once(threads_set, [] {
    torch::set_num_threads(1);
    keep_freed_memory();
  });
  runs.assign(configs.size(), LmRun{});
  std::vector<std::string> errors(configs.size());
  std::vector<char> invalid(configs.size(), 0);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < configs.size(); i = next++) {
      try {
        runs[i] = train(train_ids, validation_ids, configs[i]);
      } catch (const std::invalid_argument& e) {
        errors[i] = e.what();
        invalid[i] = 1;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  const auto count = std::max<std::size_t>(1, std::min<std::size_t>(parallel, configs.size()));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < count; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!errors[i].empty()) {
      error = errors[i];
      invalid_argument = invalid[i] != 0;
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace dyncheck::sim::text

extern "C" __attribute__((visibility("default"))) const dyncheck::sim::text::plugin::Api* dyncheck_torch_lm_api() {
  static const dyncheck::sim::text::plugin::Api api{dyncheck::sim::text::plugin::abi_version,
                                                     &dyncheck::sim::text::train_entry};
  return &api;
}
