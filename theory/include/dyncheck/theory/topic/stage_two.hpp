// dyncheck/theory/topic/stage_two.hpp
//
// Stage 2 of the topic-structure paper (specs/topic.md §6) [derived]: W^V frozen at the block
// matrix c_d J + (c_s - c_d) blockones with c_diag = c_s and [MASK] column c_M, attention trained.
// By symmetry a word query of topic b gives logit alpha to its own word, beta to other words of
// its topic, 0 to other topics and delta to [MASK] keys; a [MASK] query gives 0 to words and
// delta_M to [MASK]. With N -> infinity the loss depends on (alpha, beta) only through
// E = (e^alpha + (v-1) e^beta)/v, the same- versus other-topic per-key attention ratio.
//
// For one theta (topic proportions of a document), with key mass nu_t per topic and [MASK] mass q:
//   word query of topic b: Z = sum_t nu_t (1 + (E-1)[t=b]) + q e^delta, m_t = nu_t(1+(E-1)[t=b])/Z,
//                          A_M = q e^delta / Z;
//   [MASK] query:          Z = sum_t nu_t + q e^{delta_M}, m_t = nu_t / Z, A_M = q e^{delta_M} / Z;
//   output o_w = kappa + Delta m_{t(w)}, Delta = c_s - c_d, kappa = c_d (1 - A_M) + c_M A_M;
//   squared loss: v sum_t (kappa + Delta m_t)^2 - 2 (kappa + Delta m_{t*}) + 1;
//   cross-entropy: -Delta m_{t*} + log(v sum_t e^{Delta m_t});
//   L(theta) = sum_{t*} theta_{t*} [p_c l(b = t*) + p_r/T sum_b l(b) + (1 - p_c - p_r) l(MASK)].
// (C): nu_t = theta_t, q = 0. (P): nu_t = a theta_t + r/T, q = p_m (1 - p_c - p_r).
// Templated on the scalar; exp and log through the scalar's own functions (portable::exp/log on double).
#pragma once

#include <dyncheck/portable/math.hpp>
#include <dyncheck/theory/numeric/scalar.hpp>
#include <dyncheck/theory/topic/stage_one.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

