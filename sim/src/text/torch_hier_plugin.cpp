// The Table 1 model of JoMA (decoder_only_hier.py: SABlock, Model, the training loop and the hidden-unit
// read-out; sim/include/dyncheck/sim/text/hier_model.hpp), in the libtorch plugin. The second torch
// translation unit of the plugin, with its own entry point (torch_hier_api.hpp).
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "keep_freed_memory.hpp"
#include "parallel_runs.hpp"
#include "torch_hier_api.hpp"

namespace dyncheck::sim::text {
namespace {

// PyTorch's nn.Linear default initialisation (kaiming_uniform with a = sqrt(5)): weight and bias U(+-1/sqrt(fan_in)),
// drawn from the run's generator.
void init_linear(torch::nn::Linear& layer, std::int64_t fan_in, at::Generator& generator) {
  const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
  layer->weight.uniform_(-bound, bound, generator);
  if (layer->bias.defined()) layer->bias.uniform_(-bound, bound, generator);
}

// The script's SABlock with H = 1 and gate relu.
struct SABlockImpl : torch::nn::Module {
  SABlockImpl(std::int64_t d_model, std::int64_t d_hidden, at::Generator& generator)
      : d(d_model),
        Wk(register_module("Wk", torch::nn::Linear(torch::nn::LinearOptions(d_model, d_model).bias(false)))),
        Wq(register_module("Wq", torch::nn::Linear(torch::nn::LinearOptions(d_model, d_model).bias(false)))),
        Wv(register_module("Wv", torch::nn::Linear(torch::nn::LinearOptions(d_model, d_model).bias(false)))),
        w1(register_module("w1", torch::nn::Linear(d_model, d_hidden))),
        w2(register_module("w2", torch::nn::Linear(d_hidden, d_model))),
        ln(register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}).eps(1e-5)))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}).eps(1e-5)))) {
    torch::NoGradGuard no_grad;
    for (auto* layer : {&Wk, &Wq, &Wv, &w1}) init_linear(*layer, d_model, generator);
    init_linear(w2, d_hidden, generator);
  }

  // embed [N, L, d] -> (output [N, L, d], hidden [N, L, d_hidden])
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& embed, const torch::Tensor& mask) {
    const auto q = Wq(embed), k = Wk(embed), v = Wv(embed);
    const auto inner = torch::bmm(q, k.transpose(1, 2)) + mask.unsqueeze(0);
    const auto attention = torch::softmax(inner / std::sqrt(static_cast<double>(d)), 2);
    const auto output = ln(torch::bmm(attention, v) + embed);
    auto hidden = torch::relu(w1(output));
    auto output2 = ln2(w2(hidden) + output);
    return {output2, hidden};
  }

  std::int64_t d;
  torch::nn::Linear Wk, Wq, Wv, w1, w2;
  torch::nn::LayerNorm ln, ln2;
};
TORCH_MODULE(SABlock);

// The script's Model (use_model "embedding", normalize_embed_shift false, normalize_embed_scale none).
struct HierNetImpl : torch::nn::Module {
  HierNetImpl(const HierModelConfig& c, at::Generator& generator)
      : embed(register_module("embed", torch::nn::Embedding(c.vocabulary, c.d))),
        final_W(register_module("final_W", torch::nn::Linear(c.d, c.classes))) {
    for (std::int64_t l = 0; l < c.layers; ++l) {
      blocks.push_back(register_module("block" + std::to_string(l), SABlock(c.d, c.d_hidden, generator)));
    }
    torch::NoGradGuard no_grad;
    embed->weight.normal_(0, 1, generator);  // nn.Embedding's N(0, 1)
    init_linear(final_W, c.d, generator);
  }

  // x [N, L] -> logits at the last position [N, classes]; with `hiddens`, each layer's FFN hidden [N, L, d_hidden].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, std::vector<torch::Tensor>* hiddens = nullptr) {
    auto output = embed(x);
    for (auto& block : blocks) {
      auto [next, hidden] = block->forward(output, mask);
      output = next;
      if (hiddens != nullptr) hiddens->push_back(hidden);
    }
    return final_W(output.select(1, output.size(1) - 1));
  }

  torch::nn::Embedding embed;
  torch::nn::Linear final_W;
  std::vector<SABlock> blocks;
};
TORCH_MODULE(HierNet);

void validate(const HierModelData& data, const HierModelConfig& c) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("train_hier_models: " + what);
  };
  require(c.vocabulary >= 2 && c.length >= 1 && c.classes >= 2, "vocabulary >= 2, length >= 1, classes >= 2");
  require(c.layers >= 1 && c.d >= 1 && c.d_hidden >= 1, "layers, d, d_hidden >= 1");
  require(c.learning_rate > 0 && std::isfinite(c.learning_rate), "learning_rate must be positive");
  require(c.weight_decay >= 0 && std::isfinite(c.weight_decay), "weight_decay must be >= 0");
  require(c.steps >= 0 && c.batch >= 1, "steps >= 0, batch >= 1");
  require(!c.checkpoints.empty(), "at least one checkpoint");
  for (std::size_t i = 0; i < c.checkpoints.size(); ++i) {
    require(c.checkpoints[i] >= 0 && c.checkpoints[i] <= c.steps && (i == 0 || c.checkpoints[i] > c.checkpoints[i - 1]),
            "checkpoints must be increasing steps in [0, steps]");
  }
  require(static_cast<std::int64_t>(data.class_tokens.size()) == c.classes * c.length, "class_tokens must be classes x length");
  require(static_cast<std::int64_t>(data.labels.size()) == c.steps * c.batch, "labels must be steps x batch");
  for (const auto t : data.class_tokens) require(t >= 0 && t < c.vocabulary, "a token id is outside [0, vocabulary)");
  for (const auto y : data.labels) require(y >= 0 && y < c.classes, "a label is outside [0, classes)");
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

