// dyncheck/theory/topic/stage_one.hpp
//
// Stage 1 of the topic-structure paper (specs/topic.md §1, §4, §5) [derived]: with uniform
// attention the value matrix solves a ridge regression, W* = C^T (S + lambda I)^{-1} with
// S = E[xbar xbar^T] (D x D, D = V + 1: the V words and [MASK]) and C = E[xbar e_x^T] (D x V), where
// xbar is the mean one-hot vector of the query's keys and x the query's original word. Two
// independent routes to W*:
//   - closed forms: the block values c_diag (diagonal), c_s (same topic, other word), c_d (other
//     topic) and c_M ([MASK] column) from the spectrum of E[mu mu^T] (rho_1 = 1/V on 1_V,
//     rho_0 = (E theta_i^2 - E theta_i theta_j)/v on the topic contrasts, 0 elsewhere);
//   - the direct solve: S and C assembled entry by entry from the moments of the document law and
//     the masking, then an LU solve of the D x D system.
// Key sets: (C) keys are the positions the mask did not select; (P) every position is a key.
// Document lengths: N -> infinity (xbar equals its expectation), or N ~ U{N_min..N_max} with a
// query chosen uniformly among the selected tokens, i.e. documents weighted by
// w_N ∝ p_m N / (1 - (1 - p_m)^N) (the authors' code redraws an empty mask). Given that a token is
// selected the other N - 1 positions are selected independently with probability p_m.
// Everything is templated on the scalar (double, mp50, mp100); no libm call on double.
#pragma once

#include <dyncheck/portable/math.hpp>
#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/numeric/scalar.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace dyncheck::theory::topic {

/// Second moments of theta: E theta_i^2 (same) and E theta_i theta_j, i != j (cross).
template <class S>
struct ThetaMoments {
  S same, cross;
};

/// theta ~ Dir(alpha 1_T): E theta_i^2 = (alpha + 1) / (T (T alpha + 1)), E theta_i theta_j = alpha / (T (T alpha + 1)).
template <class S>
ThetaMoments<S> dirichlet_moments(int T, const S& alpha) {
  const S t(T);
  return {(alpha + 1) / (t * (t * alpha + 1)), alpha / (t * (t * alpha + 1))};
}

/// theta = 1_S / tau for a uniform tau-subset S: E theta_i^2 = 1/(tau T), E theta_i theta_j = (tau-1)/(tau T (T-1)).
template <class S>
ThetaMoments<S> subset_moments(int T, int tau) {
  const S t(T), k(tau);
  return {1 / (k * t), T > 1 ? (k - 1) / (k * t * (t - 1)) : S(0)};
}

/// rho_0 = (E theta_i^2 - E theta_i theta_j) / v, the eigenvalue of E[mu mu^T] on the topic contrasts.
template <class S>
S rho_topic(const ThetaMoments<S>& m, int v) {
  return (m.same - m.cross) / S(v);
}

/// The key fractions of the masking: a (correct words), r (random tokens), q ([MASK]); a + r + q = 1.
template <class S>
struct MaskFractions {
  S a, r, q;
};

template <class S>
MaskFractions<S> mask_fractions(const S& p_m, const S& p_c, const S& p_r) {
  return {1 - p_m + p_m * p_c, p_m * p_r, p_m * (1 - p_c - p_r)};
}

/// The length statistics of a document law N ~ U{N_min..N_max} seen from a selected token:
/// weights w_N ∝ N / (1 - (1 - p_m)^N), and for (C) U ~ Bin(N - 1, 1 - p_m) unselected keys.
template <class S>
struct LengthStatistics {
  S keys_present;      ///< pi = E_w P(U >= 1)
  S inverse_keys;      ///< eta~ = E_w E[1/U ; U >= 1]
  S inverse_N;         ///< E_w 1/N
  S inverse_N2;        ///< E_w 1/N^2
  S pairs_over_N2;     ///< E_w (N-1)/N^2
  S triples_over_N2;   ///< E_w (N-1)(N-2)/N^2
};

/// How documents are weighted in LengthStatistics (the "unweighted" form is a mutant: each document
/// counted once, whatever its number of selected tokens).
enum class LengthWeighting { per_selected_token, per_document };

