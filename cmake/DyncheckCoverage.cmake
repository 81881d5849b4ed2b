# Coverage build (the `coverage` preset, `make coverage`): gcov instrumentation on every dyncheck
# target. -O1 keeps the claims' ci runs affordable; -fno-inline-functions-called-once keeps every
# function's own entry count, so that scripts/coverage.sh can list the functions nothing executes.
option(DYNCHECK_COVERAGE "Instrument dyncheck for coverage (gcov/gcovr)" OFF)
if(DYNCHECK_COVERAGE)
  target_compile_options(dyncheck_build_flags INTERFACE --coverage -O1 -fno-inline-functions-called-once
                                                        -fprofile-update=atomic)
  target_link_options(dyncheck_build_flags INTERFACE --coverage)
endif()
