#pragma once
// Shared pieces of the multihead claims (specs/multihead.md): the instance parameters, the
// teacher drawn from the master seed, the cost refusal of enumerations a budget cannot afford,
// and entry-wise matrix comparisons reported by their worst entry.

#include <fmt/format.h>

#include <Eigen/Core>
#include <Eigen/SVD>
#include <cmath>
#include <string>
#include <vector>

#include "dyncheck/checks/claim.hpp"
#include "dyncheck/checks/measured.hpp"
#include "dyncheck/checks/param_set.hpp"
#include "dyncheck/checks/params.hpp"
#include "dyncheck/sim/multihead/layer.hpp"
#include "dyncheck/sim/random/rng.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/theory/multihead/layer.hpp"

namespace dyncheck::checks::multihead {

/// k, d, m of an instance, with per-claim ranges.
struct Shape {
  Shape(ParamSet* owner, long long k_default, Range k_range, long long d_default, Range d_range, long long m_default,
        Range m_range)
      : k{owner, "k", k_default, k_range, "tokens per input (rows of X)"},
        d{owner, "d", d_default, d_range, "token dimension (columns of X; Theta_i, W_i are d x d)"},
        m{owner, "m", m_default, m_range, "number of heads"} {}
  Int k, d, m;
};

/// Seconds one enumeration pass over {±1}^{k×d} costs, per input: measured 1.9 µs (k = d = 4,
/// m = 2) and 2.7 µs (k = 5, d = 3, m = 3) in double on the shared machine, 214 µs in 50 digits
/// (k = d = 3, m = 2); modelled as ops × 4 ns (double) or ops × 0.7 µs (50 digits) with
/// ops = m (k²d + kd² + 10k²) + kd² (the 10k² stands for the k² exponentials).
inline double enumeration_seconds(long long k, long long d, long long m, double passes, bool fifty_digits) {
  const double ops = static_cast<double>(m * (k * k * d + k * d * d + 10 * k * k) + k * d * d);
  const double per_input = ops * (fifty_digits ? 0.7e-6 : 4e-9);
  return passes * per_input * std::ldexp(1.0, static_cast<int>(k * d));
}

/// The seconds a claim may spend on enumeration at a budget: smoke 1, ci 8, full 600.
inline double enumeration_allowance(const Budget& budget) { return budget.pick(1.0, 8.0, 600.0); }

/// Throws ParamError (exit 2) naming k·d when the enumeration would not fit the budget.
inline void refuse_enumeration(const Budget& budget, long long k, long long d, long long m, double passes,
                               bool fifty_digits) {
  if (k * d > 26) throw ParamError("k", fmt::format("k*d = {} > 26: the enumeration of 2^(k*d) inputs is refused", k * d));
  const double seconds = enumeration_seconds(k, d, m, passes, fifty_digits);
  const double allowance = enumeration_allowance(budget);
  if (seconds > allowance) {
    throw ParamError("k", fmt::format("k*d = {}: enumerating 2^{} inputs ({} passes{}) takes about {:.3g} s, more than "
                                      "the {:g} s this budget allows; lower k or d (or m)",
                                      k * d, k * d, passes, fifty_digits ? ", 50 digits" : "", seconds, allowance));
  }
}

/// The teacher of an instance: Θ_i = theta_scale · N(0, 1), W_i = w_scale · N(0, 1) entries, from the
/// stream "<claim id>/instance" (draw order: Θ_1, W_1, Θ_2, W_2, ..., column-major).
inline sim::multihead::Layer draw_teacher(const RunContext& context, long long d, long long m, double theta_scale,
                                          double w_scale, const std::string& stream = "instance") {
  sim::Rng rng = sim::derive_stream(context.seed, context.claim_id + "/" + stream, 0);
  sim::multihead::Layer layer;
  for (long long i = 0; i < m; ++i) {
    Eigen::MatrixXd theta(d, d), w(d, d);
    for (Eigen::Index j = 0; j < theta.size(); ++j) theta.data()[j] = theta_scale * sim::standard_normal(rng);
    for (Eigen::Index j = 0; j < w.size(); ++j) w.data()[j] = w_scale * sim::standard_normal(rng);
    layer.theta.push_back(theta);
    layer.w.push_back(w);
  }
  return layer;
}

/// Conditioning of Σ_i W_i (spec B.5: "make Σ W_i nearly singular to stress the phase-1 assumption"): when
/// ratio > 0, the last W_m is shifted so that the smallest singular value of Σ_i W_i becomes ratio × the largest
/// (W_m += U diag(σ' − σ) Vᵀ with σ'_min = ratio σ_max, the others unchanged); ratio = 0 leaves the draw as is.
inline void condition_w_sum(sim::multihead::Layer& layer, double ratio) {
  if (ratio <= 0) return;
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(layer.w.front().rows(), layer.w.front().cols());
  for (const Eigen::MatrixXd& w : layer.w) sum += w;
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(sum, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::VectorXd change = Eigen::VectorXd::Zero(sum.cols());
  const Eigen::Index last = sum.cols() - 1;
  change[last] = ratio * svd.singularValues()[0] - svd.singularValues()[last];
  layer.w.back() += svd.matrixU() * change.asDiagonal() * svd.matrixV().transpose();
}

/// The same teacher as theory heads in the scalar S (exact conversion from double).
template <class S>
theory::multihead::Heads<S> to_heads(const sim::multihead::Layer& layer) {
  theory::multihead::Heads<S> heads;
  for (const Eigen::MatrixXd& t : layer.theta) heads.theta.push_back(t.cast<S>());
  for (const Eigen::MatrixXd& w : layer.w) heads.w.push_back(w.cast<S>());
  return heads;
}

/// argmax_i |measured_i − theory_i| / tolerance_i (first on ties; NaN is reported as the worst).
inline Eigen::Index worst_entry(const Eigen::MatrixXd& theory, const Eigen::MatrixXd& measured,
                                const Eigen::MatrixXd& tolerance) {
  Eigen::Index worst = 0;
  double worst_ratio = -1.0;
  for (Eigen::Index i = 0; i < theory.size(); ++i) {
    const double ratio = std::abs(measured.data()[i] - theory.data()[i]) / tolerance.data()[i];
    if (!(ratio <= worst_ratio)) {
      worst_ratio = ratio;
      worst = i;
      if (std::isnan(ratio)) break;
    }
  }
  return worst;
}

/// A deterministic entry-wise comparison of two matrices, reported by the worst entry; the
/// tolerance of entry i is theory_error + measured_error (both as matrices or scalars broadcast).
inline Comparison compare_matrices(const std::string& quantity, const Eigen::MatrixXd& theory, double theory_error,
                                   const std::string& theory_reason, const Eigen::MatrixXd& measured,
                                   double measured_error, const std::string& measured_reason, const Bias& bias,
                                   const Resolution& resolution) {
  const Eigen::MatrixXd tolerance =
      Eigen::MatrixXd::Constant(theory.rows(), theory.cols(), theory_error + measured_error + bias.value);
  const Eigen::Index w = worst_entry(theory, measured, tolerance);
  const Eigen::Index rows = theory.rows();
  const std::string where =
      theory.size() > 1 ? fmt::format(" (worst of {} entries: ({}, {}))", theory.size(), w % rows, w / rows) : "";
  return checks::compare(quantity + where, {theory.data()[w], theory_error, theory_reason},
                         measured_exactly(measured.data()[w], measured_error, measured_reason), bias, resolution);
}

}  // namespace dyncheck::checks::multihead
