#pragma once
// The one-layer linear-attention model of the SCB task (specs/scb.md §2).

#include <Eigen/Core>

#include "dyncheck/sim/scb/instance.hpp"

namespace dyncheck::sim::scb {

/**
 * \f$f(X; V, A) = V X a^{(x_{T+1})}\f$ with \f$V \in \mathbb R^{N\times N}\f$ and
 * \f$A = [a^{(1)}, \dots, a^{(N)}] \in \mathbb R^{T\times N}\f$ (column k is the attention of
 * query k over positions), X the N×T one-hot matrix of the context (specs/scb.md §2).
 */
struct LinearModel {
  Eigen::MatrixXd V;  ///< N×N
  Eigen::MatrixXd A;  ///< T×N, column k = a^{(k)}
};

/// The paper's initialisation [paper]: \f$V = \mu\mathbf 1^\top\f$, \f$a^{(k)}_t = 1/T\f$.
LinearModel initial_model(const Instance& instance);

}  // namespace dyncheck::sim::scb
