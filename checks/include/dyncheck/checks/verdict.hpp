#pragma once
// Verdicts and their evidence (DESIGN.md, "The central types").
//
// A comparison puts a theory value (with its numerical error) next to a measured value
// (with its confidence half-width) and allows the discrepancy a tolerance made of three
// derived terms: numerical + bias + statistical. It is
//   PASS          when the discrepancy is within the tolerance and the tolerance is within
//                 the comparison's resolution (the discrepancy the check is built to detect);
//   FAIL          when the discrepancy exceeds the tolerance;
//   INCONCLUSIVE  when the discrepancy is within the tolerance but the tolerance is wider than
//                 the resolution: the budget cannot tell a wrong theory apart, so no PASS;
//   ERROR         when any number in it is NaN or infinite.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dyncheck::checks {

enum class Outcome { pass, fail, inconclusive, error };
std::string_view to_string(Outcome outcome);  // "PASS", "FAIL", "INCONCLUSIVE", "ERROR"

/// Which statement about measured vs theory the comparison checks.
enum class Relation {
  equal,     ///< |measured - theory| <= tolerance
  at_most,   ///< measured <= theory + tolerance
  at_least,  ///< measured >= theory - tolerance
};
std::string_view to_string(Relation relation);

/// One term of a tolerance and where it comes from.
struct ToleranceTerm {
  double value = 0;
  std::string reason;
};

struct Tolerance {
  ToleranceTerm numerical;    ///< error of the theory value (and of the simulation's arithmetic)
  ToleranceTerm bias;         ///< what the theorem neglects at these parameters (e.g. O(eta))
  ToleranceTerm statistical;  ///< confidence half-width of the measurement
  double total() const { return numerical.value + bias.value + statistical.value; }
};

struct Comparison {
  std::string quantity;  ///< e.g. "E w_1(t = 2)"
  Relation relation = Relation::equal;
  double theory = 0;
  double theory_error = 0;  ///< numerical error of `theory`
  double measured = 0;
  double half_width = 0;  ///< statistical half-width of `measured` (0 when deterministic)
  Tolerance tolerance;
  /// The smallest wrong-theory discrepancy this comparison promises to detect. A tolerance
  /// wider than this makes the comparison INCONCLUSIVE.
  double resolution = 0;
  std::string resolution_reason;
  /// The part of the claim's false-failure share this comparison's statistical term was computed
  /// for (0 for a deterministic comparison). The runner checks that a claim's parts add up to at
  /// most its share.
  double false_failure_share = 0;

  /// |measured - theory| for `equal`; the one-sided excess (>= 0) for `at_most`/`at_least`.
  double discrepancy() const;
  /// discrepancy / tolerance: < 1 passes, > 1 fails.
  double margin() const;
  Outcome outcome() const;
  bool finite() const;
};

/// Evidence of the theory side of a comparison.
struct TheoryValue {
  double value = 0;
  double error = 0;
  std::string error_reason;
};

/// Evidence of the simulation side of a comparison.
struct Measurement {
  double value = 0;
  double half_width = 0;
  std::string half_width_reason;
  /// Arithmetic error of a deterministic measurement (e.g. an ODE solver's error estimate, the
  /// round-off of a double-precision run); it joins the numerical tolerance term.
  double numerical_error = 0;
  std::string numerical_error_reason;
  /// The false-failure probability `half_width` was computed for (stats::HalfWidth::delta).
  double false_failure_share = 0;
};

struct Bias {
  double value = 0;
  std::string reason;
};

struct Resolution {
  double value = 0;
  std::string reason;
};

/// A comparison whose numerical term is the theory's error and whose statistical term is the
/// measurement's half-width, so the three tolerance terms cannot drift from their evidence.
Comparison compare(std::string quantity, const TheoryValue& theory, const Measurement& measured,
                   const Bias& bias, const Resolution& resolution, Relation relation = Relation::equal);

