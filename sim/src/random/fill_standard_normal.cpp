#include "dyncheck/sim/random/fill_standard_normal.hpp"

namespace dyncheck::sim {

void fill_standard_normal(Rng& rng, Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::Index n = out.size();
  Eigen::Index i = 0;
  for (; i + 1 < n; i += 2) {
    const detail::NormalPair pair = detail::standard_normal_pair(rng);
    out[i] = pair.first;
    out[i + 1] = pair.second;
  }
  if (i < n) out[i] = detail::standard_normal_pair(rng).first;
}

}  // namespace dyncheck::sim