namespace dyncheck::theory::topic {

namespace detail {
template <class S>
S exp_of(const S& x) {
  if constexpr (std::is_same_v<S, double>) {
    return portable::exp(x);
  } else {
    return exp(x);  // Boost.Multiprecision's, found by argument-dependent lookup
  }
}
template <class S>
S log_of(const S& x) {
  if constexpr (std::is_same_v<S, double>) {
    return portable::log(x);
  } else {
    return log(x);
  }
}
}  // namespace detail

enum class StageTwoKeys { excluded /* (C) */, all /* (P) */ };
enum class StageTwoLoss { squared, cross_entropy };

template <class S>
struct StageTwoSetting {
  int T = 10, v = 10;
  S p_m = S(0.15), p_c = S(0.1), p_r = S(0.1);
  S c_s = S(0.1), c_d = S(0), c_M = S(0);  ///< the frozen W^V's block values
  StageTwoKeys keys = StageTwoKeys::excluded;
  StageTwoLoss loss = StageTwoLoss::squared;
};

/// The attention parameters: E (same/other-topic ratio), delta ([MASK] keys, word query), delta_M ([MASK] query).
template <class S>
struct StageTwoAttention {
  S E = S(1), delta = S(0), delta_M = S(0);
};

/// The per-token loss of a query whose attention masses are m (per topic) and A_M, target topic t_star.
template <class S>
S stage_two_token_loss(const StageTwoSetting<S>& s, const std::vector<S>& m, const S& A_M, int t_star) {
  const S Delta = s.c_s - s.c_d;
  if (s.loss == StageTwoLoss::squared) {
    const S kappa = s.c_d * (1 - A_M) + s.c_M * A_M;
    S sum(0);
    for (const S& mt : m) sum += (kappa + Delta * mt) * (kappa + Delta * mt);
    return S(s.v) * sum - 2 * (kappa + Delta * m[static_cast<std::size_t>(t_star)]) + 1;
  }
  S z(0);
  for (const S& mt : m) z += detail::exp_of(S(Delta * mt));
  return -Delta * m[static_cast<std::size_t>(t_star)] + detail::log_of(S(S(s.v) * z));
}

/// The squared-loss L(theta) in O(T): for a word query of topic b the masses are m_t = nu_t (1 + (E-1)[t=b]) / Z_b, so
/// sum_t m_t, sum_t m_t^2 and sum_t theta_t m_t are the all-topic sums corrected at t = b, and
/// sum_{t*} theta_{t*} l(b, t*) = v (T kappa^2 + 2 kappa Delta sum_t m_t + Delta^2 sum_t m_t^2) - 2 kappa - 2 Delta sum_t theta_t m_t + 1.
template <class S>
S squared_loss_linear(const StageTwoSetting<S>& s, const std::vector<S>& theta, const std::vector<S>& nu, const S& nu_sum,
                      const S& mask_word, const S& mask_mask, const S& E) {
  const int T = s.T;
  const S Delta = s.c_s - s.c_d, vv(s.v), TT(T);
  S nu2(0), theta_nu(0);
  for (int t = 0; t < T; ++t) {
    nu2 += nu[static_cast<std::size_t>(t)] * nu[static_cast<std::size_t>(t)];
    theta_nu += theta[static_cast<std::size_t>(t)] * nu[static_cast<std::size_t>(t)];
  }
  // Expected loss of a query with masses m (sums given) against a target drawn from theta.
  auto expected = [&](const S& Z, const S& mass_sum, const S& mass_sq, const S& theta_mass, const S& A_M) {
    const S kappa = s.c_d * (1 - A_M) + s.c_M * A_M;
    (void)Z;
    return vv * (TT * kappa * kappa + 2 * kappa * Delta * mass_sum + Delta * Delta * mass_sq) - 2 * kappa -
           2 * Delta * theta_mass + 1;
  };
  S random(0), correct(0);
  for (int b = 0; b < T; ++b) {
    const S nb = nu[static_cast<std::size_t>(b)], tb = theta[static_cast<std::size_t>(b)];
    const S Z = nu_sum + (E - 1) * nb + mask_word;
    const S sum = (nu_sum + (E - 1) * nb) / Z;
    const S sq = (nu2 + (E * E - 1) * nb * nb) / (Z * Z);
    const S th = (theta_nu + (E - 1) * tb * nb) / Z;
    const S A_M = mask_word / Z;
    random += expected(Z, sum, sq, th, A_M);
    if (tb != S(0)) {
      // The correct query has the target's topic: sum_{t*} theta_{t*} l(b = t*, t*), the term b = t* of each.
      const S kappa = s.c_d * (1 - A_M) + s.c_M * A_M;
      const S m_b = nb * E / Z;
      correct += tb * (vv * (TT * kappa * kappa + 2 * kappa * Delta * sum + Delta * Delta * sq) - 2 * (kappa + Delta * m_b) + 1);
    }
  }
  const S Zm = nu_sum + mask_mask;
  const S mask_loss = expected(Zm, nu_sum / Zm, nu2 / (Zm * Zm), theta_nu / Zm, mask_mask / Zm);
  return s.p_c * correct + s.p_r / TT * random + (1 - s.p_c - s.p_r) * mask_loss;
}

/// L(theta; E, delta, delta_M) as in the header comment.
template <class S>
S stage_two_loss(const StageTwoSetting<S>& s, const std::vector<S>& theta, const StageTwoAttention<S>& att) {
  const int T = s.T;
  if (static_cast<int>(theta.size()) != T) throw std::invalid_argument("stage_two_loss: theta must have T entries");
  const S a = s.keys == StageTwoKeys::all ? 1 - s.p_m + s.p_m * s.p_c : S(1);
  const S r = s.keys == StageTwoKeys::all ? s.p_m * s.p_r : S(0);
  const S q = s.keys == StageTwoKeys::all ? s.p_m * (1 - s.p_c - s.p_r) : S(0);
  std::vector<S> nu(static_cast<std::size_t>(T));
  S nu_sum(0);
  for (int t = 0; t < T; ++t) {
    nu[static_cast<std::size_t>(t)] = a * theta[static_cast<std::size_t>(t)] + r / S(T);
    nu_sum += nu[static_cast<std::size_t>(t)];
  }
  const S mask_word = q * detail::exp_of(att.delta);
  const S mask_mask = q * detail::exp_of(att.delta_M);
  if (s.loss == StageTwoLoss::squared) return squared_loss_linear(s, theta, nu, nu_sum, mask_word, mask_mask, att.E);
  std::vector<S> m(static_cast<std::size_t>(T));
  // Loss of a word query of topic b against every target topic: l[b][t*].
  std::vector<std::vector<S>> word(static_cast<std::size_t>(T), std::vector<S>(static_cast<std::size_t>(T)));
  for (int b = 0; b < T; ++b) {
    const S Z = nu_sum + (att.E - 1) * nu[static_cast<std::size_t>(b)] + mask_word;
    for (int t = 0; t < T; ++t) m[static_cast<std::size_t>(t)] = nu[static_cast<std::size_t>(t)] * (t == b ? att.E : S(1)) / Z;
    const S A_M = mask_word / Z;
    for (int t = 0; t < T; ++t) word[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)] = stage_two_token_loss(s, m, A_M, t);
  }
  const S Zm = nu_sum + mask_mask;
  for (int t = 0; t < T; ++t) m[static_cast<std::size_t>(t)] = nu[static_cast<std::size_t>(t)] / Zm;
  const S A_Mm = mask_mask / Zm;
  const S p_k = 1 - s.p_c - s.p_r;
  S L(0);
  for (int t = 0; t < T; ++t) {
    const S th = theta[static_cast<std::size_t>(t)];
    if (th == S(0)) continue;
    S random(0);
    for (int b = 0; b < T; ++b) random += word[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)];
    L += th * (s.p_c * word[static_cast<std::size_t>(t)][static_cast<std::size_t>(t)] + s.p_r / S(T) * random +
               p_k * stage_two_token_loss(s, m, A_Mm, t));
  }
  return L;
}

