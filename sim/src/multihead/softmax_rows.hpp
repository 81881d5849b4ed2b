// Row-wise softmax in place, shifted by each row's maximum (portable::exp: the same bits on every CPU).
// Shared by layer.cpp and student.cpp.
#pragma once

#include <Eigen/Dense>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::sim::multihead::detail {

inline void softmax_rows(Eigen::MatrixXd& Z) {
  for (Eigen::Index a = 0; a < Z.rows(); ++a) {
    const double top = Z.row(a).maxCoeff();
    double total = 0;
    for (Eigen::Index b = 0; b < Z.cols(); ++b) {
      Z(a, b) = portable::exp(Z(a, b) - top);
      total += Z(a, b);
    }
    Z.row(a) /= total;
  }
}

}  // namespace dyncheck::sim::multihead::detail
