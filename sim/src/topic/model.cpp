#include "dyncheck/sim/topic/model.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::sim::topic {
namespace {

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument("sim::topic model: " + what); }

bool trains_attention(const Structure& s) { return !s.uniform_attention && (s.train_key || s.train_query); }
bool trains_embedding(const Structure& s) { return !s.one_hot_embedding && s.train_embedding; }
bool trains_decoder(const Structure& s) { return !s.identity_decoder && s.train_decoder; }

void check_shapes(const Structure& s, const Parameters& p) {
  const auto d = static_cast<Eigen::Index>(s.d), n_in = static_cast<Eigen::Index>(s.num_inputs),
             V = static_cast<Eigen::Index>(s.V);
  if (p.E.rows() != d || p.E.cols() != n_in || p.WK.rows() != d || p.WK.cols() != d || p.WQ.rows() != d ||
      p.WQ.cols() != d || p.WV.rows() != d || p.WV.cols() != d || p.Wdec.rows() != V || p.Wdec.cols() != d ||
      p.bdec.size() != V) {
    invalid("parameter shapes do not match the structure");
  }
}

}  // namespace

void Structure::validate() const {
  if (V < 1) invalid("V must be >= 1");
  if (num_inputs < V + 1) invalid("num_inputs must be >= V + 1 (the words and [MASK])");
  if (d < 1) invalid("d must be >= 1");
  if (one_hot_embedding && d != num_inputs) invalid("a one-hot embedding needs d = num_inputs");
  if (identity_decoder && d < V) invalid("an identity decoder needs d >= V");
  if (!(ridge_value >= 0)) invalid("ridge_value must be >= 0");
}

Parameters Parameters::zeros(const Structure& s) {
  s.validate();
  Parameters p;
  p.E = Eigen::MatrixXd::Identity(s.d, s.num_inputs);
  if (!s.one_hot_embedding) p.E.setZero();
  p.WK = Eigen::MatrixXd::Zero(s.d, s.d);
  p.WQ = Eigen::MatrixXd::Zero(s.d, s.d);
  p.WV = Eigen::MatrixXd::Zero(s.d, s.d);
  p.Wdec = Eigen::MatrixXd::Identity(s.V, s.d);
  if (!s.identity_decoder) p.Wdec.setZero();
  p.bdec = Eigen::VectorXd::Zero(s.V);
  return p;
}

Parameters& Parameters::operator+=(const Parameters& o) {
  E += o.E;
  WK += o.WK;
  WQ += o.WQ;
  WV += o.WV;
  Wdec += o.Wdec;
  bdec += o.bdec;
  return *this;
}

Parameters& Parameters::operator*=(double f) {
  E *= f;
  WK *= f;
  WQ *= f;
  WV *= f;
  Wdec *= f;
  bdec *= f;
  return *this;
}

double Parameters::squared_norm() const {
  return E.squaredNorm() + WK.squaredNorm() + WQ.squaredNorm() + WV.squaredNorm() + Wdec.squaredNorm() +
         bdec.squaredNorm();
}

void mask_frozen(const Structure& s, Parameters& g) {
  if (!trains_embedding(s)) g.E.setZero();
  if (s.uniform_attention || !s.train_key) g.WK.setZero();
  if (s.uniform_attention || !s.train_query) g.WQ.setZero();
  if (!s.train_value) g.WV.setZero();
  if (!trains_decoder(s)) {
    g.Wdec.setZero();
    g.bdec.setZero();
  }
}

Eigen::MatrixXd attention_logits(const Structure& s, const Parameters& p) {
  s.validate();
  check_shapes(s, p);
  if (s.uniform_attention) return Eigen::MatrixXd::Zero(s.num_inputs, s.num_inputs);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
  if (s.one_hot_embedding) return (p.WK.transpose().lazyProduct(p.WQ)) * scale;
  const Eigen::MatrixXd KE = p.WK.lazyProduct(p.E), QE = p.WQ.lazyProduct(p.E);
  return KE.transpose().lazyProduct(QE) * scale;
}

