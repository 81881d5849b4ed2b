#include "dyncheck/checks/params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <system_error>

namespace dyncheck::checks {

namespace {

bool word_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// True when `word` occurs in `text` with no letter, digit or '_' directly before or after it.
bool mentions_word(const std::string& text, const std::string& word) {
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !word_character(text[at - 1]);
    const std::size_t end = at + word.size();
    const bool ends = end == text.size() || !word_character(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

/// Every refusal names its parameter: a message that does not is prefixed with "parameter 'x': ".
std::string naming(const std::string& parameter, const std::string& message) {
  std::string variable = "DYNCHECK_";  // the environment variable that sets it, e.g. DYNCHECK_THREADS
  for (const char c : parameter) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (parameter.empty() || mentions_word(message, parameter) || mentions_word(message, variable)) return message;
  return fmt::format("parameter '{}': {}", parameter, message);
}

}  // namespace

ParamError::ParamError(std::string parameter, const std::string& message)
    : std::invalid_argument(naming(parameter, message)), parameter_(std::move(parameter)) {}

std::string ParamSpec::range_text() const {
  // `{}` is the shortest text that reads back as the same double: a bound is never rounded.
  return fmt::format("{} in {}{}, {}]", integer ? "an integer" : "a number", min_exclusive ? "(" : "[", min, max);
}

namespace {

/// "parameter 'd' must be an integer in [1, 16] (dimension)".
std::string must_be(const ParamSpec& spec) {
  return fmt::format("parameter '{}' must be {} ({})", spec.name, spec.range_text(), spec.description);
}

bool in_range(const ParamSpec& spec, double value) {
  const bool above_min = spec.min_exclusive ? value > spec.min : value >= spec.min;
  return std::isfinite(value) && above_min && value <= spec.max;
}

bool integral(const ParamSpec& spec, double value) { return !spec.integer || value == std::floor(value); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Skips a run of digits; false when there is none.
bool digits(std::string_view text, std::size_t& i) {
  const std::size_t start = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  return i > start;
}

/// [+-]digits[.digits][(e|E)[+-]digits], nothing before or after.
bool is_plain_decimal(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (!digits(text, i)) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits(text, i)) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits(text, i)) return false;
  }
  return i == text.size();
}

}  // namespace

void ParamSpec::validate(double value) const {
  if (!in_range(*this, value) || !integral(*this, value)) {
    throw ParamError(name, fmt::format("{}; got {}", must_be(*this), value));
  }
}

ParamOverride parse_param_override(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw ParamError(text, fmt::format("--param expects name=value; got '{}'", text));
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

double parse_param_value(const ParamSpec& spec, const std::string& text) {
  const std::string not_decimal =
      fmt::format("{}; got '{}', which is not a number in decimal notation ([+-]digits[.digits][e[+-]digits], "
                  "e.g. 12, -0.5, 1.5e-3)",
                  must_be(spec), text);
  if (!is_plain_decimal(text)) throw ParamError(spec.name, not_decimal);
  // from_chars takes no leading '+'; the grammar above allows one.
  const char* first = text.data() + (text.front() == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  double value = 0;
  const auto [end, error] = std::from_chars(first, last, value, std::chars_format::general);
  if (error == std::errc::result_out_of_range) {
    // strtod tells the two directions apart (it returns ±HUGE_VAL on overflow, 0 or tiny on underflow).
    const bool overflow = std::isinf(std::strtod(text.c_str(), nullptr));
    throw ParamError(
        spec.name,
        fmt::format("{}; got {}, which is out of range: {}", must_be(spec), text,
                    overflow ? fmt::format("its magnitude is above the largest double, {}",
                                           std::numeric_limits<double>::max())
                             : fmt::format("it is not zero, yet its magnitude is below the smallest positive double, {}",
                                           std::numeric_limits<double>::denorm_min())));
  }
  if (error != std::errc() || end != last) throw ParamError(spec.name, not_decimal);
  if (!in_range(spec, value)) throw ParamError(spec.name, fmt::format("{}; got {}", must_be(spec), text));
  if (!integral(spec, value)) {
    throw ParamError(spec.name, fmt::format("{}; got {}, which is not an integer (an integer may also be written "
                                            "in decimal notation with a zero fraction or an exponent, e.g. 3.0, 3e0)",
                                            must_be(spec), text));
  }
  return value;
}

std::uint64_t parse_unsigned_decimal(const std::string& parameter, const std::string& source, const std::string& text,
                                     std::uint64_t min, std::uint64_t max, const std::string& range_text) {
  const std::string must = fmt::format("{} must be an integer in {}", source, range_text);
  const bool all_digits = !text.empty() && std::all_of(text.begin(), text.end(), is_digit);
  if (!all_digits) {
    throw ParamError(parameter, fmt::format("{}; got '{}', which is not an integer written in decimal digits "
                                            "(0-9 only: no sign, no spaces, no hex)",
                                            must, text));
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (error == std::errc::result_out_of_range) {
    throw ParamError(parameter, fmt::format("{}; got {}, which is out of range", must, text));
  }
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::logic_error("parse_unsigned_decimal: from_chars rejected digits '" + text + "'");
  }
  if (value < min || value > max) throw ParamError(parameter, fmt::format("{}; got {}", must, text));
  return value;
}

std::uint64_t parse_seed(const std::string& source, const std::string& text) {
  return parse_unsigned_decimal("seed", source, text, 0, std::numeric_limits<std::uint64_t>::max(),
                                "[0, 2^64 - 1] = [0, 18446744073709551615]");
}

unsigned parse_thread_count(const std::string& source, const std::string& text) {
  return static_cast<unsigned>(
      parse_unsigned_decimal("threads", source, text, 1, max_threads, fmt::format("[1, {}]", max_threads)));
}

namespace {

double parse_number(const std::string& name, const std::string& text, const ParamSpec& spec) {
  if (name != spec.name) throw std::logic_error("parse_number: override '" + name + "' given to spec '" + spec.name + "'");
  return parse_param_value(spec, text);
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