HierRun train(const HierModelData& data, const HierModelConfig& c) {
  validate(data, c);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(c.seed);
  HierNet model(c, generator);
  torch::optim::Adam optimizer(model->parameters(),
                               torch::optim::AdamOptions(c.learning_rate).weight_decay(c.weight_decay));
  const auto tokens = torch::from_blob(const_cast<std::int64_t*>(data.class_tokens.data()), {c.classes, c.length},
                                       torch::kLong).clone();
  const auto targets = torch::arange(c.classes, torch::kLong);  // sequence c has label c
  const auto mask = torch::triu(torch::full({c.length, c.length}, -std::numeric_limits<float>::infinity()), 1);

  HierRun run;
  run.backend = "libtorch " + std::string(TORCH_VERSION) + ", 1 intra-op thread, own CPU generator";
  double loss_sum = 0;
  std::int64_t loss_count = 0;
  auto measure = [&](std::int64_t step) {
    model->eval();
    torch::NoGradGuard no_grad;
    HierCheckpoint point;
    point.step = step;
    point.train_loss = loss_count > 0 ? loss_sum / static_cast<double>(loss_count) : std::numeric_limits<double>::quiet_NaN();
    std::vector<torch::Tensor> hiddens;
    const auto logits = model->forward(tokens, mask, &hiddens);
    point.class_loss = torch::nn::functional::cross_entropy(logits, targets).item<double>();
    point.accuracy = logits.argmax(1).eq(targets).to(torch::kDouble).mean().item<double>();
    if (!std::isfinite(point.class_loss)) {
      throw std::runtime_error("train_hier_models: the loss is not finite at step " + std::to_string(step));
    }
    for (const auto& hidden : hiddens) {
      const auto pooled = std::get<0>(hidden.max(1)).contiguous();  // [classes, d_hidden]
      point.pooled.emplace_back(pooled.data_ptr<float>(), pooled.data_ptr<float>() + pooled.numel());
    }
    run.checkpoints.push_back(std::move(point));
    loss_sum = 0;
    loss_count = 0;
    model->train();
  };

  std::size_t next_checkpoint = 0;
  if (c.checkpoints.front() == 0) {
    measure(0);
    ++next_checkpoint;
  }
  model->train();
  double seconds = 0, cpu_seconds = 0;
  std::vector<float> weights(static_cast<std::size_t>(c.classes));
  for (std::int64_t step = 1; step <= c.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    // The batch's class counts n_c / B (the exact rewriting of the batch mean in hier_model.hpp).
    std::fill(weights.begin(), weights.end(), 0.0F);
    for (std::int64_t i = 0; i < c.batch; ++i) {
      weights[static_cast<std::size_t>(data.labels[static_cast<std::size_t>((step - 1) * c.batch + i)])] += 1.0F;
    }
    for (auto& w : weights) w /= static_cast<float>(c.batch);
    const auto w = torch::from_blob(weights.data(), {c.classes}, torch::kFloat).clone();
    const auto logits = model->forward(tokens, mask);
    const auto per_class = torch::nn::functional::cross_entropy(
        logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    const auto loss = (per_class * w).sum();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    const double value = loss.item<double>();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu_seconds += thread_cpu_seconds() - cpu_start;
    if (!std::isfinite(value)) {
      throw std::runtime_error("train_hier_models: the training loss is not finite at step " + std::to_string(step));
    }
    loss_sum += value;
    ++loss_count;
    if (next_checkpoint < c.checkpoints.size() && step == c.checkpoints[next_checkpoint]) {
      measure(step);
      ++next_checkpoint;
    }
  }
  run.train_seconds = seconds;
  run.train_cpu_seconds = cpu_seconds;
  return run;
}

bool train_entry(const std::vector<HierModelData>& data, const std::vector<HierModelConfig>& configs, unsigned parallel,
                 std::vector<HierRun>& runs, std::string& error, bool& invalid_argument) {
  if (data.size() != configs.size()) {
    error = "train_hier_models: one data set per config";
    invalid_argument = true;
    return false;
  }
  // One intra-op thread per run and its own generator: a run's numbers do not depend on `parallel`.
  static std::once_flag threads_set;
  std::call_once(threads_set, [] {
    torch::set_num_threads(1);
    keep_freed_memory();  // speed only (keep_freed_memory.hpp)
  });
  runs.assign(configs.size(), HierRun{});
  return run_in_parallel(
      configs.size(), parallel, [&](std::size_t i) { runs[i] = train(data[i], configs[i]); }, error, invalid_argument);
}

}  // namespace
}  // namespace dyncheck::sim::text

extern "C" __attribute__((visibility("default"))) const dyncheck::sim::text::hier_plugin::Api* dyncheck_torch_hier_api() {
  static const dyncheck::sim::text::hier_plugin::Api api{dyncheck::sim::text::hier_plugin::abi_version,
                                                          &dyncheck::sim::text::train_entry};
  return &api;
}
