# MPFR and GMP have no CMake package on Debian 12; expose them as imported targets.
find_path(MPFR_INCLUDE_DIR mpfr.h REQUIRED)
find_library(MPFR_LIBRARY mpfr REQUIRED)
find_library(GMP_LIBRARY gmp REQUIRED)
if(NOT TARGET dyncheck_mpfr)
  add_library(dyncheck_mpfr INTERFACE IMPORTED)
  set_target_properties(dyncheck_mpfr PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MPFR_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${MPFR_LIBRARY};${GMP_LIBRARY}")
endif()
