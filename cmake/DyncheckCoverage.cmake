# Coverage build (the `coverage` preset, `make coverage`, scripts/coverage.sh): gcov instrumentation
# on every dyncheck target.
#
# -O1 -fno-inline: every function that is instantiated keeps its own out-of-line body and its own
#   entry counter, so "executed" and "never executed" are per function (with inlining, gcov has no
#   record at all for a function inlined everywhere, and a function inlined into a branch nobody
#   takes would silently drop out of the list). -O1 rather than -O0 for the speed of the rest of
#   the code (the claims' ci run under this build is not yet measured: README.md, "make coverage").
# -fprofile-update=single: plain counter increments. Threads may lose increments of a counter
#   (the counts are then lower bounds), but a counter some thread incremented is never left at 0,
#   and executed / never executed is all that scripts/coverage.sh decides on; atomic updates would
#   make every counter increment a locked instruction.
option(DYNCHECK_COVERAGE "Instrument dyncheck for coverage (gcov/gcovr)" OFF)
if(DYNCHECK_COVERAGE)
  target_compile_options(dyncheck_build_flags INTERFACE --coverage -O1 -fno-inline -fprofile-update=single)
  target_link_options(dyncheck_build_flags INTERFACE --coverage)

  # `coverage_build`: only what scripts/coverage.sh runs, i.e. the dyncheck command line (every claim)
  # and the test executables of tests/theory, tests/sim and tests/checks; not the reports, claims,
  # portability or install tests, the benchmarks or the Python module.
  function(dyncheck_coverage_collect_targets dir out)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(sub IN LISTS subdirs)
      dyncheck_coverage_collect_targets(${sub} sub_targets)
      list(APPEND targets ${sub_targets})
    endforeach()
    set(${out} ${targets} PARENT_SCOPE)
  endfunction()
  function(dyncheck_coverage_target)
    set(deps dyncheck)
    foreach(layer theory sim checks)
      if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/tests/${layer} AND DYNCHECK_BUILD_TESTS)
        dyncheck_coverage_collect_targets(${PROJECT_SOURCE_DIR}/tests/${layer} targets)
        list(APPEND deps ${targets})
      endif()
    endforeach()
    add_custom_target(coverage_build)
    add_dependencies(coverage_build ${deps})
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL dyncheck_coverage_target)
endif()
