#include "dyncheck/sim/joma/data.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyncheck/portable/math.hpp"
#include "dyncheck/sim/random/dirichlet.hpp"
#include "dyncheck/sim/random/fill_standard_normal.hpp"
#include "dyncheck/sim/random/uniform01.hpp"
#include "dyncheck/sim/random/uniform_index.hpp"

namespace dyncheck::sim::joma {

Eigen::MatrixXd figure_2_3_token_distributions(Eigen::Index distinct, Eigen::Index common, Eigen::Index classes,
                                                bool gaussian, Rng& rng) {
  if (distinct < 0 || common < 0 || distinct + common < 1 || classes < 1) {
    throw std::invalid_argument("figure_2_3_token_distributions: needs distinct, common >= 0, M_C >= 1, classes >= 1");
  }
  Eigen::MatrixXd X(distinct + common, classes);
  for (Eigen::Index y = 0; y < classes; ++y) {
    for (Eigen::Index l = 0; l < X.rows(); ++l) X(l, y) = uniform01(rng) / 2;
  }
  if (gaussian) {
    for (Eigen::Index y = 0; y < classes; ++y) {
      const double centre = static_cast<double>(y) / static_cast<double>(classes) * static_cast<double>(distinct);
      for (Eigen::Index l = 0; l < distinct; ++l) {
        const double offset = static_cast<double>(l) - centre;
        X(l, y) = portable::exp(-offset * offset / 30.0);
      }
    }
  }
  for (Eigen::Index y = 0; y < classes; ++y) {
    const double total = X.col(y).sum();
    if (!(total > 0)) throw std::invalid_argument("figure_2_3_token_distributions: a column summed to 0");
    X.col(y) /= total;
  }
  return X;
}

Batch full_batch(const Eigen::MatrixXd& X) {
  Batch batch{X, std::vector<int>(static_cast<std::size_t>(X.cols()))};
  for (Eigen::Index y = 0; y < X.cols(); ++y) batch.labels[static_cast<std::size_t>(y)] = static_cast<int>(y);
  return batch;
}

Batch class_conditional_batch(const Eigen::MatrixXd& X, Eigen::Index samples, Rng& rng) {
  if (samples < 1 || X.cols() < 1) throw std::invalid_argument("class_conditional_batch: needs samples >= 1 and a class");
  Batch batch{Eigen::MatrixXd(X.rows(), samples), std::vector<int>(static_cast<std::size_t>(samples))};
  for (Eigen::Index s = 0; s < samples; ++s) {
    const auto y = static_cast<Eigen::Index>(uniform_index(rng, static_cast<std::uint64_t>(X.cols())));
    batch.x.col(s) = X.col(y);
    batch.labels[static_cast<std::size_t>(s)] = static_cast<int>(y);
  }
  return batch;
}

Batch dirichlet_batch(Eigen::Index contextual_tokens, Eigen::Index samples, double alpha, int classes, Rng& rng) {
  if (contextual_tokens < 1 || samples < 1 || classes < 1 || !(alpha > 0)) {
    throw std::invalid_argument("dirichlet_batch: needs M_C, samples, classes >= 1 and alpha > 0");
  }
  Batch batch{Eigen::MatrixXd(contextual_tokens, samples), std::vector<int>(static_cast<std::size_t>(samples))};
  const std::vector<double> alphas(static_cast<std::size_t>(contextual_tokens), alpha);
  std::vector<double> x(static_cast<std::size_t>(contextual_tokens));
  for (Eigen::Index s = 0; s < samples; ++s) {
    dirichlet(rng, alphas, x);
    for (Eigen::Index l = 0; l < contextual_tokens; ++l) batch.x(l, s) = x[static_cast<std::size_t>(l)];
    batch.labels[static_cast<std::size_t>(s)] =
        static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(classes)));
  }
  return batch;
}

BlockParameters gaussian_parameters(Eigen::Index contextual_tokens, Eigen::Index d, Eigen::Index hidden, double scale_z,
                                    double scale_w, Rng& rng) {
  if (contextual_tokens < 1 || d < 1 || hidden < 1 || !(scale_z >= 0) || !(scale_w >= 0)) {
    throw std::invalid_argument("gaussian_parameters: needs positive sizes and scales >= 0");
  }
  BlockParameters p{Eigen::VectorXd(contextual_tokens), Eigen::MatrixXd(d, hidden)};
  fill_standard_normal(rng, p.z);
  Eigen::VectorXd w(d * hidden);
  fill_standard_normal(rng, w);
  p.W = Eigen::Map<Eigen::MatrixXd>(w.data(), d, hidden);
  p.z *= scale_z;
  p.W *= scale_w;
  return p;
}

}  // namespace dyncheck::sim::joma