/// \f$ \binom{n}{k} p^k (1-p)^{n-k} \f$ for k = 0..n, by the ratio recursion from the mode outward and one
/// normalisation (no underflow of the mode for any n; tails below the scalar's range come out 0).
template <class S>
std::vector<S> binomial_pmf(int n, const S& p) {
  std::vector<S> pmf(static_cast<std::size_t>(n) + 1, S(0));
  if (p == S(0)) {
    pmf[0] = 1;
    return pmf;
  }
  if (p == S(1)) {
    pmf[static_cast<std::size_t>(n)] = 1;
    return pmf;
  }
  const S ratio = p / (1 - p);
  // The mode: floor((n + 1) p), clamped to [0, n].
  int mode = static_cast<int>(to_double(S(n + 1) * p));
  mode = std::clamp(mode, 0, n);
  pmf[static_cast<std::size_t>(mode)] = 1;
  for (int k = mode; k < n; ++k) {
    pmf[static_cast<std::size_t>(k) + 1] = pmf[static_cast<std::size_t>(k)] * S(n - k) / S(k + 1) * ratio;
  }
  for (int k = mode; k > 0; --k) {
    pmf[static_cast<std::size_t>(k) - 1] = pmf[static_cast<std::size_t>(k)] * S(k) / S(n - k + 1) / ratio;
  }
  S total(0);
  for (const S& x : pmf) total += x;
  for (S& x : pmf) x /= total;
  return pmf;
}

template <class S>
LengthStatistics<S> length_statistics(int N_min, int N_max, const S& p_m,
                                      LengthWeighting weighting = LengthWeighting::per_selected_token) {
  if (N_min < 1 || N_max < N_min) throw std::invalid_argument("length_statistics: need 1 <= N_min <= N_max");
  LengthStatistics<S> out{S(0), S(0), S(0), S(0), S(0), S(0)};
  S weight_sum(0);
  for (int N = N_min; N <= N_max; ++N) {
    const S n(N);
    S none(1);  // (1 - p_m)^N by repeated multiplication (exact up to N roundings)
    for (int i = 0; i < N; ++i) none *= 1 - p_m;
    const S w = weighting == LengthWeighting::per_selected_token ? n / (1 - none) : S(1);
    const std::vector<S> pmf = binomial_pmf<S>(N - 1, 1 - p_m);
    S present(0), inverse(0);
    for (int u = 1; u <= N - 1; ++u) {
      present += pmf[static_cast<std::size_t>(u)];
      inverse += pmf[static_cast<std::size_t>(u)] / S(u);
    }
    weight_sum += w;
    out.keys_present += w * present;
    out.inverse_keys += w * inverse;
    out.inverse_N += w / n;
    out.inverse_N2 += w / (n * n);
    out.pairs_over_N2 += w * (n - 1) / (n * n);
    out.triples_over_N2 += w * (n - 1) * (n - 2) / (n * n);
  }
  out.keys_present /= weight_sum;
  out.inverse_keys /= weight_sum;
  out.inverse_N /= weight_sum;
  out.inverse_N2 /= weight_sum;
  out.pairs_over_N2 /= weight_sum;
  out.triples_over_N2 /= weight_sum;
  return out;
}

/// The block values of a stage-1 optimum.
template <class S>
struct BlockValues {
  S diag, same, diff, mask;
};

/**
 * (C) key set, closed form: W* = sum_k g_k P_k with P_1 = J/V, P_0 = blockones/v - J/V and
 * \f$ g_k = \pi\rho_k / (\lambda + \tilde\eta/V + (\pi - \tilde\eta)\rho_k) \f$ (N -> infinity: pi = 1, eta~ = 0).
 * c_s = c_diag = (g_1/T + (1 - 1/T) g_0)/v, c_d = (g_1 - g_0)/(v T), c_M = 0.
 * `length` null: N -> infinity.
 */
template <class S>
BlockValues<S> excluded_keys_closed_form(int T, int v, const S& rho_0, const S& lambda,
                                         const LengthStatistics<S>* length = nullptr) {
  const S V(T * v);
  const S rho_1 = 1 / V;
  const S pi = length ? length->keys_present : S(1);
  const S eta = length ? length->inverse_keys : S(0);
  const S g1 = pi * rho_1 / (lambda + eta / V + (pi - eta) * rho_1);
  const S g0 = pi * rho_0 / (lambda + eta / V + (pi - eta) * rho_0);
  const S t(T);
  const S same = (g1 / t + (1 - 1 / t) * g0) / S(v);
  return {same, same, (g1 - g0) / (S(v) * t), S(0)};
}