Evaluation evaluate(const Structure& s, const Parameters& p, const std::vector<MaskedDocument>& documents,
                    Normalisation normalisation, bool with_gradient) {
  Workspace workspace;
  Evaluation result;
  evaluate(s, p, documents, normalisation, with_gradient, workspace, result);
  return result;
}

void evaluate(const Structure& s, const Parameters& p, const std::vector<MaskedDocument>& documents,
              Normalisation normalisation, bool with_gradient, Workspace& ws, Evaluation& result) {
  s.validate();
  check_shapes(s, p);
  const int V = s.V, n_in = s.num_inputs;
  const bool fast_output = s.one_hot_embedding && s.identity_decoder;
  // M = W^dec W^V E: the output map from the attention-weighted token distribution.
  Eigen::MatrixXd& M = ws.M;
  if (fast_output) {
    M = p.WV.topRows(V);
  } else if (s.one_hot_embedding) {
    M = p.Wdec.lazyProduct(p.WV);
  } else {
    M = p.Wdec.lazyProduct(p.WV).lazyProduct(p.E);
  }
  // One-hot embedding with trained attention: the logits B(c, b) = W^K_c . W^Q_b / sqrt(d) are computed on demand for
  // the (key, query) token pairs the batch meets (a D x D product costs D^3, the pairs only #pairs x d), each once per
  // call, and the attention gradients are pulled back over those pairs only (every other entry of dB is 0).
  // Uniform attention never reads B.
  const bool lazy_logits = s.one_hot_embedding && !s.uniform_attention;
  const double logit_scale = 1.0 / std::sqrt(static_cast<double>(s.d));
  Eigen::MatrixXd& B = ws.B;
  std::vector<std::uint8_t>& known = ws.known;  // known[b n_in + c]: B(c, b) computed
  if (lazy_logits) {
    B.resize(n_in, n_in);
    known.assign(static_cast<std::size_t>(n_in) * static_cast<std::size_t>(n_in), 0);
  } else if (!s.uniform_attention) {
    // attention_logits() without its result allocation (the same expressions).
    ws.KE = p.WK.lazyProduct(p.E);
    ws.QE = p.WQ.lazyProduct(p.E);
    B = ws.KE.transpose().lazyProduct(ws.QE) * logit_scale;
  }
  auto logit = [&](int c, int b) {
    if (!lazy_logits) return B(c, b);
    std::uint8_t& k = known[static_cast<std::size_t>(b) * static_cast<std::size_t>(n_in) + static_cast<std::size_t>(c)];
    if (k == 0) {
      B(c, b) = p.WK.col(c).dot(p.WQ.col(b)) * logit_scale;
      k = 1;
    }
    return B(c, b);
  };
  const bool attention_gradient = with_gradient && trains_attention(s);
  // The gradient of M = W^dec W^V E (and of b^dec) is needed only when one of them is trained; otherwise every part
  // it feeds is zeroed by mask_frozen, so it is not accumulated (stage 2 with W^V frozen: a third of the per-key work).
  const bool output_gradient = with_gradient && (s.train_value || trains_decoder(s) || trains_embedding(s));

  result.loss = 0;
  result.token_loss_sum = 0;
  result.tokens = 0;
  Eigen::MatrixXd &dM = ws.dM, &dB = ws.dB;
  Eigen::VectorXd& dbdec = ws.dbdec;
  if (output_gradient) {
    dM.setZero(V, n_in);
    dbdec.setZero(V);
  }
  if (with_gradient) {
    if (attention_gradient) dB.setZero(n_in, n_in);
  }

  std::vector<int>& count = ws.count;
  std::vector<int>& group_of = ws.group_of;
  count.assign(static_cast<std::size_t>(n_in), 0);
  group_of.assign(static_cast<std::size_t>(n_in), -1);
  std::vector<int>& keys = ws.keys;
  std::vector<Workspace::Group>& groups = ws.groups;  // reused across documents: groups[0..used) are this document's
  std::size_t used = 0;
  Eigen::VectorXd& g_sum = ws.g_sum;
  g_sum.resize(V);
  std::vector<double>& a = ws.a;
  std::vector<double>& dA = ws.dA;
  Eigen::VectorXd &o = ws.o, &g = ws.g;
  o.resize(V);
  g.resize(V);
  for (const MaskedDocument& doc : documents) {
    const std::size_t N = doc.input.size();
    if (doc.words.size() != N || doc.selected.size() != N) invalid("masked document with inconsistent sizes");
    keys.clear();
    used = 0;
    long long total_keys = 0;
    for (std::size_t n = 0; n < N; ++n) {
      const int token = doc.input[n];
      if (token < 0 || token >= n_in) invalid("input id " + std::to_string(token) + " outside [0, num_inputs)");
      if (s.keys == KeySet::all || doc.selected[n] == 0) {
        if (count[static_cast<std::size_t>(token)]++ == 0) keys.push_back(token);
        ++total_keys;
      }
      if (doc.selected[n] != 0) {
        const int target = doc.words[n];
        if (target < 0 || target >= V) invalid("target word outside [0, V)");
        int& index = group_of[static_cast<std::size_t>(token)];
        if (index < 0) {
          index = static_cast<int>(used);
          if (used == groups.size()) groups.emplace_back();
          groups[used].token = token;
          groups[used].targets.clear();
          ++used;
        }
        groups[static_cast<std::size_t>(index)].targets.push_back(target);
      }
    }
    const std::size_t nk = keys.size();
    a.assign(nk, 0.0);
    dA.assign(nk, 0.0);
    bool uniform_done = false;
    if (output_gradient && s.uniform_attention) g_sum.setZero();
    for (std::size_t gi = 0; gi < used; ++gi) {
      const Workspace::Group& group = groups[gi];
      const int b = group.token;
      // Attention over the key tokens (uniform attention is the same for every query: computed once).
      if (total_keys > 0 && (!s.uniform_attention || !uniform_done)) {
        if (s.uniform_attention) {
          for (std::size_t i = 0; i < nk; ++i) {
            a[i] = static_cast<double>(count[static_cast<std::size_t>(keys[i])]) / static_cast<double>(total_keys);
          }
          uniform_done = true;
        } else {
          double top = -std::numeric_limits<double>::infinity();
          for (std::size_t i = 0; i < nk; ++i) {
            a[i] = logit(keys[i], b);
            top = std::max(top, a[i]);
          }
          double z = 0;
          for (std::size_t i = 0; i < nk; ++i) {
            a[i] = static_cast<double>(count[static_cast<std::size_t>(keys[i])]) * portable::exp(a[i] - top);
            z += a[i];
          }
          for (double& ai : a) ai /= z;
        }
        o = p.bdec;
        for (std::size_t i = 0; i < nk; ++i) o += a[i] * M.col(keys[i]);
      } else if (total_keys == 0) {
        o = p.bdec;
      }
      const auto k = static_cast<double>(group.targets.size());
      result.tokens += static_cast<long long>(group.targets.size());
      if (s.loss == Loss::squared) {
        double sum = k * o.squaredNorm() + k;
        for (const int x : group.targets) sum -= 2 * o[x];
        result.token_loss_sum += sum;
        if (with_gradient) {
          g = (2 * k) * o;
          for (const int x : group.targets) g[x] -= 2;
        }
      } else {
        const double top = o.maxCoeff();
        double z = 0;
        for (Eigen::Index w = 0; w < V; ++w) z += portable::exp(o[w] - top);
        const double lse = top + portable::log(z);
        double sum = k * lse;
        for (const int x : group.targets) sum -= o[x];
        result.token_loss_sum += sum;
        if (with_gradient) {
          for (Eigen::Index w = 0; w < V; ++w) g[w] = k * portable::exp(o[w] - lse);
          for (const int x : group.targets) g[x] -= 1;
        }
      }
      if (!with_gradient) continue;
      if (s.uniform_attention) {  // the same attention for every query: one update of dM per document, below
        if (output_gradient) g_sum += g;
        continue;
      }
      if (output_gradient) {
        dbdec += g;
        for (std::size_t i = 0; i < nk; ++i) dM.col(keys[i]) += a[i] * g;
      }
      if (attention_gradient && nk > 0) {
        double mean = 0;
        for (std::size_t i = 0; i < nk; ++i) {
          dA[i] = M.col(keys[i]).dot(g);
          mean += a[i] * dA[i];
        }
        for (std::size_t i = 0; i < nk; ++i) dB(keys[i], b) += a[i] * (dA[i] - mean);
      }
    }
    if (output_gradient && s.uniform_attention && used > 0) {
      dbdec += g_sum;
      if (total_keys > 0) {
        for (std::size_t i = 0; i < nk; ++i) dM.col(keys[i]) += a[i] * g_sum;
      }
    }
    for (const int token : keys) count[static_cast<std::size_t>(token)] = 0;
    for (std::size_t gi = 0; gi < used; ++gi) group_of[static_cast<std::size_t>(groups[gi].token)] = -1;
  }

  const double norm = normalisation.tokens_per_document > 0
                          ? normalisation.tokens_per_document * static_cast<double>(documents.size())
                          : static_cast<double>(result.tokens);
  const double inv = norm > 0 ? 1.0 / norm : 0.0;
  result.loss = result.token_loss_sum * inv + s.ridge_value * p.WV.squaredNorm();
  if (!with_gradient) return;

  // The gradient's storage is reused: every part zeroed at its shape (what Parameters::zeros, then zeroing E and
  // W^dec, gave).
  // Every part at its shape. The trained parts start at 0 (some are accumulated); the frozen ones are neither written
  // nor read below (their products are skipped) and mask_frozen zeroes them at the end, so each is zeroed once.
  Parameters& G = result.gradient;
  const bool train_E = trains_embedding(s), train_dec = trains_decoder(s);
  const bool train_K = !s.uniform_attention && s.train_key, train_Q = !s.uniform_attention && s.train_query;
  G.E.resize(s.d, s.num_inputs);
  G.WK.resize(s.d, s.d);
  G.WQ.resize(s.d, s.d);
  G.WV.resize(s.d, s.d);
  G.Wdec.resize(s.V, s.d);
  G.bdec.resize(s.V);
  if (train_E) G.E.setZero();
  if (train_K) G.WK.setZero();
  if (train_Q) G.WQ.setZero();
  if (s.train_value) G.WV.setZero();
  if (train_dec) {
    G.Wdec.setZero();
    G.bdec.setZero();
  }
  if (output_gradient) {  // (otherwise W^V, W^dec, b^dec and E are frozen: their gradients stay 0)
    dM *= inv;
    dbdec *= inv;
  }
  if (output_gradient && fast_output) {
    G.WV.topRows(V) = dM;
  } else if (output_gradient) {
    // M = W^dec W^V E.
    if (!s.one_hot_embedding) ws.dM_Et = dM.lazyProduct(p.E.transpose());
    const Eigen::MatrixXd& dM_Et = s.one_hot_embedding ? dM : ws.dM_Et;
    G.Wdec = dM_Et.lazyProduct(p.WV.transpose());
    G.WV = p.Wdec.transpose().lazyProduct(dM_Et);
    if (trains_embedding(s)) G.E += (p.Wdec.lazyProduct(p.WV)).transpose().lazyProduct(dM);
    G.bdec = dbdec;
  }
  if (attention_gradient) {
    dB *= inv / std::sqrt(static_cast<double>(s.d));
    // B = (W^K E)^T (W^Q E) / sqrt(d): d(W^K E) = (W^Q E) dB^T, d(W^Q E) = (W^K E) dB (dB already / sqrt(d)).
    if (lazy_logits) {
      // G.WK = W^Q dB^T and G.WQ = W^K dB over the computed pairs only, each column summed in ascending order of the
      // other index (the order of the dense product; the skipped terms are exact zeros).
      for (int b = 0; b < n_in; ++b) {
        const std::uint8_t* column = known.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(n_in);
        for (int c = 0; c < n_in; ++c) {
          if (column[c] == 0) continue;
          if (train_K) G.WK.col(c) += dB(c, b) * p.WQ.col(b);
          if (train_Q) G.WQ.col(b) += dB(c, b) * p.WK.col(c);
        }
      }
    } else if (s.one_hot_embedding) {
      G.WK = p.WQ.lazyProduct(dB.transpose());
      G.WQ = p.WK.lazyProduct(dB);
    } else {
      // KE and QE are still those of the logits above (the same p).
      ws.dKE = ws.QE.lazyProduct(dB.transpose());
      ws.dQE = ws.KE.lazyProduct(dB);
      G.WK = ws.dKE.lazyProduct(p.E.transpose());
      G.WQ = ws.dQE.lazyProduct(p.E.transpose());
      if (trains_embedding(s)) G.E += p.WK.transpose().lazyProduct(ws.dKE) + p.WQ.transpose().lazyProduct(ws.dQE);
    }
  }
  if (s.ridge_value > 0 && s.train_value) G.WV += (2 * s.ridge_value) * p.WV;
  mask_frozen(s, G);
}

