#pragma once
// Claim parameters: declared with their valid ranges, overridden from the command line,
// rejected with an error that names the parameter and its range.

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dyncheck::checks {

/// A usage error about one named parameter. The CLI maps it to exit code 2.
class ParamError : public std::invalid_argument {
 public:
  ParamError(std::string parameter, const std::string& message);
  const std::string& parameter() const { return parameter_; }

 private:
  std::string parameter_;
};

struct ParamSpec {
  std::string name;
  double default_value = 0;
  double min = 0;
  double max = 0;
  bool integer = false;
  bool min_exclusive = false;  ///< (min, max] instead of [min, max]
  std::string description;
  bool log_scale = false;  ///< sampled and swept on a log scale (fuzz test, sweeps)

  /// "an integer in [1, 64]" / "a number in (0, 1]".
  std::string range_text() const;
  /// Throws ParamError naming the parameter and its range when `value` is outside it.
  void validate(double value) const;
};

/// A parameter override as written on the command line: name=value.
using ParamOverride = std::pair<std::string, std::string>;
/// Parses "name=value"; throws ParamError on a missing '='.
ParamOverride parse_param_override(const std::string& text);

class Params {
 public:
  Params() = default;
  /// Defaults of `specs`, with `overrides` applied; overrides naming parameters not in
  /// `specs` are ignored here (the runner checks that each override fits some selected claim).
  static Params resolve(const std::vector<ParamSpec>& specs, const std::vector<ParamOverride>& overrides);
  /// Values already resolved and validated (a ParamSet's items).
  static Params from_items(std::vector<std::pair<std::string, double>> items);

  double get(const std::string& name) const;
  long long get_int(const std::string& name) const;
  std::size_t get_size(const std::string& name) const;
  /// In declaration order, for reports.
  const std::vector<std::pair<std::string, double>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

}  // namespace dyncheck::checks