/// theta of a tau-subset document (by symmetry every subset gives the same loss): 1/tau on topics 0..tau-1.
template <class S>
std::vector<S> subset_theta(int T, int tau) {
  std::vector<S> theta(static_cast<std::size_t>(T), S(0));
  for (int t = 0; t < tau; ++t) theta[static_cast<std::size_t>(t)] = 1 / S(tau);
  return theta;
}

/// The average loss over a set of theta (a Monte-Carlo sample over the prior, common random numbers).
template <class S>
S stage_two_mean_loss(const StageTwoSetting<S>& s, const std::vector<std::vector<S>>& thetas,
                      const StageTwoAttention<S>& att) {
  S sum(0);
  for (const auto& theta : thetas) sum += stage_two_loss(s, theta, att);
  return sum / S(thetas.size());
}

/// The root of a derivative given by its sign on [log lo, log hi] (bisection in log E to the scalar's
/// precision), where `derivative(E)` is d/dE of a function unimodal in E. Returns hi if the
/// derivative is still negative there (the minimiser lies beyond: E* = infinity on this bracket).
template <class S>
S bisect_log_root(const std::function<S(const S&)>& derivative, S lo, S hi, int iterations) {
  S log_lo = detail::log_of(lo), log_hi = detail::log_of(hi);
  if (derivative(hi) < S(0)) return hi;
  if (derivative(lo) > S(0)) return lo;
  for (int i = 0; i < iterations; ++i) {
    const S mid = (log_lo + log_hi) / 2;
    if (derivative(detail::exp_of(mid)) < S(0)) {
      log_lo = mid;
    } else {
      log_hi = mid;
    }
  }
  return detail::exp_of(S((log_lo + log_hi) / 2));
}

/// The minimiser in E (delta, delta_M fixed) of the mean loss over `thetas`, by bisection on the sign of a
/// central difference d/d(log E) with step h = 2^(-digits/3) ~ eps^(1/3) (derivative error O(h^2) = O(eps^(2/3))).
template <class S>
S stage_two_minimiser(const StageTwoSetting<S>& s, const std::vector<std::vector<S>>& thetas, S delta = S(0),
                      S delta_M = S(0), S lo = S(1e-6), S hi = S(1e9)) {
  S h(1);
  for (int i = 0; i < std::numeric_limits<S>::digits / 3; ++i) h /= 2;  // exact: a power of two
  auto loss_at = [&](const S& E) { return stage_two_mean_loss(s, thetas, StageTwoAttention<S>{E, delta, delta_M}); };
  const std::function<S(const S&)> derivative = [&](const S& E) {
    return loss_at(E * detail::exp_of(h)) - loss_at(E * detail::exp_of(S(-h)));
  };
  // The derivative is accurate to ~eps^(2/3): bisecting further than 2/3 of the digits adds nothing.
  const int iterations = 2 * std::numeric_limits<S>::digits / 3 + 8;
  return bisect_log_root<S>(derivative, lo, hi, iterations);
}