/// A curve of a plot: a theory line, simulation points, or a simulation mean with its band.
struct Curve {
  /// line: theory; points: simulation (with error bars when lower/upper are given); band: a simulation mean with
  /// its confidence band; image: a heatmap, one cell per point (add_cell).
  enum class Style { line, points, band, image };
  std::string label;
  Style style = Style::line;
  std::vector<double> x, y;
  std::vector<double> lower, upper;  ///< band / error bars; empty when none

  /// A theory curve.
  static Curve line(std::string label) { return {std::move(label), Style::line, {}, {}, {}, {}}; }
  /// Simulation points (with error bars when added with a lower and upper value).
  static Curve points(std::string label) { return {std::move(label), Style::points, {}, {}, {}, {}}; }
  /// A simulation mean with its confidence band.
  static Curve band(std::string label) { return {std::move(label), Style::band, {}, {}, {}, {}}; }
  /// A heatmap: cells on a regular grid, column x and row y (rows drawn downwards, like a matrix), each with a value
  /// in [-1, 1] (normalise first: the colour scale is blue -1, white 0, red 1). Several image curves of one plot
  /// share its axes and colour scale (place them side by side with a gap). The value is kept in lower = upper.
  static Curve image(std::string label) { return {std::move(label), Style::image, {}, {}, {}, {}}; }
  Curve& add(double xv, double yv) {
    x.push_back(xv);
    y.push_back(yv);
    return *this;
  }
  Curve& add(double xv, double yv, double lower_v, double upper_v) {
    add(xv, yv);
    lower.push_back(lower_v);
    upper.push_back(upper_v);
    return *this;
  }
  /// One heatmap cell (Style::image).
  Curve& add_cell(double column, double row, double value) { return add(column, row, value, value); }
  /// A mean and its symmetric half-width.
  Curve& add_mean(double xv, double mean, double half_width) { return add(xv, mean, mean - half_width, mean + half_width); }
};

struct Plot {
  std::string name;  ///< file-name stem, unique within a claim
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<Curve> curves;

  Plot& add(Curve curve) {
    curves.push_back(std::move(curve));
    return *this;
  }
};

struct Verdict {
  std::string claim_id;
  std::string mutant;  ///< empty for the claim's own theory
  Outcome outcome = Outcome::error;
  std::vector<Comparison> comparisons;
  std::vector<Plot> plots;
  /// Choices and derivations the reader needs (e.g. "[reconstructed]: the spec reads ...").
  std::vector<std::string> notes;
  /// Where it went wrong, for ERROR.
  std::string error;
  /// ERROR because an external input the claim needs (a data set, an optional component) is not
  /// present (InputUnavailable); `error` then names what is missing and the command that provides it.
  bool input_unavailable = false;

  std::uint64_t seed = 0;
  std::string budget;
  std::vector<std::pair<std::string, double>> params;
  double false_failure_rate = 0;   ///< the claim's fixed false-failure share
  double false_failure_spent = 0;  ///< the sum of its comparisons' recorded shares (<= the share)
  double wall_seconds = 0;

  /// The largest comparison margin (the one closest to failing).
  double margin() const;
};

/// ERROR if a comparison has a non-finite number, else FAIL if any fails, else INCONCLUSIVE if
/// any is, else PASS. A verdict without comparisons is an ERROR: a check that compared nothing
/// cannot pass.
Outcome combine(const std::vector<Comparison>& comparisons);

/// Throws NonFiniteError naming `where` when `value` is NaN or infinite.
void require_finite(double value, std::string_view where);

class NonFiniteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by a claim whose external input (a data set, an optional component) is not present: the
/// message names what is missing, where it was looked for, and the command that provides it. The
/// verdict is ERROR (exit 3) with `input_unavailable` set and the message after the fixed prefix
/// "input unavailable: ", which ctest's SKIP_REGULAR_EXPRESSION matches, so that a suite without the
/// input shows the claim as skipped with its reason. A present but corrupted input is a plain ERROR.
class InputUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline constexpr const char* input_unavailable_prefix = "input unavailable: ";

}  // namespace dyncheck::checks
