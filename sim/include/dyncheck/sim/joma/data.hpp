#pragma once
// Data for the JoMA block (specs/joma.md §2 "How well softmax holds", §7 claim 1).

#include <Eigen/Core>

#include "dyncheck/sim/joma/block.hpp"
#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::joma {

/// X ∈ R^{M_C x K} of draw_figure_2_3.py: X_{l,y} ~ U(0, 1/2); in the "gaussian" variant the first
/// `distinct` rows are X_{l,y} = exp(-(l - y·distinct/K)^2 / 30); columns normalised to sum 1.
/// Draw order: column-major uniforms over the whole matrix.
Eigen::MatrixXd figure_2_3_token_distributions(Eigen::Index distinct, Eigen::Index common, Eigen::Index classes,
                                                bool gaussian, Rng& rng);

/// The full batch of draw_figure_2_3.py: sample y has x = X(:, y) and label y.
Batch full_batch(const Eigen::MatrixXd& X);

/// N samples with uniform labels y and x = X(:, y) (class-conditional frequencies).
Batch class_conditional_batch(const Eigen::MatrixXd& X, Eigen::Index samples, Rng& rng);

/// N samples with x ~ Dirichlet(α 1_{M_C}) and uniform labels in [0, classes).
Batch dirichlet_batch(Eigen::Index contextual_tokens, Eigen::Index samples, double alpha, int classes, Rng& rng);

/// K x d weights with i.i.d. N(0, scale^2) entries (d x K, column k is w_k), z ~ N(0, scale_z^2).
BlockParameters gaussian_parameters(Eigen::Index contextual_tokens, Eigen::Index d, Eigen::Index hidden, double scale_z,
                                    double scale_w, Rng& rng);

}  // namespace dyncheck::sim::joma
