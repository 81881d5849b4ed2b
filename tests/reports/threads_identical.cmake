# Regression test (session 15, race15): CLAIM at the ci budget on 2 worker threads, RUNS times, must neither
# crash nor differ from its 1-thread verdict (JSON, times scrubbed). The claim runs its replicates on
# both threads at once, the same instrumented loops concurrently: the coverage build with
# -fprofile-update=single crashed here (cmake/DyncheckCoverage.cmake says why), and a loop cut short by the
# same race would give different numbers. Measured with that build on the loaded 2-core machine (load 8-10):
# joma.exp_invariant_exact_per_step at ci crashed in 1 to 4 of 6 runs, with batch=1 (more of its time in
# the racing loop per CPU second) in 2 of 6; the ctest's 8 runs at batch=1 failed in <see commit> of its runs. In an uninstrumented build it checks that the verdict does not depend on the thread count.
# Usage: cmake -DDYNCHECK=<dyncheck> -DCLAIM=<id> -DRUNS=<n> [-DPARAMS=name=value,...] -P threads_identical.cmake
set(param_args "")
if(PARAMS)
  string(REPLACE "," ";" params "${PARAMS}")
  foreach(param IN LISTS params)
    list(APPEND param_args --param "${param}")
  endforeach()
endif()
foreach(threads 1 2)
  if(threads EQUAL 1)
    set(runs 1)
  else()
    set(runs ${RUNS})
  endif()
  foreach(run RANGE 1 ${runs})
    execute_process(COMMAND "${DYNCHECK}" run ${CLAIM} --budget ci ${param_args} --threads ${threads} --quiet --json
                    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
    # 0 PASS, 1 FAIL, 4 INCONCLUSIVE are verdicts; anything else (a signal: "Segmentation fault") is not.
    if(NOT status MATCHES "^(0|1|4)$")
      message(FATAL_ERROR "${CLAIM} with --threads ${threads} (run ${run}): exit ${status}\n${errors}")
    endif()
    string(REGEX REPLACE "\"wall_seconds\": [-0-9.eE+]+" "\"wall_seconds\": <time>" output "${output}")
    if(threads EQUAL 1)
      set(reference "${output}")
      set(reference_status "${status}")
    elseif(NOT output STREQUAL reference OR NOT status STREQUAL reference_status)
      message(FATAL_ERROR "${CLAIM}: --threads 2 (run ${run}, exit ${status}) differs from --threads 1 "
                          "(exit ${reference_status})\n--- 1 thread:\n${reference}\n--- 2 threads:\n${output}")
    endif()
  endforeach()
endforeach()
message(STATUS "${CLAIM}: ${RUNS} runs on 2 threads, each identical to the 1-thread verdict")