/**
 * (P) key set, N -> infinity, lambda -> 0 (minimum-norm) closed form, for any prior:
 * kappa = 1/((1-q)^2 + V q^2), y = (kappa (1-q) - 1/a)/V, c_s = c_diag = 1/(a v) + y, c_d = y, c_M = q kappa.
 */
template <class S>
BlockValues<S> all_keys_min_norm_closed_form(int T, int v, const MaskFractions<S>& f) {
  const S V(T * v);
  const S kappa = 1 / ((1 - f.q) * (1 - f.q) + V * f.q * f.q);
  const S y = (kappa * (1 - f.q) - 1 / f.a) / V;
  const S same = 1 / (f.a * S(v)) + y;
  return {same, same, y, f.q * kappa};
}

/// The stage-1 normal equations: S (D x D) and C (D x V), D = V + 1 ([MASK] is index V).
template <class S>
struct NormalEquations {
  Matrix<S> S_matrix;
  Matrix<S> C_matrix;
};

/// E[mu mu^T] = Phi M_2 Phi^T entry by entry: same topic (same + ... ) / v^2.
template <class S>
Matrix<S> second_moment_mu(int T, int v, const ThetaMoments<S>& m) {
  const int V = T * v;
  Matrix<S> M(V, V);
  const S vv = S(v) * S(v);
  for (int i = 0; i < V; ++i) {
    for (int j = 0; j < V; ++j) M(i, j) = (i / v == j / v ? m.same : m.cross) / vv;
  }
  return M;
}

/// (C): S = pi_eta... assembled from E[xbar xbar^T | U] = diag(mu)/U + (1 - 1/U) mu mu^T averaged
/// over theta (E diag(mu) = I/V) and over U >= 1 (xbar = 0 when U = 0); C = pi E[mu mu^T]. The
/// [MASK] row and column are zero (a masked position is never a key). `length` null: N -> infinity.
template <class S>
NormalEquations<S> excluded_keys_equations(int T, int v, const ThetaMoments<S>& m,
                                           const LengthStatistics<S>* length = nullptr) {
  const int V = T * v, D = V + 1;
  const Matrix<S> M = second_moment_mu(T, v, m);
  const S pi = length ? length->keys_present : S(1);
  const S eta = length ? length->inverse_keys : S(0);
  NormalEquations<S> eq{Matrix<S>::Zero(D, D), Matrix<S>::Zero(D, V)};
  for (int i = 0; i < V; ++i) {
    for (int j = 0; j < V; ++j) {
      eq.S_matrix(i, j) = (pi - eta) * M(i, j) + (i == j ? eta / S(V) : S(0));
      eq.C_matrix(i, j) = pi * M(i, j);
    }
  }
  return eq;
}

