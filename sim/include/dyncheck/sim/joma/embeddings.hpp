#pragma once
// Token embeddings for the JoMA block (specs/joma.md §1, Assumption 1 and its near-orthogonal control).

#include <Eigen/Core>

#include "dyncheck/sim/joma/block.hpp"
#include "dyncheck/sim/random/rng.hpp"

namespace dyncheck::sim::joma {

/// U = first M_C + 1 columns of I_d, as in draw_figure_2_3.py. Needs d >= M_C + 1.
Embeddings identity_embeddings(Eigen::Index d, Eigen::Index contextual_tokens);

/// U = Q of the QR factorisation of a d x (M_C + 1) standard normal matrix (orthonormal columns).
Embeddings random_orthonormal_embeddings(Eigen::Index d, Eigen::Index contextual_tokens, Rng& rng);

/// Near-orthogonal control: columns of Q + ε G (G standard normal) normalised to unit length.
/// ε = 0 gives random_orthonormal_embeddings' Q; larger ε raises the mean |cosine|.
Embeddings perturbed_embeddings(Eigen::Index d, Eigen::Index contextual_tokens, double epsilon, Rng& rng);

/// Mean absolute cosine similarity over the (M_C + 1) M_C / 2 pairs of distinct embeddings
/// (the statistic of the OpenReview discussion, App. B.1).
double mean_absolute_cosine(const Embeddings& embeddings);

}  // namespace dyncheck::sim::joma
