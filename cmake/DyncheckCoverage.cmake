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
# -fprofile-update=atomic: dyncheck runs replicates on worker threads (sim/replicates.hpp, the multihead
#   cube, the libtorch plugin's runs), and GCC documents `single` for single-threaded programs only.
#   With `single` a counter is ordinary memory to the optimiser: it keeps a loop's counter in a register,
#   even uses it as the loop's induction variable, and may read it once for the loop's start and again
#   for its end. Another thread running the same loop increments the counter in between, the trip count
#   changes, and the loop reads past its data: `dyncheck report joma --threads 2` died with SIGSEGV in
#   Eigen's packetwise_redux_impl (the row sums of checks/joma/identity_experiment.hpp), the IV rcx =
#   counter + 1 and the end r15 = counter' + trip + 2 from two loads of one counter (session 15, race15;
#   tests/reports/threads_identical.cmake). A loop cut short would instead give a silently different,
#   thread-count-dependent result. 378 functions of that coverage build held a counter in a register
#   across two loads. Atomic updates (a locked add per counter increment) are never cached that way.
# -fprofile-exclude-files=^/usr/(include|lib)/: no counters in the dependencies' headers (Eigen, Boost,
#   fmt, the standard library: their template code inlined into ours). scripts/coverage.sh reports
#   theory/ and sim/ only, so nothing it reads is lost, and the hot loops of Eigen and Boost.MP carry no
#   locked adds: measured on joma.exp_invariant_exact_per_step at ci (CPU s, user; its claim file rebuilt
#   with each setting, the rest of the build as before): single 1.3, atomic 12.6, atomic without the
#   dependencies' counters 1.1. Correctness comes from `atomic` alone; the exclusion only buys the speed
#   back (a dependency installed elsewhere, e.g. /usr/local, is instrumented: slower, still correct).
option(DYNCHECK_COVERAGE "Instrument dyncheck for coverage (gcov/gcovr)" OFF)
if(DYNCHECK_COVERAGE)
  target_compile_options(dyncheck_build_flags INTERFACE --coverage -O1 -fno-early-inlining -fprofile-update=atomic
                                                        "-fprofile-exclude-files=^/usr/(include|lib)/")
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
