// Marsaglia–Tsang gamma sampling and its log-space variant (see gamma.hpp, gamma_log.hpp).

#include "dyncheck/sim/random/gamma.hpp"

#include <cmath>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/detail/throw_invalid_argument.hpp"
#include "dyncheck/sim/random/gamma_log.hpp"
#include "dyncheck/sim/random/standard_normal.hpp"
#include "dyncheck/sim/random/uniform_open01.hpp"

namespace dyncheck::sim {

namespace {

void check_shape(const char* function, double shape) {
  if (!(shape > 0.0 && std::isfinite(shape))) {
    detail::throw_invalid_argument(function, "shape must be finite and > 0", shape);
  }
}

// Marsaglia & Tsang (2000), section 5 ("the algorithm"), for shape >= 1.
double marsaglia_tsang(Rng& rng, double shape) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double z = 0.0;
    double v = 0.0;
    do {
      z = standard_normal(rng);
      v = 1.0 + c * z;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open01(rng);
    const double z2 = z * z;
    // The squeeze avoids both logarithms about 98% of the time.
    if (u < 1.0 - 0.0331 * (z2 * z2)) return d * v;
    if (portable::log(u) < 0.5 * z2 + d * (1.0 - v + portable::log(v))) return d * v;
  }
}

}  // namespace

double gamma(Rng& rng, double shape) {
  check_shape("gamma", shape);
  if (shape >= 1.0) return marsaglia_tsang(rng, shape);
  // Boost (Marsaglia & Tsang 2000, section 6): if Y ~ Gamma(a+1) and U ~ U(0,1) are
  // independent, Y U^(1/a) ~ Gamma(a).
  const double y = marsaglia_tsang(rng, shape + 1.0);
  const double u = uniform_open01(rng);
  return y * portable::exp(portable::log(u) / shape);
}

double gamma_log(Rng& rng, double shape) {
  check_shape("gamma_log", shape);
  if (shape >= 1.0) return portable::log(marsaglia_tsang(rng, shape));
  const double y = marsaglia_tsang(rng, shape + 1.0);
  const double u = uniform_open01(rng);
  return portable::log(y) + portable::log(u) / shape;
}

}  // namespace dyncheck::sim