/// (P): the key law nu = [a mu + r/V 1; q] and the query's own token law rho = [p_c mu + p_r/V 1; 1 - p_c - p_r].
/// N -> infinity: S = E[nu nu^T], C = E[nu mu^T]. Finite N (specs/topic.md §5):
///   C = E_w[1/N] E[p_c Dg(mu) + p_r/V 1 mu^T (+) (1 - p_c - p_r) e_M mu^T] + E_w[(N-1)/N] E[nu mu^T],
///   S = E_w[1/N^2] diag(E rho) + E_w[(N-1)/N^2] (E[rho nu^T] + E[nu rho^T] + diag(E nu)) + E_w[(N-1)(N-2)/N^2] E[nu nu^T].
/// `own_token_law = false` (a mutant: the finite-N self term missing) draws the query's own position from the key
/// law nu like every other position, i.e. ignores that it is selected and that its kept word is the target.
template <class S>
NormalEquations<S> all_keys_equations(int T, int v, const ThetaMoments<S>& m, const S& p_m, const S& p_c,
                                      const S& p_r, const LengthStatistics<S>* length = nullptr,
                                      bool own_token_law = true) {
  const int V = T * v, D = V + 1;
  const MaskFractions<S> f = mask_fractions(p_m, p_c, p_r);
  const Matrix<S> M = second_moment_mu(T, v, m);
  const S Vs(V);
  const S mean_mu = 1 / Vs;  // E mu_i
  // nu = A mu + c with A = [a I; 0], c = [r/V 1; q]; rho = A' mu + c' with A' = [p_c I; 0], c' = [p_r/V 1; 1 - p_c - p_r].
  auto c_of = [&](int i, const S& word, const S& special) { return i < V ? word : special; };
  auto A_of = [&](int i, const S& coefficient) { return i < V ? coefficient : S(0); };
  // The query's own token: kept (p_c), random (p_r) or [MASK] (pk); with own_token_law = false, nu's a, r, q.
  const S own_c = own_token_law ? p_c : f.a, own_r = own_token_law ? p_r : f.r;
  const S pk = own_token_law ? 1 - p_c - p_r : f.q;
  // E[(A1 mu + c1)(A2 mu + c2)^T]_{ij} = A1_i A2_j M_ij + A1_i E mu_i c2_j + c1_i E mu_j A2_j + c1_i c2_j.
  auto cross_moment = [&](int i, int j, const S& a1, const S& r1, const S& q1, const S& a2, const S& r2,
                          const S& q2) {
    const S A1 = A_of(i, a1), A2 = A_of(j, a2);
    const S c1 = c_of(i, r1 / Vs, q1), c2 = c_of(j, r2 / Vs, q2);
    const S Mij = (i < V && j < V) ? M(i, j) : S(0);
    return A1 * A2 * Mij + A1 * mean_mu * c2 + c1 * mean_mu * A2 + c1 * c2;
  };
  NormalEquations<S> eq{Matrix<S>::Zero(D, D), Matrix<S>::Zero(D, V)};
  const S w_inv_N = length ? length->inverse_N : S(0);
  const S w_pairs_N = length ? S(1) - length->inverse_N : S(1);  // E_w (N-1)/N
  const S w_inv_N2 = length ? length->inverse_N2 : S(0);
  const S w_pairs = length ? length->pairs_over_N2 : S(0);
  const S w_triples = length ? length->triples_over_N2 : S(1);
  for (int i = 0; i < D; ++i) {
    const S E_nu_i = i < V ? f.a * mean_mu + f.r / Vs : f.q;
    const S E_rho_i = i < V ? own_c * mean_mu + own_r / Vs : pk;
    for (int j = 0; j < D; ++j) {
      const S nunu = cross_moment(i, j, f.a, f.r, f.q, f.a, f.r, f.q);
      const S rhonu = cross_moment(i, j, own_c, own_r, pk, f.a, f.r, f.q);
      const S nurho = cross_moment(i, j, f.a, f.r, f.q, own_c, own_r, pk);
      S value = w_triples * nunu;
      if (length) {
        value += w_pairs * (rhonu + nurho);
        if (i == j) value += w_inv_N2 * E_rho_i + w_pairs * E_nu_i;
      }
      eq.S_matrix(i, j) = value;
    }
    for (int j = 0; j < V; ++j) {
      // E[nu_i mu_j] = A_i M_ij + c_i E mu_j.
      const S nu_mu = (i < V ? f.a * M(i, j) + f.r / Vs * mean_mu : f.q * mean_mu);
      S value = w_pairs_N * nu_mu;
      if (length) {
        // E[own_i e_x,j]: a kept own token is the target word itself (p_c delta_ij E mu_i = p_c/V on the diagonal);
        // without the own-token law the own position is an independent key: E[nu_i mu_j].
        const S self = own_token_law ? (i < V ? (i == j ? p_c / Vs : S(0)) + p_r / Vs * mean_mu : pk * mean_mu) : nu_mu;
        value += w_inv_N * self;
      }
      eq.C_matrix(i, j) = value;
    }
  }
  return eq;
}

/// W* = C^T (S + lambda I)^{-1} (V x D), by a partially pivoted LU of the symmetric D x D system.
template <class S>
Matrix<S> ridge_solution(const NormalEquations<S>& eq, const S& lambda) {
  const Eigen::Index D = eq.S_matrix.rows();
  const Matrix<S> system = eq.S_matrix + lambda * Matrix<S>::Identity(D, D);
  const Matrix<S> X = system.partialPivLu().solve(eq.C_matrix);  // D x V = (S + lambda)^{-1} C
  return X.transpose();
}

/// The first `rows` rows of W* = C^T (S + lambda I)^{-1} (rows x D): only those right-hand sides are solved.
template <class S>
Matrix<S> ridge_solution_rows(const NormalEquations<S>& eq, const S& lambda, Eigen::Index rows) {
  const Eigen::Index D = eq.S_matrix.rows();
  const Matrix<S> system = eq.S_matrix + lambda * Matrix<S>::Identity(D, D);
  const Matrix<S> X = system.partialPivLu().solve(eq.C_matrix.leftCols(rows));
  return X.transpose();
}

