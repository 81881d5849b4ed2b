#include "dyncheck/sim/random/standard_normal.hpp"

#include <cmath>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::sim::detail {

NormalPair standard_normal_pair(Rng& rng) {
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * uniform01(rng) - 1.0;
    v = 2.0 * uniform01(rng) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);  // s = 0 would divide by zero; s >= 1 is outside the disk
  const double f = std::sqrt(-2.0 * portable::log(s) / s);
  return {u * f, v * f};
}

}  // namespace dyncheck::sim::detail
