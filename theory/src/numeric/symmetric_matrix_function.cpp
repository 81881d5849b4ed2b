// Explicit instantiations of dyncheck/theory/numeric/symmetric_matrix_function.hpp for the three
// project scalars: SelfAdjointEigenSolver in multiprecision is compiled once, here.
#include <dyncheck/theory/numeric/symmetric_matrix_function.hpp>

namespace dyncheck::theory {

template Matrix<double> symmetric_matrix_exp<double>(const Matrix<double>&);
template Matrix<mp50> symmetric_matrix_exp<mp50>(const Matrix<mp50>&);
template Matrix<mp100> symmetric_matrix_exp<mp100>(const Matrix<mp100>&);

}  // namespace dyncheck::theory
