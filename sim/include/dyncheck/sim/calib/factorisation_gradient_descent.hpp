#pragma once
// Plain gradient descent on the scalar factorisation loss ½(uv − s)², in double precision.

#include <utility>
#include <vector>

namespace dyncheck::sim::calib {

/// Iterates (u_k, v_k), k = 0..steps, of u ← u − η(uv − s)v, v ← v − η(uv − s)u
/// (simultaneous update: both use the old iterate).
inline std::vector<std::pair<double, double>> factorisation_gradient_descent(double s, double u0, double v0,
                                                                             double eta, long long steps) {
  std::vector<std::pair<double, double>> iterates;
  iterates.reserve(static_cast<std::size_t>(steps) + 1);
  double u = u0, v = v0;
  iterates.emplace_back(u, v);
  for (long long k = 0; k < steps; ++k) {
    const double residual = u * v - s;
    const double u_next = u - eta * residual * v;
    v -= eta * residual * u;
    u = u_next;
    iterates.emplace_back(u, v);
  }
  return iterates;
}

}  // namespace dyncheck::sim::calib
