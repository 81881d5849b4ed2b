# Coverage build (the `coverage` preset, `make coverage`, scripts/coverage.sh): gcov instrumentation
# on every dyncheck target.
#
# -O1 -fno-early-inlining: gcov counts the code of an inlined call at the callee's own source lines,
#   and scripts/coverage.sh calls a function executed when a line of its body ran, so inlining as
#   such loses nothing. What it does lose is GCC's early inliner, which runs *before* the
#   instrumentation: a trivial body (a getter `return a_;`) dissolves into its caller's statements
#   and keeps no line of its own, so a function that ran looks "never compiled" (measured with plain
#   -O1: 8 getters of theory/ that the unit tests call, e.g. LinearActivationErfSolution::a, had no
#   line record). Without early inlining every call is still a call when the counters go in, each
#   function keeps its lines, and the later inliner still inlines the instrumented bodies.
#   -fno-inline (the previous choice) also keeps the lines, but makes every Eigen coefficient access a
#   call. Measured (CPU seconds, user, on the shared machine; session 14): 200000 stage-1 SGD steps of
#   sim/scb (N = 8, T = 200, B = 64; the loop of the scb claims): ci build (-O2) 4.6 s, --coverage -O1
#   5.5 s, --coverage -O1 -fno-early-inlining 8.0 s, --coverage -O1 -fno-inline 47.7 s; the erf and
#   nonlinear-flow tests of tests/theory/joma (multiprecision, mostly in MPFR): 6.1, 6.6, 7.1 and 7.9 s.
#   So -fno-inline would make the claims' ci run about 10 times the ci build's, -fno-early-inlining
#   about 1.7 times. Compile time is about the same for all four (12-15 s of CPU per claim file).
# -fprofile-update=single: plain counter increments. Threads may lose increments of a counter
#   (the counts are then lower bounds), but a counter some thread incremented is never left at 0,
#   and executed / never executed is all that scripts/coverage.sh decides on; atomic updates would
#   make every counter increment a locked instruction.
option(DYNCHECK_COVERAGE "Instrument dyncheck for coverage (gcov/gcovr)" OFF)
if(DYNCHECK_COVERAGE)
  target_compile_options(dyncheck_build_flags INTERFACE --coverage -O1 -fno-early-inlining -fprofile-update=single)
  target_link_options(dyncheck_build_flags INTERFACE --coverage)

  # `coverage_build`: only what scripts/coverage.sh runs, i.e. the dyncheck command line (every claim)
  # and the test executables of tests/theory, tests/sim and tests/checks but checks_stats_test; not the reports, claims,
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
    # checks_stats_test includes only checks/ headers: it executes nothing this report counts
    # (scripts/coverage.sh does not run it either).
    list(REMOVE_ITEM deps checks_stats_test)
    add_custom_target(coverage_build)
    add_dependencies(coverage_build ${deps})
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL dyncheck_coverage_target)
endif()
