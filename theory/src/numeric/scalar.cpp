// Explicit instantiations of dyncheck/theory/numeric/scalar.hpp for the three project scalars,
// so that Boost.Multiprecision's stream code is compiled once rather than in every client.
#include <dyncheck/theory/numeric/scalar.hpp>

namespace dyncheck::theory {

template std::string to_string<double>(const double&, int);
template std::string to_string<mp50>(const mp50&, int);
template std::string to_string<mp100>(const mp100&, int);

}  // namespace dyncheck::theory
