cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
# Writes the smoke report with THREADS threads into OUT, scrubs times, and compares each claim's
# files (claims/<id>.md and claims/<id>.json, plot series thinned to 12 points) with its approved
# copy in GOLDEN_DIR: one golden file per claim and format, so a change shows exactly which claim
# moved and adding a claim changes no other claim's file.
# To approve a deliberate change: DYNCHECK_APPROVE=1 ctest -R golden (also removes files of claims
# that no longer exist).
# A claim that declares its numbers machine-dependent (ClaimInfo::machine_dependent, "machine_dependent"
# in its JSON: e.g. libtorch/OpenBLAS pick CPU-specific kernels at run time) is compared with every
# number replaced by <n>: its structure, ids, verdicts, labels and texts must match, its numbers need
# not. A claim whose external input is missing on this machine ("input_unavailable", e.g. no Brown
# corpus) is not compared (a line says so) and its approved files are kept.
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${DYNCHECK}" report --budget smoke --seed 20261122 --threads ${THREADS} --quiet --out "${OUT}"
                        --thin-plot-series 12
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
# The exit status is not part of the golden contract (a smoke budget may be INCONCLUSIVE);
# a crash or a usage error is.
if(status GREATER 1 AND NOT status EQUAL 4)
  message(FATAL_ERROR "dyncheck report exited with ${status}\n${output}\n${errors}")
endif()
foreach(file REPORT.md report.json)
  if(NOT EXISTS "${OUT}/${file}")
    message(FATAL_ERROR "dyncheck report did not write ${file}")
  endif()
endforeach()

file(GLOB received_files RELATIVE "${OUT}/claims" "${OUT}/claims/*.md" "${OUT}/claims/*.json")
if(NOT received_files)
  message(FATAL_ERROR "dyncheck report wrote no claims/<id>.md or .json")
endif()
set(differences "")
set(approved_names "")
foreach(name IN LISTS received_files)
  file(READ "${OUT}/claims/${name}" received)
  string(REGEX REPLACE "\\.(md|json)$" "" claim_id "${name}")
  file(READ "${OUT}/claims/${claim_id}.json" claim_json)
  string(JSON machine_dependent ERROR_VARIABLE portable GET "${claim_json}" info machine_dependent)
  string(JSON unavailable ERROR_VARIABLE available GET "${claim_json}" verdict input_unavailable)
  set(golden "${GOLDEN_DIR}/${name}.approved.txt")
  list(APPEND approved_names "${name}.approved.txt")
  if(NOT available AND unavailable)
    string(JSON error GET "${claim_json}" verdict error)
    message(STATUS "not compared: ${name}: ${error}")
    continue()
  endif()
  # Every time is written "<seconds>.<3 digits> s" in Markdown and as "wall_seconds" in JSON.
  string(REGEX REPLACE "[0-9]+\\.[0-9][0-9][0-9] s" "<time> s" received "${received}")
  string(REGEX REPLACE "\"wall_seconds\": [-0-9.eE+]+" "\"wall_seconds\": <time>" received "${received}")
  if(NOT portable)
    # Machine-dependent numbers: every number (digits with optional sign, point and exponent) -> <n>.
    string(REGEX REPLACE "-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?" "<n>" received "${received}")
    message(STATUS "compared without its numbers: ${name} (machine-dependent: ${machine_dependent})")
  endif()
  if(DEFINED ENV{DYNCHECK_APPROVE})
    file(WRITE "${golden}" "${received}")
  endif()
  if(NOT EXISTS "${golden}")
    string(APPEND differences "\n  no approved file ${golden} (new claim? run with DYNCHECK_APPROVE=1)")
    continue()
  endif()
  file(READ "${golden}" approved)
  if(NOT received STREQUAL approved)
    file(WRITE "${OUT}/claims/${name}.received.txt" "${received}")
    string(APPEND differences "\n  diff -u ${golden} ${OUT}/claims/${name}.received.txt")
  endif()
endforeach()
file(GLOB approved_files RELATIVE "${GOLDEN_DIR}" "${GOLDEN_DIR}/*.approved.txt")
foreach(name IN LISTS approved_files)
  if(NOT name IN_LIST approved_names)
    if(DEFINED ENV{DYNCHECK_APPROVE})
      file(REMOVE "${GOLDEN_DIR}/${name}")
    else()
      string(APPEND differences "\n  ${GOLDEN_DIR}/${name}: approved, but the report has no such claim")
    endif()
  endif()
endforeach()
if(differences)
  message(FATAL_ERROR "claims' reports differ from their approved copies:${differences}")
endif()
file(GLOB svgs "${OUT}/plots/*.svg")
if(NOT svgs)
  message(FATAL_ERROR "no SVG plot written")
endif()
