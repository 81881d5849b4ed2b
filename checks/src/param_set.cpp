#include "dyncheck/checks/param_set.hpp"

#include <stdexcept>

namespace dyncheck::checks {

ParamField::ParamField(ParamSet* owner, std::string name, double default_value, Range range, std::string description,
                       bool integer, Scale scale)
    : value_(default_value) {
  spec_.name = std::move(name);
  spec_.default_value = default_value;
  spec_.min = range.min;
  spec_.max = range.max;
  spec_.min_exclusive = range.min_open;
  spec_.integer = integer;
  spec_.description = std::move(description);
  spec_.log_scale = scale == Scale::log;
  if (scale == Scale::log && !(range.min > 0 || (range.min == 0 && range.min_open))) {
    throw std::logic_error("parameter '" + spec_.name + "' on a log scale needs a positive range");
  }
  for (const ParamField* field : owner->fields_) {
    if (field->spec_.name == spec_.name) throw std::logic_error("parameter '" + spec_.name + "' declared twice");
  }
  spec_.validate(default_value);  // a default outside its own range is a programming error (ParamError)
  owner->fields_.push_back(this);
}

std::size_t Int::size() const {
  if (value_ < 0) throw std::logic_error("parameter '" + name() + "' read as a size but is negative");
  return static_cast<std::size_t>(value_);
}

std::vector<ParamSpec> ParamSet::specs() const {
  std::vector<ParamSpec> specs;
  specs.reserve(fields_.size());
  for (const ParamField* field : fields_) specs.push_back(field->spec_);
  return specs;
}

void ParamSet::resolve(const std::vector<ParamOverride>& overrides, const Budget& budget) {
  const Params resolved = Params::resolve(specs(), overrides);
  for (ParamField* field : fields_) field->value_ = resolved.get(field->spec_.name);
  check(budget);
}

std::vector<std::pair<std::string, double>> ParamSet::items() const {
  std::vector<std::pair<std::string, double>> items;
  items.reserve(fields_.size());
  for (const ParamField* field : fields_) items.emplace_back(field->spec_.name, field->value_);
  return items;
}

Params ParamSet::as_params() const { return Params::from_items(items()); }

void ParamSet::check(const Budget& /*budget*/) const {}

}  // namespace dyncheck::checks
