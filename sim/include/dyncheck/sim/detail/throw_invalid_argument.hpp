#pragma once
// The one way sim/ reports a bad argument: "<function>: <requirement> (got <value>)".

#include <cstdint>
#include <string_view>

namespace dyncheck::sim::detail {

/// Throws std::invalid_argument("<function>: <requirement> (got <value>)"); the value is
/// printed in shortest round-trip form, so the message reproduces the offending argument.
[[noreturn]] void throw_invalid_argument(std::string_view function, std::string_view requirement,
                                         double value);
[[noreturn]] void throw_invalid_argument(std::string_view function, std::string_view requirement,
                                         std::uint64_t value);
/// Without a value, for conditions on several arguments (sizes that disagree, ...).
[[noreturn]] void throw_invalid_argument(std::string_view function, std::string_view requirement);

}  // namespace dyncheck::sim::detail
