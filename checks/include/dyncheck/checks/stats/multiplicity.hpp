// dyncheck/checks/stats/multiplicity.hpp — splitting a suite-wide false-failure rate.
//
// DESIGN.md "Statistics": the false-failure rate of the whole suite is fixed and split
// across claims. False-fail rates add over checks (union bound), so each of k checks gets
// delta_total / k (Bonferroni); Holm's step-down procedure keeps the same family-wise rate,
// needs no independence, and rejects at least as much.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dyncheck::checks::stats {

/// \f$ \delta_{total}/k \f$. Throws std::invalid_argument if k == 0 or delta_total is not in (0, 1).
double bonferroni_share(double delta_total, std::size_t number_of_checks);

/// Holm–Bonferroni step-down at family-wise level delta: sort p ascending,
/// \f$ p_{(1)}\le\dots\le p_{(m)} \f$, reject \f$ H_{(1)},\dots,H_{(j)} \f$ while
/// \f$ p_{(j)} \le \delta/(m-j+1) \f$, and stop at the first that is not.
/// Result in input order (true = rejected). Ties keep input order. p-values must be in [0, 1].
std::vector<bool> holm_reject(std::span<const double> p_values, double delta);

/// Holm-adjusted p-values, for reports, in input order:
/// \f[ \tilde p_{(j)} = \max_{i\le j}\min\bigl(1,(m-i+1)\,p_{(i)}\bigr). \f]
/// \f$ H_{(j)} \f$ is rejected at level delta iff \f$ \tilde p_{(j)} \le \delta \f$ (up to rounding
/// of the product; holm_reject is the reference).
std::vector<double> holm_adjusted_p_values(std::span<const double> p_values);

/// \f$ 2\,(1-\Phi(|z|)) \f$, computed from the upper tail so small p-values keep their digits.
/// z = ±inf gives 0; NaN throws std::invalid_argument.
double two_sided_p_value_normal(double z);

/// \f$ 2\,P(T_\nu > |t|) \f$ for Student's t with \f$\nu\f$ = degrees_of_freedom > 0 (real
/// \f$\nu\f$ allowed; \f$\nu = +\infty\f$ is the normal case).
double two_sided_p_value_student_t(double t, double degrees_of_freedom);

}  // namespace dyncheck::checks::stats
