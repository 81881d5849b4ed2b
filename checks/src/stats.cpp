// checks/src/stats.cpp — see dyncheck/checks/stats.hpp and specs/numerics.md §4.
#include "dyncheck/checks/stats.hpp"
#include "dyncheck/checks/stats/proportions.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/math/distributions/beta.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "dyncheck/portable/math.hpp"

namespace dyncheck::checks::stats {
namespace {

// Validation. Messages name the function, the argument, its value and the valid range, so a
// caller three layers up can tell what it passed wrong without a debugger.

void require_delta(std::string_view function, double delta, std::string_view name = "delta") {
  if (!(delta > 0.0 && delta < 1.0)) {  // written so that NaN fails too
    throw std::invalid_argument(
        fmt::format("{}: {} = {} must be in the open interval (0, 1)", function, name, delta));
  }
}

void require_range(std::string_view function, double range) {
  if (!(std::isfinite(range) && range > 0.0)) {
    throw std::invalid_argument(
        fmt::format("{}: range = {} must be finite and > 0", function, range));
  }
}

// The finite-sample bounds promise nothing if the data do not fit the range they were told.
// max - min <= range holds exactly in floating point whenever it holds for the reals, because
// subtraction is correctly rounded (monotone) and range is itself a double.
void require_data_within_range(std::string_view function, const Summary& summary, double range) {
  if (summary.max - summary.min > range) {
    throw std::invalid_argument(fmt::format(
        "{}: range = {} must be >= max - min = {} - {} = {} of the data it bounds", function,
        range, summary.max, summary.min, summary.max - summary.min));
  }
}

void require_variance_summary(std::string_view function, const Summary& summary) {
  if (summary.n < 2) {
    throw std::invalid_argument(fmt::format(
        "{}: summary.n = {} must be >= 2 (a sample variance needs two replicates)", function,
        summary.n));
  }
  if (!std::isfinite(summary.mean)) {
    throw std::invalid_argument(
        fmt::format("{}: summary.mean = {} must be finite", function, summary.mean));
  }
  if (!(std::isfinite(summary.variance) && summary.variance >= 0.0)) {
    throw std::invalid_argument(fmt::format(
        "{}: summary.variance = {} must be finite and >= 0", function, summary.variance));
  }
}

[[noreturn]] void throw_not_finite(std::string_view where, std::size_t index, double value) {
  throw std::domain_error(
      fmt::format("{}: value at index {} is not finite ({})", where, index, value));
}

// The quantiles are evaluated in 50-digit software arithmetic and rounded once to double: Boost.Math
// in double calls glibc's exp/log, whose variant (and last bits) depends on the CPU (README, "Which
// guarantees hold across machines").
using quantile_real = boost::multiprecision::number<boost::multiprecision::cpp_bin_float<50>,
                                                    boost::multiprecision::et_off>;

// A 50-digit quantile costs about a millisecond, and the same few are asked for over and over (every
// comparison of a claim at one (n, delta), 49 plotted points, 400 calibration seeds, 20000 coverage
// replicates): each thread keeps the values it has computed, keyed by the exact arguments, so a
// repeated call returns the very double the first one rounded to. No number changes; only the time.
// Bounded: the table is emptied when it reaches max_entries (a fuzz run asks for many distinct n).
template <class Compute>
double remembered_quantile(int kind, double first, double second, Compute compute) {
  struct Key {
    int kind;
    double first;
    double second;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept {
      const std::size_t a = std::hash<double>{}(key.first);
      const std::size_t b = std::hash<double>{}(key.second);
      return (a * 0x9E3779B97F4A7C15ULL) ^ (b + 0x7F4A7C15ULL + static_cast<std::size_t>(key.kind));
    }
  };
  constexpr std::size_t max_entries = 4096;
  thread_local std::unordered_map<Key, double, KeyHash> table;
  const Key key{kind, first, second};
  if (const auto found = table.find(key); found != table.end()) return found->second;
  const double value = compute();
  if (table.size() >= max_entries) table.clear();
  table.emplace(key, value);
  return value;
}

double normal_upper_quantile(double tail) {
  return remembered_quantile(0, tail, 0.0, [tail] {
    return static_cast<double>(boost::math::quantile(
        boost::math::complement(boost::math::normal_distribution<quantile_real>(), quantile_real(tail))));
  });
}

/// t_{1-tail, dof} in 50 digits, rounded once to double.
double student_t_upper_quantile(double dof, double tail) {
  return remembered_quantile(1, dof, tail, [dof, tail] {
    return static_cast<double>(boost::math::quantile(boost::math::complement(
        boost::math::students_t_distribution<quantile_real>(quantile_real(dof)), quantile_real(tail))));
  });
}

}  // namespace

// ---- summaries ------------------------------------------------------------------------

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) {
    return s;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw_not_finite("summarize", i, values[i]);
    }
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  const double n = static_cast<double>(values.size());

  double sum = std::accumulate(values.begin(), values.end(), 0.0);
  if (!std::isfinite(sum)) {
    // Finite values near DBL_MAX can overflow the sum; scale before adding instead.
    sum = 0.0;
    for (const double x : values) {
      sum += x / n;
    }
    s.mean = sum;
  } else {
    s.mean = sum / n;
  }
  // Rounding can put the computed mean just outside [min, max] (e.g. three copies of 0.1 sum
  // to 0.30000000000000004); keep it inside, and keep constant data at variance exactly 0.
  s.mean = std::clamp(s.mean, s.min, s.max);
  if (values.size() < 2 || s.min == s.max) {
    return s;
  }
  double sum_d = 0.0;
  double sum_d2 = 0.0;
  for (const double x : values) {
    const double d = x - s.mean;
    sum_d += d;
    sum_d2 += d * d;
  }
  s.variance = std::max(0.0, (sum_d2 - sum_d * sum_d / n) / (n - 1.0));
  return s;
}

