# Issue #10 §1: the report must not depend on which libm variant glibc picks for this CPU.
# Runs the smoke report twice, normally and with GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA (glibc
# 2.36 then takes its SSE2 exp/log/pow/sin/tanh/... instead of the FMA+AVX2 ones), and requires the
# same scrubbed REPORT.md, report.json and plots. A probe (libm_probe) first shows whether the
# tunable changes glibc's own results on this CPU; on a CPU without FMA or AVX2 both runs use the
# SSE2 variants and the comparison proves nothing, which the output then says.
#
#   cmake -DDYNCHECK=<dyncheck> -DPROBE=<libm_probe> -DOUT=<scratch dir> -P libm_variants.cmake
set(tunable "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA")

function(run_probe env out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} "${PROBE}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "libm_probe failed (${status}): ${errors}")
  endif()
  set(${out} "${output}" PARENT_SCOPE)
endfunction()
run_probe("GLIBC_TUNABLES=" default_probe)
run_probe("${tunable}" sse2_probe)
string(REGEX MATCH "glibc [0-9a-f]+" glibc_default "${default_probe}")
string(REGEX MATCH "glibc [0-9a-f]+" glibc_sse2 "${sse2_probe}")
string(REGEX MATCH "portable [0-9a-f]+" portable_default "${default_probe}")
string(REGEX MATCH "portable [0-9a-f]+" portable_sse2 "${sse2_probe}")
if(NOT portable_default STREQUAL portable_sse2)
  message(FATAL_ERROR "dyncheck::portable changed with ${tunable}: ${portable_default} vs ${portable_sse2}")
endif()
if(glibc_default STREQUAL glibc_sse2)
  message(STATUS "note: ${tunable} does not change glibc's results on this CPU (no FMA+AVX2 variant in use), "
                 "so the report comparison below cannot show a libm dependence here")
else()
  message(STATUS "control: ${tunable} changes glibc's exp/log/pow/sin/tanh (${glibc_default} vs ${glibc_sse2}); "
                 "dyncheck::portable unchanged (${portable_default})")
endif()

# The claims whose numbers are promised identical on every machine: all but those that declare their
# numbers machine-dependent (ClaimInfo::machine_dependent, e.g. libtorch's CPU-specific kernels), which
# promise reproducibility on one machine only and are left out here, with a line saying so.
execute_process(COMMAND "${DYNCHECK}" list --json RESULT_VARIABLE status OUTPUT_VARIABLE claims_json)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dyncheck list --json exited with ${status}")
endif()
set(portable_claims "")
string(JSON count LENGTH "${claims_json}")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${claims_json}" ${i} id)
  string(JSON why ERROR_VARIABLE portable GET "${claims_json}" ${i} machine_dependent)
  if(portable)
    list(APPEND portable_claims "${id}")
  else()
    message(STATUS "left out (numbers machine-dependent): ${id}: ${why}")
  endif()
endforeach()

function(run_report name env)
  set(dir "${OUT}/${name}")
  file(REMOVE_RECURSE "${dir}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env}
                          "${DYNCHECK}" report ${portable_claims} --budget smoke --seed 20261122 --threads 2 --quiet
                          --out "${dir}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  # As in tests/reports/golden_report.cmake: a smoke budget may be INCONCLUSIVE (exit 1 or 4).
  if(status GREATER 1 AND NOT status EQUAL 4)
    message(FATAL_ERROR "dyncheck report (${env}) exited with ${status}\n${output}\n${errors}")
  endif()
endfunction()
run_report(default "GLIBC_TUNABLES=")
run_report(sse2 "${tunable}")

file(GLOB_RECURSE files RELATIVE "${OUT}/default" "${OUT}/default/*")
list(SORT files)
if(NOT files)
  message(FATAL_ERROR "dyncheck report wrote nothing into ${OUT}/default")
endif()
set(differences "")
foreach(file IN LISTS files)
  if(NOT EXISTS "${OUT}/sse2/${file}")
    string(APPEND differences "  ${file}: missing in the ${tunable} run\n")
    continue()
  endif()
  file(READ "${OUT}/default/${file}" a)
  file(READ "${OUT}/sse2/${file}" b)
  foreach(var a b)
    # Times are the only thing allowed to differ (the scrub of golden_report.cmake).
    string(REGEX REPLACE "[0-9]+\\.[0-9][0-9][0-9] s" "<time> s" ${var} "${${var}}")
    string(REGEX REPLACE "\"wall_seconds\": [-0-9.eE+]+" "\"wall_seconds\": <time>" ${var} "${${var}}")
  endforeach()
  if(NOT a STREQUAL b)
    string(APPEND differences "  ${file}: diff -u ${OUT}/default/${file} ${OUT}/sse2/${file}\n")
  endif()
endforeach()
if(differences)
  message(FATAL_ERROR "the smoke report depends on glibc's libm variant (${tunable}):\n${differences}")
endif()
list(LENGTH files count)
message(STATUS "the smoke report (${count} files) is identical with and without ${tunable}")
