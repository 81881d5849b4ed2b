// dyncheck/theory/joma/linear_activation_erf.hpp
//
// Closed-form solution of the linear-activation JoMA dynamics with exp attention under a
// stationary back-propagated gradient (specs/joma.md §3, Theorem 2, "Exact closed form" [derived]).
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>

#include <boost/math/constants/constants.hpp>
#include <boost/math/special_functions/erf.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::theory::joma {

namespace erf_detail {
// The error function and its inverses for S = double in CPU-independent bits (issue #10 §1):
// Boost.Math's double erf/erf_inv call glibc's exp/log, whose last bits depend on the CPU. erf and
// erfc are portable::erf/erfc; the inverses are evaluated in mp50 (software arithmetic) and
// rounded. Other scalar types use Boost.Math as before.
template <class S>
S erf(const S& x) {
  if constexpr (std::is_same_v<S, double>) return portable::erf(x);
  else return boost::math::erf(x);  // portability-guard: S is not double (software arithmetic)
}
template <class S>
S erfc(const S& x) {
  if constexpr (std::is_same_v<S, double>) return portable::erfc(x);
  else return boost::math::erfc(x);  // portability-guard: S is not double (software arithmetic)
}
template <class S>
S erf_inv(const S& x) {
  if constexpr (std::is_same_v<S, double>) return static_cast<double>(boost::math::erf_inv(mp50(x)));  // portability-guard: in mp50
  else return boost::math::erf_inv(x);  // portability-guard: S is not double (software arithmetic)
}
template <class S>
S erfc_inv(const S& x) {
  if constexpr (std::is_same_v<S, double>) return static_cast<double>(boost::math::erfc_inv(mp50(x)));  // portability-guard: in mp50
  else return boost::math::erfc_inv(x);  // portability-guard: S is not double (software arithmetic)
}
}  // namespace erf_detail

/// Gradient flow \f$\dot v_{kl} = \eta_w\Delta_{lk}e^{\zeta_l}\f$, \f$\dot\zeta_l = \kappa\eta_w
/// e^{\zeta_l}\sum_k v_{kl}\Delta_{lk}\f$ (\f$\zeta = z/T\f$, \f$\kappa = \eta_z/(\eta_w T^2)\f$).
/// One clock per token, \f$\dot\tau_l = \eta_w e^{\zeta_l}\f$, gives \f$v_{kl} = v_{kl}(0) + \Delta_{lk}\tau_l\f$,
/// \f$\zeta_l(\tau) = \zeta_l(0) + \kappa(\beta_l\tau + a_l\tau^2/2)\f$ with \f$a_l = \|\Delta_{l\cdot}\|^2\f$,
/// \f$\beta_l = \sum_k v_{kl}(0)\Delta_{lk}\f$, and
/// \f[ \eta_w t = e^{-\zeta_l(0) + \kappa\beta_l^2/(2a_l)}\sqrt{\tfrac{\pi}{2\kappa a_l}}
///     \Bigl[\mathrm{erf}\bigl(\sqrt{\tfrac{\kappa}{2a_l}}(a_l\tau + \beta_l)\bigr) - \mathrm{erf}\bigl(\sqrt{\tfrac{\kappa}{2a_l}}\beta_l\bigr)\Bigr]. \f]
/// Tokens with \f$a_l = 0\f$ keep \f$\zeta_l\f$ and run the clock \f$\tau_l = \eta_w e^{\zeta_l(0)}t\f$.
template <class S>
class LinearActivationErfSolution {
 public:
  /// \param Delta \f$\Delta\f$, \f$M_C\times K\f$; \param V0 \f$v_k(0)\f$ as columns, \f$M_C\times K\f$;
  /// \param zeta0 \f$\zeta(0) = z(0)/T\f$; \param kappa > 0; \param eta_w > 0.
  LinearActivationErfSolution(Matrix<S> Delta, Matrix<S> V0, Vector<S> zeta0, S kappa, S eta_w)
      : Delta_(std::move(Delta)), V0_(std::move(V0)), zeta0_(std::move(zeta0)), kappa_(kappa), eta_w_(eta_w) {
    if (Delta_.rows() != V0_.rows() || Delta_.cols() != V0_.cols() || zeta0_.size() != Delta_.rows() || Delta_.size() == 0) {
      throw std::invalid_argument("LinearActivationErfSolution: Delta and V0 must both be M_C x K (non-empty), zeta0 of length M_C");
    }
    if (!(kappa_ > S(0)) || !(eta_w_ > S(0))) {
      throw std::invalid_argument("LinearActivationErfSolution: kappa and eta_w must be > 0");
    }
    a_ = Delta_.array().square().matrix().rowwise().sum();
    beta_ = V0_.cwiseProduct(Delta_).rowwise().sum();
  }

  Eigen::Index tokens() const { return Delta_.rows(); }
  const Vector<S>& a() const { return a_; }
  const Vector<S>& beta() const { return beta_; }

  /// \f$t(\tau)\f$ for token l: the physical time at which its clock reads \f$\tau\f$.
  S time_at_clock(Eigen::Index l, const S& tau) const {
    using portable::exp;
    check_token(l);
    if (a_[l] == S(0)) return tau * exp(-zeta0_[l]) / eta_w_;
    const S A = scale(l);
    return prefactor(l) * erf_difference(A * (a_[l] * tau + beta_[l]), A * beta_[l]) / eta_w_;
  }