/// The prior-free law ((C), N -> infinity, W^V = blockones / v): E* = 1 + T p_c / p_r.
template <class S>
S prior_free_law(int T, const S& p_c, const S& p_r) {
  return 1 + S(T) * p_c / p_r;
}

/// tau-subset documents, (C), N -> infinity, c_d = 0, c_s = c, squared loss:
/// E* = 1 + p_c tau / (c v (p_c + tau p_r / T) - p_c) when the denominator is > 0, else infinity.
template <class S>
S subset_law(int T, int v, int tau, const S& p_c, const S& p_r, const S& c) {
  const S denominator = c * S(v) * (p_c + S(tau) * p_r / S(T)) - p_c;
  if (!(denominator > S(0))) return std::numeric_limits<S>::infinity();
  return 1 + p_c * S(tau) / denominator;
}

/// How the random-word share of the masking is read in finite_n_subset_loss (the second is the authors' code:
/// a random id over V + 4 ids, whose 4 specials make a uniform-attention query).
enum class RandomToken { word, any_id };

/**
 * The exact finite-N stage-2 loss ((C) key set, tau-subset documents, W^V = c blockones, c_d = c_M = 0, squared
 * loss, same-word logit = same-topic logit, so only E matters), documents N ~ U{N_min..N_max} weighted by their
 * selected tokens (specs/topic.md §6 "Finite N, exact"). By symmetry the target's topic is topic 1 of S. Given N,
 * the keys number U ~ Bin(N-1, 1-p_m) and their topic counts are n ~ Mult(U, 1/tau); a query whose topic j is in S
 * puts masses m_i = n_i E^[i=j] / Z on the topics of S; the loss is v sum_i (c m_i)^2 - 2 c m_1 + 1 (1 when U = 0).
 * Query weights: j = 1: p_c + p_r/T; each j = 2..tau: p_r/T; a uniform query (a word of a topic outside S, or
 * [MASK]): (T - tau) p_r/T + 1 - p_c - p_r. tau in {1, 2, 3} (the sum over n costs O(U^(tau-1))). `length` as in
 * stage_one.hpp; with `infinite` the N -> infinity value (n/U = 1/tau) is returned instead.
 */
