# A mutant's ctest: passes exactly when the mutant's verdict, saved by its claim's test
# (`dyncheck run <claim> --save-variants DIR`, the fixture that runs first), is FAIL.
# -DVERDICTS=<DIR>/<claim>.json -DCLAIM=<id> -DMUTANT=<name>
if(NOT EXISTS "${VERDICTS}")
  message(FATAL_ERROR "no saved verdicts for ${CLAIM} at ${VERDICTS}: its claim test did not run")
endif()
file(READ "${VERDICTS}" verdicts)
string(JSON count LENGTH "${verdicts}")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON mutant ERROR_VARIABLE no_mutant GET "${verdicts}" ${i} mutant)
  if(mutant STREQUAL "${MUTANT}")
    string(JSON outcome GET "${verdicts}" ${i} outcome)
    string(JSON margin GET "${verdicts}" ${i} margin)
    if(outcome STREQUAL "FAIL")
      message(STATUS "FAIL (as it must) ${CLAIM} [mutant ${MUTANT}] margin ${margin}")
      return()
    endif()
    message(FATAL_ERROR "mutant ${MUTANT} of ${CLAIM} is ${outcome} (margin ${margin}), not FAIL: the claim cannot "
                        "detect the error it exists for. Reproduce: dyncheck run ${CLAIM} --budget ci --mutant ${MUTANT}")
  endif()
endforeach()
message(FATAL_ERROR "mutant ${MUTANT} not among the saved verdicts of ${CLAIM} (${VERDICTS})")