  /// \f$\tau_l(t)\f$, the inverse of time_at_clock; throws std::domain_error for \f$t \ge t^*_l\f$.
  S clock_at_time(Eigen::Index l, const S& t) const {
    using portable::exp;
    check_token(l);
    if (!(t >= S(0))) throw std::invalid_argument("LinearActivationErfSolution::clock_at_time: t must be >= 0");
    if (a_[l] == S(0)) return eta_w_ * exp(zeta0_[l]) * t;
    if (!(t < blow_up_time(l))) {
      throw std::domain_error("LinearActivationErfSolution::clock_at_time: t = " + to_string(to_double(t), 6) +
                              " is at or past the blow-up time of token " + std::to_string(l));
    }
    const S A = scale(l);
    const S w = A * beta_[l];
    const S ratio = eta_w_ * t / prefactor(l);
    S u;
    // erf(u) - erf(w) = ratio, solved through erfc when w > 0 so that nothing cancels near erf = 1.
    if (w > S(0)) {
      u = erf_detail::erfc_inv(erf_detail::erfc(w) - ratio);
    } else {
      u = erf_detail::erf_inv(erf_detail::erf(w) + ratio);
    }
    return (u / A - beta_[l]) / a_[l];
  }

  /// \f$\zeta_l(t) = z_l(t)/T\f$.
  S zeta(Eigen::Index l, const S& t) const { return zeta_at_clock(l, clock_at_time(l, t)); }

  /// \f$\zeta(t)\f$ for every token.
  Vector<S> zeta(const S& t) const {
    Vector<S> out(tokens());
    for (Eigen::Index l = 0; l < tokens(); ++l) out[l] = zeta(l, t);
    return out;
  }

  /// \f$V(t)\f$: \f$v_{kl}(t) = v_{kl}(0) + \Delta_{lk}\tau_l(t)\f$.
  Matrix<S> V(const S& t) const {
    Matrix<S> out = V0_;
    for (Eigen::Index l = 0; l < tokens(); ++l) out.row(l) += clock_at_time(l, t) * Delta_.row(l);
    return out;
  }

  /// \f$\zeta(t)\f$ and \f$V(t)\f$ together, the same numbers as zeta(t) and V(t) but with one clock
  /// \f$\tau_l(t)\f$ per token instead of two (each is an inverse erf, most of the cost in 100 digits).
  struct State {
    Vector<S> zeta;
    Matrix<S> V;
  };
  State state(const S& t) const {
    State out{Vector<S>(tokens()), V0_};
    for (Eigen::Index l = 0; l < tokens(); ++l) {
      const S tau = clock_at_time(l, t);
      out.zeta[l] = zeta_at_clock(l, tau);
      out.V.row(l) += tau * Delta_.row(l);
    }
    return out;
  }

  /// \f$t^*_l = \eta_w^{-1}e^{-\zeta_l(0)+\kappa\beta_l^2/(2a_l)}\sqrt{\pi/(2\kappa a_l)}\,
  /// \mathrm{erfc}(\sqrt{\kappa/(2a_l)}\beta_l)\f$, where \f$\zeta_l\to\infty\f$; \f$+\infty\f$ if \f$a_l = 0\f$.
  S blow_up_time(Eigen::Index l) const {
    check_token(l);
    if (a_[l] == S(0)) return std::numeric_limits<S>::infinity();
    return prefactor(l) * erf_detail::erfc(scale(l) * beta_[l]) / eta_w_;
  }

 private:
  S zeta_at_clock(Eigen::Index l, const S& tau) const {
    return zeta0_[l] + kappa_ * (beta_[l] * tau + a_[l] * tau * tau / S(2));
  }
  void check_token(Eigen::Index l) const {
    if (l < 0 || l >= tokens()) throw std::invalid_argument("LinearActivationErfSolution: token index out of range");
  }
  S scale(Eigen::Index l) const {
    using std::sqrt;
    return sqrt(kappa_ / (S(2) * a_[l]));
  }
  S prefactor(Eigen::Index l) const {
    using portable::exp;
    using std::sqrt;
    return exp(-zeta0_[l] + kappa_ * beta_[l] * beta_[l] / (S(2) * a_[l])) *
           sqrt(boost::math::constants::pi<S>() / (S(2) * kappa_ * a_[l]));
  }
  static S erf_difference(const S& u, const S& w) {
    if (w > S(0)) return erf_detail::erfc(w) - erf_detail::erfc(u);
    return erf_detail::erf(u) - erf_detail::erf(w);
  }

  Matrix<S> Delta_, V0_;
  Vector<S> zeta0_;
  S kappa_, eta_w_;
  Vector<S> a_, beta_;
};

/// Logit of token l when the most salient token \f$l^*\f$ blows up, zero initialisation (§3):
/// \f[ \zeta_l(t^*_{l^*}) = \bigl[\mathrm{erfinv}(\|\Delta_l\|/\|\Delta_{l^*}\|)\bigr]^2. \f]
/// Finite for \f$\|\Delta_l\| < \|\Delta_{l^*}\|\f$, hence sparse attention.
template <class S>
S zeta_at_first_blow_up(const S& delta_norm, const S& salient_delta_norm) {
  if (!(salient_delta_norm > S(0)) || !(delta_norm >= S(0)) || !(delta_norm < salient_delta_norm)) {
    throw std::invalid_argument("zeta_at_first_blow_up: needs 0 <= |Delta_l| < |Delta_l*|");
  }
  const S e = erf_detail::erf_inv(delta_norm / salient_delta_norm);
  return e * e;
}

}  // namespace dyncheck::theory::joma