/// With `loss = cross_entropy` the per-query loss is -c m_1 + log(v (T - tau + sum_{i in S} e^{c m_i})) (the V word
/// logits; topics outside S get mass 0), and 1 is replaced by log V when U = 0 (all outputs 0).
template <class S>
std::vector<S> finite_n_subset_losses(int T, int v, int tau, const S& p_m, const S& p_c, const S& p_r, const S& c,
                                      const std::vector<S>& Es, int N_min, int N_max, RandomToken random = RandomToken::word,
                                      StageTwoLoss loss_kind = StageTwoLoss::squared) {
  if (tau < 1 || tau > 3 || tau > T) throw std::invalid_argument("finite_n_subset_loss: tau must be in {1, 2, 3} and <= T");
  if (N_min < 1 || N_max < N_min) throw std::invalid_argument("finite_n_subset_loss: need 1 <= N_min <= N_max");
  const S V(T * v);
  const S word_share = random == RandomToken::word ? S(1) : V / (V + 4);
  const S w_own = p_c + p_r * word_share / S(T), w_other = p_r * word_share / S(T);
  const S w_uniform = 1 - w_own - S(tau - 1) * w_other;
  const S vv(v);
  // Expected loss given the topic counts n (n[0]: the target's topic) for attention ratio E.
  auto expected_given_n = [&](const std::array<S, 3>& n, const S& E) {
    S total(0);
    for (int j = -1; j < tau; ++j) {  // j = -1: a uniform query
      S Z(0), sum(0);
      for (int i = 0; i < tau; ++i) Z += n[static_cast<std::size_t>(i)] * (i == j ? E : S(1));
      for (int i = 0; i < tau; ++i) {
        const S m = n[static_cast<std::size_t>(i)] * (i == j ? E : S(1)) / Z;
        sum += m * m;
      }
      const S m1 = n[0] * (j == 0 ? E : S(1)) / Z;
      S loss;
      if (loss_kind == StageTwoLoss::squared) {
        loss = vv * c * c * sum - 2 * c * m1 + 1;
      } else {
        S z = S(T - tau);
        for (int i = 0; i < tau; ++i) z += detail::exp_of(S(c * n[static_cast<std::size_t>(i)] * (i == j ? E : S(1)) / Z));
        loss = -c * m1 + detail::log_of(S(vv * z));
      }
      total += (j == -1 ? w_uniform : (j == 0 ? w_own : w_other)) * loss;
    }
    return total;
  };
  const S share = 1 / S(tau);
  std::vector<std::vector<S>> half;  // half[m] = Bin(m, 1/2), for tau = 3
  if (tau == 3) {
    for (int m = 0; m < N_max; ++m) half.push_back(binomial_pmf<S>(m, S(1) / 2));
  }
  const std::size_t K = Es.size();
  // lbar[u][k] = E[loss | U = u] at E = Es[k], u = 0..N_max - 1 (U = 0: output 0, loss 1, or log V under CE).
  const S empty = loss_kind == StageTwoLoss::squared ? S(1) : detail::log_of(V);
  std::vector<std::vector<S>> lbar(static_cast<std::size_t>(N_max), std::vector<S>(K, empty));
  for (int u = 1; u < N_max; ++u) {
    std::vector<S> total(K, S(0));
    if (tau == 1) {
      for (std::size_t k = 0; k < K; ++k) total[k] = expected_given_n({S(u), S(0), S(0)}, Es[k]);
    } else {
      const std::vector<S> first = binomial_pmf<S>(u, share);
      for (int n1 = 0; n1 <= u; ++n1) {
        if (tau == 2) {
          for (std::size_t k = 0; k < K; ++k) {
            total[k] += first[static_cast<std::size_t>(n1)] * expected_given_n({S(n1), S(u - n1), S(0)}, Es[k]);
          }
          continue;
        }
        const std::vector<S>& second = half[static_cast<std::size_t>(u - n1)];
        for (int n2 = 0; n2 <= u - n1; ++n2) {
          const S weight = first[static_cast<std::size_t>(n1)] * second[static_cast<std::size_t>(n2)];
          for (std::size_t k = 0; k < K; ++k) {
            total[k] += weight * expected_given_n({S(n1), S(n2), S(u - n1 - n2)}, Es[k]);
          }
        }
      }
    }
    lbar[static_cast<std::size_t>(u)] = total;
  }
  S weight_sum(0);
  std::vector<S> loss(K, S(0));
  for (int N = N_min; N <= N_max; ++N) {
    S none(1);
    for (int i = 0; i < N; ++i) none *= 1 - p_m;
    const S w = S(N) / (1 - none);
    const std::vector<S> pmf = binomial_pmf<S>(N - 1, 1 - p_m);
    weight_sum += w;
    for (int u = 0; u < N; ++u) {
      for (std::size_t k = 0; k < K; ++k) loss[k] += w * pmf[static_cast<std::size_t>(u)] * lbar[static_cast<std::size_t>(u)][k];
    }
  }
  for (S& l : loss) l /= weight_sum;
  return loss;
}

/// finite_n_subset_losses at one E.
template <class S>
S finite_n_subset_loss(int T, int v, int tau, const S& p_m, const S& p_c, const S& p_r, const S& c, const S& E,
                       int N_min, int N_max, RandomToken random = RandomToken::word,
                       StageTwoLoss loss_kind = StageTwoLoss::squared) {
  return finite_n_subset_losses<S>(T, v, tau, p_m, p_c, p_r, c, std::vector<S>{E}, N_min, N_max, random, loss_kind)[0];
}

/// The N -> infinity value of the same setting (n/U = 1/tau exactly), with the same query weights.
template <class S>
S infinite_n_subset_loss(int T, int v, int tau, const S& p_c, const S& p_r, const S& c, const S& E,
                         RandomToken random = RandomToken::word, StageTwoLoss loss_kind = StageTwoLoss::squared) {
  StageTwoSetting<S> s;
  s.loss = loss_kind;
  s.T = T;
  s.v = v;
  s.p_c = p_c;
  const S V(T * v);
  s.p_r = random == RandomToken::word ? p_r : p_r * V / (V + 4);
  s.c_s = c;
  s.c_d = 0;
  s.c_M = 0;
  // With the code's random id, the share p_r 4/(V+4) of special-id queries attends uniformly, like [MASK]:
  // stage_two_loss's [MASK] weight 1 - p_c - p_r (with the reduced p_r) already counts it.
  return stage_two_loss(s, subset_theta<S>(T, tau), StageTwoAttention<S>{E, S(0), S(0)});
}

}  // namespace dyncheck::theory::topic
