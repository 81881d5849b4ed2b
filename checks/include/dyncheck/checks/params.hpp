#pragma once
// Claim parameters: declared with their valid ranges, overridden from the command line,
// rejected with an error that names the parameter and its range.

#include <cstdint>
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
  /// Throws ParamError naming the parameter and its range when `value` is outside it
  /// (or, for an integer parameter, not integral).
  void validate(double value) const;
};

/// A parameter override as written on the command line: name=value.
using ParamOverride = std::pair<std::string, std::string>;
/// Parses "name=value"; throws ParamError on a missing '=' or an empty name.
ParamOverride parse_param_override(const std::string& text);

/// The value of parameter `spec` as written on the command line. Accepts exactly the plain
/// decimal forms [+-]digits[.digits][(e|E)[+-]digits] (e.g. 12, -0.5, 1.5e-3, 2.5E+4); rejects
/// everything else (hex, inf, nan, leading or trailing whitespace, the empty string) and values
/// a double cannot hold (1e400 overflows, 1e-400 underflows), then validates the value against
/// the spec. An integer parameter accepts any of these forms whose value is an integer (16, 16.0,
/// 1.6e1). Every ParamError names the parameter, its range and the text exactly as written.
double parse_param_value(const ParamSpec& spec, const std::string& text);

/// A non-negative integer written in decimal digits only (no sign, no whitespace, no hex), in
/// [min, max]; otherwise throws ParamError(parameter, ...) whose message names `source` (how
/// the user gave it, e.g. "--threads" or "DYNCHECK_THREADS") and `range_text` (the range as the
/// message prints it, e.g. "[1, 1024]").
std::uint64_t parse_unsigned_decimal(const std::string& parameter, const std::string& source, const std::string& text,
                                     std::uint64_t min, std::uint64_t max, const std::string& range_text);

/// The master seed as given by `source` ("--seed" or "DYNCHECK_SEED"): a decimal integer in
/// [0, 2^64 - 1]. The one parser for both, so they accept exactly the same strings.
std::uint64_t parse_seed(const std::string& source, const std::string& text);

/// Worker threads are at most this many: far above any machine this runs on, and low enough
/// that a typo (100000) is an error rather than an attempt to start that many threads.
inline constexpr unsigned max_threads = 1024;
/// The worker thread count as given by `source` ("--threads" or "DYNCHECK_THREADS"): a decimal
/// integer in [1, max_threads].
unsigned parse_thread_count(const std::string& source, const std::string& text);

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
