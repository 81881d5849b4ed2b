# Self-test of check_portability.cmake: run it on fixture/ and require exactly the planted violations.
#   cmake -DSCRIPT=<check_portability.cmake> -DFIXTURE=<fixture dir> -P expect_violations.cmake
execute_process(COMMAND "${CMAKE_COMMAND}" -DROOT=${FIXTURE} -P "${SCRIPT}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "the guard passed a fixture full of violations:\n${out}")
endif()
set(expected
  "cmake/flags.cmake:1: -ffast-math"
  "cmake/flags.cmake:1: -mavx"
  "checks/bad.cpp:1: fast-math optimisation attribute"
  "sim/CMakeLists.txt:2: -march="
  "sim/CMakeLists.txt: sim/kernel.cpp uses a target attribute"
  "sim/kernel.cpp:4: non-empty inline assembly"
  "theory/bad.hpp:4: long double"
  "theory/bad.hpp:5: long double literal"
  "theory/bad.hpp:6: long double (x87"
  "theory/bad.hpp:6: long double libm function"
  "theory/bad.hpp:7: floating-point environment change"
  "theory/bad.hpp:8: glibc double libm function"
  "theory/bad.hpp:9: glibc double libm function"
  "theory/bad.hpp:10: Eigen array function"
  "theory/bad.hpp:11: Boost.Math special function"
  "theory/bad.hpp:12: glibc double libm function"
  "portable/bad.cpp:2: glibc double libm function")
foreach(line IN LISTS expected)
  string(FIND "${out}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the guard missed '${line}':\n${out}")
  endif()
endforeach()
list(LENGTH expected count)
if(NOT out MATCHES "portability: ${count} CPU-dependent")
  message(FATAL_ERROR "expected exactly ${count} violations (a false positive on a comment or an allowed line?):\n${out}")
endif()
message(STATUS "the guard reported exactly the ${count} planted violations")
