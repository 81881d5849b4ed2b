#pragma once
// Typed claim parameters (issue #11): a claim declares its parameters once, as named fields of a
// struct derived from ParamSet, each with its default, range, kind (integer or real), scale and
// description. The CLI, the report, `dyncheck list --json` and the fuzz test read the declaration;
// the claim reads the fields.
//
//   struct Params : ParamSet {
//     Int d{this, "d", 4, closed(1, 16), "dimension"};
//     Real eta{this, "eta", 0.02, open_closed(0, 1), "SGD step size", Scale::log};
//     void check(const Budget&) const override { ... cross-parameter conditions, ParamError ... }
//   };
//
// Shared sets are declared once: as a base (struct P : ScbInstanceParams {...}) or as a member
// constructed with the owning set (`JomaBlock block{this};` whose fields take the same `this`).
// A ParamSet owns pointers to its fields, so it is neither copyable nor movable.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "dyncheck/checks/budget.hpp"
#include "dyncheck/checks/params.hpp"

namespace dyncheck::checks {

enum class Scale { linear, log };

/// A range [min, max] or (min, max].
struct Range {
  double min = 0, max = 0;
  bool min_open = false;
};
constexpr Range closed(double min, double max) { return {min, max, false}; }
constexpr Range open_closed(double min, double max) { return {min, max, true}; }

class ParamSet;

/// One declared parameter: its spec and, after ParamSet::resolve, its value.
class ParamField {
 public:
  ParamField(ParamSet* owner, std::string name, double default_value, Range range, std::string description,
             bool integer, Scale scale);
  ParamField(const ParamField&) = delete;
  ParamField& operator=(const ParamField&) = delete;

  const ParamSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }

 protected:
  double value_;

 private:
  friend class ParamSet;
  ParamSpec spec_;
};

/// A real-valued parameter; reads as a double.
class Real : public ParamField {
 public:
  Real(ParamSet* owner, std::string name, double default_value, Range range, std::string description,
       Scale scale = Scale::linear)
      : ParamField(owner, std::move(name), default_value, range, std::move(description), false, scale) {}
  operator double() const { return value_; }  // NOLINT(google-explicit-constructor): a field reads as its value
  double value() const { return value_; }
};

/// An integer parameter; reads as a long long, or as a size with size().
class Int : public ParamField {
 public:
  Int(ParamSet* owner, std::string name, long long default_value, Range range, std::string description,
      Scale scale = Scale::linear)
      : ParamField(owner, std::move(name), static_cast<double>(default_value), range, std::move(description), true,
                   scale) {}
  operator long long() const { return static_cast<long long>(value_); }  // NOLINT(google-explicit-constructor)
  long long value() const { return static_cast<long long>(value_); }
  /// The value as a size; the range of a field read this way must exclude negatives.
  std::size_t size() const;
  /// The value as an int (Eigen::Index-friendly).
  int as_int() const { return static_cast<int>(value_); }
};

class ParamSet {
 public:
  ParamSet() = default;
  ParamSet(const ParamSet&) = delete;
  ParamSet& operator=(const ParamSet&) = delete;
  virtual ~ParamSet() = default;

  /// The declarations, in declaration order.
  std::vector<ParamSpec> specs() const;
  /// Applies `overrides` (names not declared here are ignored: the runner checks that each
  /// override fits some selected claim), validates each value against its range, then calls
  /// check(budget). Throws ParamError naming the parameter and its range.
  void resolve(const std::vector<ParamOverride>& overrides, const Budget& budget);
  /// Name and value of every field, in declaration order (for reports).
  std::vector<std::pair<std::string, double>> items() const;
  /// The untyped view, for code that reads parameters by name.
  Params as_params() const;

  /// Cross-parameter conditions and the refusal of runs the budget cannot afford: throws
  /// ParamError naming the parameter (or condition) and the limit. Called by resolve().
  virtual void check(const Budget& budget) const;

 private:
  friend class ParamField;
  std::vector<ParamField*> fields_;
};

}  // namespace dyncheck::checks