void Sgd::step(const Structure& s, Parameters& p, const Parameters& gradient) {
  // theta + (-lr) g on the trainable parts, in place (a frozen part would add -lr * 0: unchanged). x + (-lr) g and
  // x - lr g are the same IEEE operation, so this is bit-identical to adding the scaled masked copy.
  if (trains_embedding(s)) p.E -= lr * gradient.E;
  if (!s.uniform_attention && s.train_key) p.WK -= lr * gradient.WK;
  if (!s.uniform_attention && s.train_query) p.WQ -= lr * gradient.WQ;
  if (s.train_value) p.WV -= lr * gradient.WV;
  if (trains_decoder(s)) {
    p.Wdec -= lr * gradient.Wdec;
    p.bdec -= lr * gradient.bdec;
  }
}

void Adam::step(const Structure& s, Parameters& p, const Parameters& gradient) {
  if (t == 0) {
    m = Parameters::zeros(s);
    m *= 0.0;
    v = m;
  }
  ++t;
  const Parameters& g = gradient;  // only the trainable parts are read (mask_frozen would zero the others)
  double c1 = 1, c2 = 1;
  for (long long i = 0; i < t; ++i) {
    c1 *= beta1;
    c2 *= beta2;
  }
  const double bc1 = 1 - c1, bc2 = 1 - c2;
  auto update = [&](auto& param, auto& mm, auto& vv, const auto& gg) {
    mm = beta1 * mm + (1 - beta1) * gg;
    vv = beta2 * vv + (1 - beta2) * gg.cwiseProduct(gg);
    param.array() -= lr * (mm.array() / bc1) / ((vv.array() / bc2).sqrt() + eps);
  };
  if (trains_embedding(s)) update(p.E, m.E, v.E, g.E);
  if (!s.uniform_attention && s.train_key) update(p.WK, m.WK, v.WK, g.WK);
  if (!s.uniform_attention && s.train_query) update(p.WQ, m.WQ, v.WQ, g.WQ);
  if (s.train_value) update(p.WV, m.WV, v.WV, g.WV);
  if (trains_decoder(s)) {
    update(p.Wdec, m.Wdec, v.Wdec, g.Wdec);
    update(p.bdec, m.bdec, v.bdec, g.bdec);
  }
}

}  // namespace dyncheck::sim::topic