void RunningMoments::add(double value) {
  if (!std::isfinite(value)) {
    throw_not_finite("RunningMoments::add", n_, value);
  }
  ++n_;
  if (n_ == 1) {
    mean_ = value;
    m2_ = 0.0;
    min_ = value;
    max_ = value;
    return;
  }
  const double d_old = value - mean_;
  mean_ += d_old / static_cast<double>(n_);
  m2_ += d_old * (value - mean_);  // both factors have the sign of d_old, so m2_ never decreases
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void RunningMoments::merge(const RunningMoments& other) {
  if (other.n_ == 0) {
    return;
  }
  if (n_ == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(n_);
  const double nb = static_cast<double>(other.n_);
  const double n = na + nb;
  const double d = other.mean_ - mean_;
  mean_ += d * (nb / n);
  m2_ += other.m2_ + d * d * (na * nb / n);
  n_ += other.n_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

Summary RunningMoments::summary() const {
  Summary s;
  s.n = n_;
  if (n_ == 0) {
    return s;
  }
  s.mean = std::clamp(mean_, min_, max_);  // as in summarize: rounding stays inside the data
  s.variance = n_ >= 2 ? m2_ / static_cast<double>(n_ - 1) : 0.0;
  s.min = min_;
  s.max = max_;
  return s;
}

// ---- half-widths ----------------------------------------------------------------------

std::string to_string(HalfWidthMethod method) {
  switch (method) {
    case HalfWidthMethod::student_t:
      return "student_t";
    case HalfWidthMethod::normal:
      return "normal";
    case HalfWidthMethod::hoeffding:
      return "hoeffding";
    case HalfWidthMethod::empirical_bernstein:
      return "empirical_bernstein";
  }
  throw std::invalid_argument(fmt::format("to_string: HalfWidthMethod value {} is not a method",
                                          static_cast<int>(method)));
}

namespace {

// The CLT interval quantile * s / sqrt(n) shared by the Student-t and normal half-widths; `symbol`
// names the quantile in the reason, `caveat` says what the interval assumes.
HalfWidth clt_half_width(const Summary& summary, double delta, double quantile, HalfWidthMethod method,
                         std::string_view label, std::string_view symbol, std::string_view caveat) {
  const double sd = std::sqrt(summary.variance);
  HalfWidth h;
  h.value = quantile * sd / std::sqrt(static_cast<double>(summary.n));
  h.method = method;
  h.delta = delta;
  h.reason = fmt::format(
      "{} CLT interval {} * s / sqrt(n) = {:.6g} * {:.6g} / sqrt({}) = {:.6g} with n = {}, delta = {:.3g}; "
      "assumes the mean of the n independent replicates is approximately normal {}.",
      label, symbol, quantile, sd, summary.n, h.value, summary.n, delta, caveat);
  return h;
}

}  // namespace

HalfWidth student_t_half_width(const Summary& summary, double delta) {
  constexpr std::string_view fn = "student_t_half_width";
  require_variance_summary(fn, summary);
  require_delta(fn, delta);
  const double n = static_cast<double>(summary.n);
  // Upper-tail (complement) form keeps full relative accuracy for tiny delta.
  const double t = student_t_upper_quantile(n - 1.0, delta / 2.0);
  return clt_half_width(summary, delta, t, HalfWidthMethod::student_t, "Student-t", "t_{1-delta/2, n-1}",
                        "(exact for normal data, asymptotic otherwise)");
}

HalfWidth normal_half_width(const Summary& summary, double delta) {
  constexpr std::string_view fn = "normal_half_width";
  require_variance_summary(fn, summary);
  require_delta(fn, delta);
  return clt_half_width(summary, delta, normal_upper_quantile(delta / 2.0), HalfWidthMethod::normal, "Normal",
                        "z_{1-delta/2}", "and s is close to sigma (undercovers for small n)");
}

HalfWidth hoeffding_half_width(std::size_t n, double range, double delta) {
  constexpr std::string_view fn = "hoeffding_half_width";
  if (n < 1) {
    throw std::invalid_argument(fmt::format("{}: n = {} must be >= 1", fn, n));
  }
  require_range(fn, range);
  require_delta(fn, delta);
  const double log_term = portable::log(2.0 / delta);
  HalfWidth h;
  h.value = range * std::sqrt(log_term / (2.0 * static_cast<double>(n)));
  h.method = HalfWidthMethod::hoeffding;
  h.delta = delta;
  h.reason = fmt::format(
      "Hoeffding bound range * sqrt(ln(2/delta) / (2n)) = {:.6g} * sqrt({:.6g} / {}) = {:.6g} "
      "with n = {}, delta = {:.3g}, range = {:.6g}; rigorous for n independent replicates that "
      "each lie in an interval of length {:.6g}.",
      range, log_term, 2 * n, h.value, n, delta, range, range);
  return h;
}

HalfWidth hoeffding_half_width(const Summary& summary, double range, double delta) {
  constexpr std::string_view fn = "hoeffding_half_width";
  require_range(fn, range);
  require_data_within_range(fn, summary, range);
  return hoeffding_half_width(summary.n, range, delta);
}

HalfWidth empirical_bernstein_half_width(const Summary& summary, double range, double delta) {
  constexpr std::string_view fn = "empirical_bernstein_half_width";
  require_variance_summary(fn, summary);
  require_range(fn, range);
  require_data_within_range(fn, summary, range);
  require_delta(fn, delta);
  const double n = static_cast<double>(summary.n);
  const double log_term = portable::log(4.0 / delta);
  const double variance_term = std::sqrt(2.0 * summary.variance * log_term / n);
  const double range_term = 7.0 * range * log_term / (3.0 * (n - 1.0));
  HalfWidth h;
  h.value = variance_term + range_term;
  h.method = HalfWidthMethod::empirical_bernstein;
  h.delta = delta;
  h.reason = fmt::format(
      "Maurer-Pontil empirical Bernstein bound, two-sided, sqrt(2 V ln(4/delta) / n) + "
      "7 range ln(4/delta) / (3(n-1)) = {:.6g} + {:.6g} = {:.6g} with n = {}, V = {:.6g}, "
      "delta = {:.3g}, range = {:.6g}; rigorous for n independent replicates that each lie in an "
      "interval of length {:.6g}.",
      variance_term, range_term, h.value, summary.n, summary.variance, delta, range, range);
  return h;
}

HalfWidth half_width(HalfWidthMethod method, const Summary& summary, double delta,
                     std::optional<double> range) {
  const auto need_range = [&]() {
    if (!range) {
      throw std::invalid_argument(fmt::format(
          "half_width: range must be given for method {} (values in an interval of that length)",
          to_string(method)));
    }
    return *range;
  };
  switch (method) {
    case HalfWidthMethod::student_t:
      return student_t_half_width(summary, delta);
    case HalfWidthMethod::normal:
      return normal_half_width(summary, delta);
    case HalfWidthMethod::hoeffding:
      return hoeffding_half_width(summary, need_range(), delta);
    case HalfWidthMethod::empirical_bernstein:
      return empirical_bernstein_half_width(summary, need_range(), delta);
  }
  throw std::invalid_argument(fmt::format("half_width: method value {} is not a method",
                                          static_cast<int>(method)));
}

// ---- multiplicity and p-values ----------------------------------------------------------

double bonferroni_share(double delta_total, std::size_t number_of_checks) {
  constexpr std::string_view fn = "bonferroni_share";
  require_delta(fn, delta_total, "delta_total");
  if (number_of_checks == 0) {
    throw std::invalid_argument(
        fmt::format("{}: number_of_checks = 0 must be >= 1", fn));
  }
  return delta_total / static_cast<double>(number_of_checks);
}

namespace {

void require_p_values(std::string_view function, std::span<const double> p_values) {
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    if (!(p_values[i] >= 0.0 && p_values[i] <= 1.0)) {
      throw std::invalid_argument(fmt::format(
          "{}: p_values[{}] = {} must be in [0, 1]", function, i, p_values[i]));
    }
  }
}

// Indices of p_values sorted by ascending p; ties keep input order.
std::vector<std::size_t> ascending_order(std::span<const double> p_values) {
  std::vector<std::size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
  return order;
}

}  // namespace

std::vector<bool> holm_reject(std::span<const double> p_values, double delta) {
  constexpr std::string_view fn = "holm_reject";
  require_delta(fn, delta);
  require_p_values(fn, p_values);
  const std::size_t m = p_values.size();
  std::vector<bool> rejected(m, false);
  const std::vector<std::size_t> order = ascending_order(p_values);
  for (std::size_t j = 0; j < m; ++j) {
    if (!(p_values[order[j]] <= delta / static_cast<double>(m - j))) {
      break;  // step-down: the first acceptance accepts everything after it
    }
    rejected[order[j]] = true;
  }
  return rejected;
}

std::vector<double> holm_adjusted_p_values(std::span<const double> p_values) {
  require_p_values("holm_adjusted_p_values", p_values);
  const std::size_t m = p_values.size();
  std::vector<double> adjusted(m, 0.0);
  const std::vector<std::size_t> order = ascending_order(p_values);
  double running_max = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    const double scaled = std::min(1.0, static_cast<double>(m - j) * p_values[order[j]]);
    running_max = std::max(running_max, scaled);
    adjusted[order[j]] = running_max;
  }
  return adjusted;
}

double two_sided_p_value_normal(double z) {
  if (std::isnan(z)) {
    throw std::invalid_argument("two_sided_p_value_normal: z = nan must be a number");
  }
  if (std::isinf(z)) {
    return 0.0;
  }
  return 2.0 * boost::math::cdf(boost::math::complement(
                   boost::math::normal_distribution<double>(), std::abs(z)));
}

double two_sided_p_value_student_t(double t, double degrees_of_freedom) {
  constexpr std::string_view fn = "two_sided_p_value_student_t";
  if (!(degrees_of_freedom > 0.0)) {
    throw std::invalid_argument(fmt::format(
        "{}: degrees_of_freedom = {} must be > 0 (+inf for the normal limit)", fn,
        degrees_of_freedom));
  }
  if (std::isnan(t)) {
    throw std::invalid_argument(fmt::format("{}: t = nan must be a number", fn));
  }
  if (std::isinf(degrees_of_freedom)) {
    return two_sided_p_value_normal(t);
  }
  if (std::isinf(t)) {
    return 0.0;
  }
  return 2.0 * boost::math::cdf(boost::math::complement(
                   boost::math::students_t_distribution<double>(degrees_of_freedom),
                   std::abs(t)));
}

// ---- binomial proportion ----------------------------------------------------------------

Interval clopper_pearson(std::size_t successes, std::size_t trials, double confidence) {
  constexpr std::string_view fn = "clopper_pearson";
  if (trials == 0) {
    throw std::invalid_argument(fmt::format("{}: trials = 0 must be >= 1", fn));
  }
  if (successes > trials) {
    throw std::invalid_argument(fmt::format(
        "{}: successes = {} must be in [0, trials] = [0, {}]", fn, successes, trials));
  }
  require_delta(fn, confidence, "confidence");
  const double tail = (1.0 - confidence) / 2.0;
  const double x = static_cast<double>(successes);
  const double n = static_cast<double>(trials);
  Interval interval{0.0, 1.0};
  if (successes > 0) {
    interval.lower =
        boost::math::quantile(boost::math::beta_distribution<double>(x, n - x + 1.0), tail);
  }
  if (successes < trials) {
    interval.upper = boost::math::quantile(
        boost::math::complement(boost::math::beta_distribution<double>(x + 1.0, n - x), tail));
  }
  return interval;
}

namespace {

void require_proportion(std::string_view fn, std::size_t successes, std::size_t trials,
                        std::string_view successes_name = "successes",
                        std::string_view trials_name = "trials") {
  if (trials == 0) {
    throw std::invalid_argument(fmt::format("{}: {} = 0 must be >= 1", fn, trials_name));
  }
  if (successes > trials) {
    throw std::invalid_argument(fmt::format("{}: {} = {} must be in [0, {}] = [0, {}]", fn,
                                            successes_name, successes, trials_name, trials));
  }
}

Interval wilson_unchecked(std::size_t successes, std::size_t trials, double z) {
  const double x = static_cast<double>(successes);
  const double n = static_cast<double>(trials);
  const double z2 = z * z;
  const double center = (x + z2 / 2.0) / (n + z2);
  const double half = z / (n + z2) * std::sqrt(x * (n - x) / n + z2 / 4.0);
  // x = 0 and x = n give the exact ends 0 and 1 (center -+ half in exact arithmetic)
  return {successes == 0 ? 0.0 : std::max(0.0, center - half),
          successes == trials ? 1.0 : std::min(1.0, center + half)};
}

}  // namespace

Interval wilson(std::size_t successes, std::size_t trials, double confidence) {
  constexpr std::string_view fn = "wilson";
  require_proportion(fn, successes, trials);
  require_delta(fn, confidence, "confidence");
  return wilson_unchecked(successes, trials, normal_upper_quantile((1.0 - confidence) / 2.0));
}

Interval newcombe_difference(std::size_t successes1, std::size_t trials1, std::size_t successes2,
                             std::size_t trials2, double confidence) {
  constexpr std::string_view fn = "newcombe_difference";
  require_proportion(fn, successes1, trials1, "successes1", "trials1");
  require_proportion(fn, successes2, trials2, "successes2", "trials2");
  require_delta(fn, confidence, "confidence");
  const double z = normal_upper_quantile((1.0 - confidence) / 2.0);
  const Interval w1 = wilson_unchecked(successes1, trials1, z);
  const Interval w2 = wilson_unchecked(successes2, trials2, z);
  const double p1 = static_cast<double>(successes1) / static_cast<double>(trials1);
  const double p2 = static_cast<double>(successes2) / static_cast<double>(trials2);
  const double d = p1 - p2;
  return {std::max(-1.0, d - std::sqrt((p1 - w1.lower) * (p1 - w1.lower) + (w2.upper - p2) * (w2.upper - p2))),
          std::min(1.0, d + std::sqrt((w1.upper - p1) * (w1.upper - p1) + (p2 - w2.lower) * (p2 - w2.lower)))};
}

}  // namespace dyncheck::checks::stats
