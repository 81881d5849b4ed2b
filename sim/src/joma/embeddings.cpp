#include "dyncheck/sim/joma/embeddings.hpp"

#include <Eigen/QR>
#include <cmath>
#include <stdexcept>

#include "dyncheck/sim/random/fill_standard_normal.hpp"

namespace dyncheck::sim::joma {
namespace {

void require_room(Eigen::Index d, Eigen::Index m, const char* where) {
  if (m < 1 || d < m + 1) {
    throw std::invalid_argument(std::string(where) + ": needs M_C >= 1 and d >= M_C + 1, got d = " + std::to_string(d) +
                                ", M_C = " + std::to_string(m));
  }
}

Embeddings split(const Eigen::MatrixXd& U) {
  const Eigen::Index m = U.cols() - 1;
  return {U.leftCols(m), U.col(m)};
}

Eigen::MatrixXd gaussian_matrix(Eigen::Index rows, Eigen::Index cols, Rng& rng) {
  Eigen::VectorXd values(rows * cols);
  fill_standard_normal(rng, values);
  return Eigen::Map<Eigen::MatrixXd>(values.data(), rows, cols);
}

Eigen::MatrixXd orthonormal_columns(Eigen::Index d, Eigen::Index columns, Rng& rng) {
  const Eigen::MatrixXd G = gaussian_matrix(d, columns, rng);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  return qr.householderQ() * Eigen::MatrixXd::Identity(d, columns);
}

}  // namespace

Embeddings identity_embeddings(Eigen::Index d, Eigen::Index contextual_tokens) {
  require_room(d, contextual_tokens, "identity_embeddings");
  return split(Eigen::MatrixXd::Identity(d, contextual_tokens + 1));
}

Embeddings random_orthonormal_embeddings(Eigen::Index d, Eigen::Index contextual_tokens, Rng& rng) {
  require_room(d, contextual_tokens, "random_orthonormal_embeddings");
  return split(orthonormal_columns(d, contextual_tokens + 1, rng));
}

Embeddings perturbed_embeddings(Eigen::Index d, Eigen::Index contextual_tokens, double epsilon, Rng& rng) {
  require_room(d, contextual_tokens, "perturbed_embeddings");
  if (!(epsilon >= 0) || !std::isfinite(epsilon)) throw std::invalid_argument("perturbed_embeddings: epsilon must be >= 0");
  Eigen::MatrixXd U = orthonormal_columns(d, contextual_tokens + 1, rng);
  U += epsilon * gaussian_matrix(d, contextual_tokens + 1, rng);
  U.colwise().normalize();
  return split(U);
}

double mean_absolute_cosine(const Embeddings& embeddings) {
  Eigen::MatrixXd U(embeddings.contextual.rows(), embeddings.contextual.cols() + 1);
  U << embeddings.contextual, embeddings.query;
  const Eigen::Index n = U.cols();
  if (n < 2) throw std::invalid_argument("mean_absolute_cosine: needs at least two embeddings");
  const Eigen::VectorXd norms = U.colwise().norm();
  double total = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = i + 1; j < n; ++j) total += std::abs(U.col(i).dot(U.col(j))) / (norms[i] * norms[j]);
  }
  return total / static_cast<double>(n * (n - 1) / 2);
}

}  // namespace dyncheck::sim::joma