/// Block means of a V x D stage-1 matrix (or of its first rows, when W has fewer than V rows) and the largest deviation of an entry from its block's mean.
template <class S>
struct BlockSummary {
  BlockValues<S> mean;
  S spread;  ///< max over entries of |entry - its block's mean|
};

template <class S>
BlockSummary<S> block_summary(const Matrix<S>& W, int T, int v) {
  const int V = T * v;
  const int rows = static_cast<int>(W.rows());
  S sums[4] = {S(0), S(0), S(0), S(0)};
  long long counts[4] = {0, 0, 0, 0};
  auto kind = [&](int i, int j) { return j == V ? 3 : (i == j ? 0 : (i / v == j / v ? 1 : 2)); };
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j <= V; ++j) {
      sums[kind(i, j)] += W(i, j);
      ++counts[kind(i, j)];
    }
  }
  S means[4];
  for (int k = 0; k < 4; ++k) means[k] = counts[k] > 0 ? sums[k] / S(counts[k]) : S(0);
  S spread(0);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j <= V; ++j) {
      using std::abs;
      const S deviation = abs(W(i, j) - means[kind(i, j)]);
      if (deviation > spread) spread = deviation;
    }
  }
  return {{means[0], means[1], means[2], means[3]}, spread};
}


/**
 * Cross-entropy stage 1 (specs/topic.md §9 C9), key set (C), N -> infinity, tau-subset documents (theta uniform on a
 * uniform tau-subset of the T topics), uniform attention, W^dec = [I_V 0], ridge lambda ||W^V||_F^2.
 * The output is o = W mu with mu = theta_{t(j)}/v on word j; for a block-symmetric W (c_diag, c_s, c_d, c_M)
 * o_w = c_d + D theta_{t(w)} with the contrast D = c_diag/v + (1 - 1/v) c_s - c_d, and the CE loss per token is
 *   l(D) = -D/tau + log(v (tau e^(D/tau) + T - tau))     (c_d cancels: softmax is shift invariant),
 * the same for every tau-subset and every target in it. For a given D the smallest ||W||^2 = V (c_diag^2 + (v-1) c_s^2
 * + (V-v) c_d^2) is v (V - v) D^2, at c_diag = c_s = D (V - v)/V and c_d = -D v/V (Lagrange); c_M = 0 ((C): no [MASK]
 * keys). J is strictly convex in W and invariant under the topic and within-topic word permutations, so its unique
 * minimiser is block-symmetric, and D* is the root of the increasing function
 *   F(D) = -1/tau + e^(D/tau)/(tau e^(D/tau) + T - tau) + 2 lambda v (V - v) D,
 * F(0) = 1/T - 1/tau < 0 for tau < T, F(D) >= 1/T - 1/tau + 2 lambda v (V - v) D, so D* lies in
 * [0, (1/tau - 1/T)/(2 lambda v (V - v))]: bisection to the scalar's resolution (`iterations` halvings).
 */
template <class S>
S cross_entropy_subset_contrast(int T, int v, int tau, const S& lambda, int iterations) {
  if (T < 2 || v < 1 || tau < 1 || tau >= T || !(lambda > 0)) {
    throw std::invalid_argument("cross_entropy_subset_contrast: need T >= 2, v >= 1, 1 <= tau < T, lambda > 0");
  }
  const S t(tau), TT(T), V(T * v), vv(v);
  const S ridge = 2 * lambda * vv * (V - vv);
  auto F = [&](const S& D) {
    S e;
    if constexpr (std::is_same_v<S, double>) {
      e = portable::exp(D / t);
    } else {
      e = exp(D / t);
    }
    return -1 / t + e / (t * e + TT - t) + ridge * D;
  };
  S lo(0), hi = (1 / t - 1 / TT) / ridge;
  for (int i = 0; i < iterations; ++i) {
    const S mid = (lo + hi) / 2;
    if (F(mid) < 0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

/// The block values of the cross-entropy stage-1 optimum above from its contrast D*.
template <class S>
BlockValues<S> cross_entropy_subset_block_values(int T, int v, const S& D) {
  const S V(T * v), vv(v);
  const S same = D * (V - vv) / V;
  return {same, same, -D * vv / V, S(0)};
}

}  // namespace dyncheck::theory::topic
