// dyncheck/theory/scb/reduced_flow.hpp
//
// The gradient flow of the reduced stage-1 dynamics (specs/scb.md §4.2, "Gradient flow"), as an
// ode_system for theory::integrate_with_error.
#pragma once

#include <dyncheck/theory/numeric/eigen.hpp>
#include <dyncheck/theory/scb/constants.hpp>
#include <dyncheck/theory/scb/instance.hpp>
#include <dyncheck/theory/scb/reduced_state.hpp>

#include <stdexcept>

namespace dyncheck::theory::scb {

/// Packing of a ReducedState into one vector of size 3N + 2:
/// \f$x = (m_1..m_N,\ \alpha,\ \nu,\ \beta_1..\beta_N,\ \omega_1..\omega_N)\f$.
template <class S>
Vector<S> pack(const ReducedState<S>& state) {
  const auto N = state.m.size();
  Vector<S> x(3 * N + 2);
  x.head(N) = state.m;
  x[N] = state.alpha;
  x[N + 1] = state.nu;
  x.segment(N + 2, N) = state.beta;
  x.tail(N) = state.omega;
  return x;
}

template <class S>
ReducedState<S> unpack(const Vector<S>& x) {
  if (x.size() < 5 || (x.size() - 2) % 3 != 0) throw std::invalid_argument("unpack: size must be 3N + 2 with N >= 1");
  const auto N = (x.size() - 2) / 3;
  return ReducedState<S>{x.head(N), x[N], x[N + 1], x.segment(N + 2, N), x.tail(N)};
}

/// \f$\dot x = F(x)\f$ with \f$x^+ = x + \eta F\f$ replaced by the flow; time is measured in steps
/// (the step sizes stay in F), and the squared contraction factors become their first-order rates:
/// \f[ \dot m = \eta(\mu - m),\quad \dot\alpha = \eta\sum_k\mu_k[\tfrac1T + \beta_k\rho_k - \alpha\|a_k\|^2],\quad
///     \dot\nu = -2\eta\textstyle\sum_k\mu_k\|a_k\|^2\,\nu, \f]
/// \f[ \dot\beta_k = \eta_A[\alpha K_P - \beta_kK_{VV}],\quad \dot\omega_k = -2\eta_AK_{VV}\omega_k. \f]
/// The state is packed as in pack().
template <class S>
struct ReducedFlow {
  Vector<S> mu, rho;
  S K_P, inv_T, eta, eta_A;

  ReducedFlow(const Instance<S>& instance, const Constants<S>& c, const S& eta_, const S& eta_A_)
      : mu(instance.mu), rho(c.rho), K_P(c.K_P), inv_T(S(1) / S(c.T)), eta(eta_), eta_A(eta_A_) {}

  void operator()(const Vector<S>& x, Vector<S>& dxdt, const S& /*t*/) const {
    const auto N = mu.size();
    const S alpha = x[N], nu = x[N + 1];
    const S K_VV = alpha * alpha * K_P + nu;
    S drive = S(0), energy = S(0);
    for (Eigen::Index k = 0; k < N; ++k) {
      const S beta = x[N + 2 + k], omega = x[2 * N + 2 + k];
      const S a_energy = inv_T + beta * beta * rho[k] + omega;
      drive += mu[k] * (inv_T + beta * rho[k] - alpha * a_energy);
      energy += mu[k] * a_energy;
    }
    dxdt.resize(x.size());
    dxdt.head(N) = eta * (mu - x.head(N));
    dxdt[N] = eta * drive;
    dxdt[N + 1] = -2 * eta * energy * nu;
    for (Eigen::Index k = 0; k < N; ++k) {
      dxdt[N + 2 + k] = eta_A * (alpha * K_P - x[N + 2 + k] * K_VV);
      dxdt[2 * N + 2 + k] = -2 * eta_A * K_VV * x[2 * N + 2 + k];
    }
  }
};

}  // namespace dyncheck::theory::scb
