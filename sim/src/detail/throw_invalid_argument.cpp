#include "dyncheck/sim/detail/throw_invalid_argument.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string>

namespace dyncheck::sim::detail {

namespace {

template <class T>
std::string shortest(T value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

}  // namespace

void throw_invalid_argument(std::string_view function, std::string_view requirement, double value) {
  throw std::invalid_argument(std::string(function) + ": " + std::string(requirement) + " (got " +
                              shortest(value) + ")");
}

void throw_invalid_argument(std::string_view function, std::string_view requirement,
                            std::uint64_t value) {
  throw std::invalid_argument(std::string(function) + ": " + std::string(requirement) + " (got " +
                              shortest(value) + ")");
}

void throw_invalid_argument(std::string_view function, std::string_view requirement) {
  throw std::invalid_argument(std::string(function) + ": " + std::string(requirement));
}

}  // namespace dyncheck::sim::detail
