#include "dyncheck/checks/params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dyncheck::checks {

ParamError::ParamError(std::string parameter, const std::string& message)
    : std::invalid_argument(message), parameter_(std::move(parameter)) {}

std::string ParamSpec::range_text() const {
  return fmt::format("{} in {}{:g}, {:g}]", integer ? "an integer" : "a number", min_exclusive ? "(" : "[", min, max);
}

void ParamSpec::validate(double value) const {
  const bool above_min = min_exclusive ? value > min : value >= min;
  const bool in_range = std::isfinite(value) && above_min && value <= max;
  const bool integral = !integer || value == std::floor(value);
  if (!in_range || !integral) {
    throw ParamError(name, fmt::format("parameter '{}' must be {} ({}); got {:g}", name, range_text(), description, value));
  }
}

ParamOverride parse_param_override(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw ParamError(text, fmt::format("--param expects name=value; got '{}'", text));
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

namespace {

double parse_number(const std::string& name, const std::string& text, const ParamSpec& spec) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw ParamError(name, fmt::format("parameter '{}' must be {}; got '{}', which is not a number", name,
                                       spec.range_text(), text));
  }
  return value;
}

}  // namespace

Params Params::resolve(const std::vector<ParamSpec>& specs, const std::vector<ParamOverride>& overrides) {
  Params params;
  for (const ParamSpec& spec : specs) {
    double value = spec.default_value;
    for (const auto& [name, text] : overrides) {
      if (name == spec.name) value = parse_number(name, text, spec);
    }
    spec.validate(value);
    params.items_.emplace_back(spec.name, value);
  }
  return params;
}

Params Params::from_items(std::vector<std::pair<std::string, double>> items) {
  Params params;
  params.items_ = std::move(items);
  return params;
}

double Params::get(const std::string& name) const {
  const auto found = std::find_if(items_.begin(), items_.end(), [&](const auto& item) { return item.first == name; });
  if (found == items_.end()) throw std::logic_error("claim reads undeclared parameter '" + name + "'");
  return found->second;
}

long long Params::get_int(const std::string& name) const { return std::llround(get(name)); }

std::size_t Params::get_size(const std::string& name) const {
  const long long value = get_int(name);
  if (value < 0) throw std::logic_error("parameter '" + name + "' read as a size but is negative");
  return static_cast<std::size_t>(value);
}

}  // namespace dyncheck::checks
