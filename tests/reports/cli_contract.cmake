# The command-line contract of README.md: exit codes and error messages.
function(expect_run expected_status expected_text)
  execute_process(COMMAND "${DYNCHECK}" ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status EQUAL expected_status)
    message(FATAL_ERROR "dyncheck ${ARGN}: exit ${status}, expected ${expected_status}\n${output}\n${errors}")
  endif()
  if(NOT "${output}${errors}" MATCHES "${expected_text}")
    message(FATAL_ERROR "dyncheck ${ARGN}: output lacks '${expected_text}'\n${output}\n${errors}")
  endif()
endfunction()

# Like expect_run, for input that must be rejected before any claim runs: no verdict line
# ("... margin ...") may appear, and nothing is written.
function(expect_rejected expected_text)
  expect_command_rejected("${expected_text}" "${DYNCHECK}" ${ARGN})
endfunction()
# The same for a whole command line (to set an environment variable with cmake -E env).
function(expect_command_rejected expected_text)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status EQUAL 2)
    message(FATAL_ERROR "dyncheck ${ARGN}: exit ${status}, expected 2\n${output}\n${errors}")
  endif()
  if(NOT "${output}${errors}" MATCHES "${expected_text}")
    message(FATAL_ERROR "dyncheck ${ARGN}: output lacks '${expected_text}'\n${output}\n${errors}")
  endif()
  if("${output}${errors}" MATCHES "margin")
    message(FATAL_ERROR "dyncheck ${ARGN}: a claim ran before the input was rejected\n${output}\n${errors}")
  endif()
endfunction()

expect_run(0 "calib.sgd_mean_matches_gradient_flow" list)
expect_run(0 "\"family\": \"calib\"" list --json)
# A bad parameter: exit 2, naming the parameter and its range.
expect_run(2 "parameter 'd' must be an integer in \\[1, 16\\]" run calib --param d=0 --budget smoke)
expect_run(2 "parameter 'eta' must be a number in \\(0, 1\\]" run calib.sgd_mean_matches_gradient_flow --param eta=-1)
expect_run(2 "parameter 'eta' must be in \\(0, 1/lambda_max\\) = \\(0, 0.5\\)" run calib.sgd_mean_matches_gradient_flow --param eta=0.9)
expect_run(2 "not a number in decimal notation" run calib.balanced_factorisation_flow --param s=abc)
expect_run(2 "no selected claim has a parameter 'nonsense'" run calib --param nonsense=1)
expect_run(2 "no claim or family named 'nope'" run nope)
expect_run(2 "has no mutant 'nope'" run calib.balanced_factorisation_flow --mutant nope)
expect_rejected("has no mutant 'nope'; its mutants are: "
                sweep calib.balanced_factorisation_flow --grid s=1,2 --mutant nope --out "${CMAKE_CURRENT_BINARY_DIR}/cli_contract_sweep_no_mutant")
expect_run(2 "budget" run calib --budget huge)
# Verdicts: a passing claim exits 0, a failing mutant 1, and --expect fail turns that into 0.
expect_run(0 "PASS" run calib.balanced_factorisation_flow --budget smoke)
expect_run(1 "FAIL" run calib.balanced_factorisation_flow --budget smoke --mutant rate_s_not_2s)
expect_run(0 "FAIL" run calib.balanced_factorisation_flow --budget smoke --mutant rate_s_not_2s --expect fail)
# A run that blows up is an ERROR verdict (exit 3), never a PASS: with batch 1 the per-sample
# step eta |x|^2 ~ eta d lambda = 15 amplifies the noise every step, so 500 steps of SGD overflow
# although the mean dynamics (eta lambda_max = 0.99) are stable.
expect_run(3 "ERROR" run calib.sgd_mean_matches_gradient_flow --param d=16 --param lambda_min=9.9
           --param lambda_max=9.9 --param eta=0.1 --param batch=1 --param t_end=50 --budget smoke)
# Parameters outside a claim's joint domain name the parameter and the range for the others.
expect_run(2 "parameter 'eta' must be in \\(0, 0.000666689\\] for s = 0.01, u0 = 10"
           run calib.balanced_factorisation_flow --param u0=10 --param s=0.01 --param eta=0.1 --budget smoke)
# scb: Q beyond the sparse range, and an instance no batch in the range of 'B' can serve.
expect_run(2 "parameter 'Q' must be in \\[1, T/4\\] = \\[1, 3\\] for T = 12"
           run scb.sgd_step_unbiased --param T=12 --param Q=4 --budget smoke)
expect_run(2 "no batch in the range of parameter 'B' \\[1, 1e6\\] works for every instance this point draws"
           run scb.stage_two_l1_error_flat_in_T --param N=20 --param T=400 --param Q=20 --budget smoke)

# --- Malformed input: exactly the plain decimal forms are accepted; the rest is exit 2 before
# any claim runs, naming the parameter, its range, and the text as written.
set(fast calib.sgd_mean_matches_gradient_flow --budget smoke --quiet)
set(d_range "parameter 'd' must be an integer in \\[1, 16\\] \\(dimension\\)")
foreach(bad "0x10" "0x1p-3" " 4" "4 " "inf" "nan" "" "4.5" "1e400" "1e-400")
  expect_rejected("${d_range}" run ${fast} --param "d=${bad}")
endforeach()
expect_rejected("got '0x10', which is not a number in decimal notation" run ${fast} --param d=0x10)
expect_rejected("got ' 4', which is not a number" run ${fast} "--param" "d= 4")
expect_rejected("got '', which is not a number" run ${fast} --param d=)
expect_rejected("got 1e-400, which is out of range" run ${fast} --param d=1e-400)
expect_rejected("got 1e400, which is out of range" run ${fast} --param d=1e400)
expect_rejected("got 4.5, which is not an integer \\(an integer may also be written in decimal notation with a zero fraction"
                run ${fast} --param d=4.5)
expect_rejected("parameter 's' must be a number in \\(0, 10\\] \\(target product\\); got 10.00000001"
                run calib.balanced_factorisation_flow --budget smoke --param s=10.00000001)
# An integer in another decimal form is the same value: d=4.0 and batch=8.0e0 are the defaults,
# and the run is the default run (same verdict lines, apart from the wall time).
execute_process(COMMAND "${DYNCHECK}" run ${fast} OUTPUT_VARIABLE default_run)
execute_process(COMMAND "${DYNCHECK}" run ${fast} --param d=4.0 --param batch=8.0e0 OUTPUT_VARIABLE same_run)
string(REGEX REPLACE "[0-9.]+ s\\)" "" default_run "${default_run}")
string(REGEX REPLACE "[0-9.]+ s\\)" "" same_run "${same_run}")
if(NOT default_run STREQUAL same_run OR NOT default_run MATCHES "margin")
  message(FATAL_ERROR "--param d=4.0 --param batch=8.0e0 is not the default run:\n${default_run}\n${same_run}")
endif()
# A repeated parameter is an error, not "the last one wins".
expect_rejected("parameter 'd' was given twice" run ${fast} --param d=3 --param d=4)
# A bad value for a claim that runs late in the selection stops the whole run before the first.
expect_rejected("parameter 'batch' must be an integer" run calib --budget smoke --quiet --param batch=0x40)
expect_rejected("parameter 'resolution' must be a number in \\(0, 1\\]" run calib --budget smoke --quiet
                --param resolution=1e400)
# --seed and DYNCHECK_SEED: one parser, a decimal integer in [0, 2^64 - 1].
set(seed_range "must be an integer in \\[0, 2\\^64 - 1\\] = \\[0, 18446744073709551615\\]")
foreach(bad "-1" "18446744073709551616" "99999999999999999999999" "0x10" " 1" "1 " "+1" "1e3" "abc")
  expect_rejected("--seed ${seed_range}; got" run ${fast} --seed "${bad}")
  expect_command_rejected("DYNCHECK_SEED ${seed_range}; got"
                  ${CMAKE_COMMAND} -E env "DYNCHECK_SEED=${bad}" "${DYNCHECK}" run ${fast})
endforeach()
set(passing calib.balanced_factorisation_flow --budget smoke --quiet)
expect_run(0 "PASS" run ${passing} --seed 18446744073709551615)
execute_process(COMMAND ${CMAKE_COMMAND} -E env DYNCHECK_SEED=0 "${DYNCHECK}" run ${passing} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "DYNCHECK_SEED=0: exit ${status}")
endif()
# --threads and DYNCHECK_THREADS: a decimal integer in [1, 1024].
foreach(bad "0" "1025" "100000" "-1" "0x2" " 2" "2.0" "abc")
  expect_rejected("--threads must be an integer in \\[1, 1024\\]; got" run ${fast} --threads "${bad}")
  expect_command_rejected("DYNCHECK_THREADS must be an integer in \\[1, 1024\\]; got"
                  ${CMAKE_COMMAND} -E env "DYNCHECK_THREADS=${bad}" "${DYNCHECK}" run ${fast})
endforeach()
expect_run(0 "PASS" run ${passing} --threads 1024)
# An empty value (a function's ARGN drops empty arguments, so these call dyncheck directly).
foreach(option --seed --threads)
  execute_process(COMMAND "${DYNCHECK}" run ${fast} ${option} "" RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE errors)
  if(NOT status EQUAL 2 OR NOT errors MATCHES "${option} must be an integer in \\[.*; got ''" OR output MATCHES "margin")
    message(FATAL_ERROR "dyncheck run ${option} '': exit ${status}\n${output}\n${errors}")
  endif()
endforeach()
foreach(variable DYNCHECK_SEED DYNCHECK_THREADS)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "${variable}=" "${DYNCHECK}" run ${fast} RESULT_VARIABLE status
                  OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status EQUAL 2 OR NOT errors MATCHES "${variable} must be an integer in \\[.*; got ''" OR output MATCHES "margin")
    message(FATAL_ERROR "${variable}='' dyncheck run: exit ${status}\n${output}\n${errors}")
  endif()
endforeach()
# --seeds of calibrate: the same integer rules.
expect_rejected("--seeds must be an integer in \\[1, 1000000\\]; got '0x10'"
                calibrate calib.sgd_mean_matches_gradient_flow --budget smoke --seeds 0x10)
expect_rejected("--seeds must be an integer in \\[1, 1000000\\]; got 0"
                calibrate calib.sgd_mean_matches_gradient_flow --budget smoke --seeds 0)

# --- dyncheck report: --out must be a directory (checked before any claim runs); every write is
# checked (exit 3 with the path and the OS error) and never replaces a good file with a partial one.
set(work "${CMAKE_CURRENT_BINARY_DIR}/cli_contract_work")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
set(report_args report calib.balanced_factorisation_flow --budget smoke --no-mutants --quiet)
file(WRITE "${work}/a_file" "not a directory\n")
expect_rejected("--out .*a_file exists and is not a directory" ${report_args} --out "${work}/a_file")
expect_rejected("--out .*a_file/sub: cannot create the directory" ${report_args} --out "${work}/a_file/sub")
# A good report, then the failures must leave it untouched.
expect_run(0 "wrote .*good/REPORT.md" ${report_args} --out "${work}/good")
foreach(file REPORT.md report.json)
  if(NOT EXISTS "${work}/good/${file}" OR EXISTS "${work}/good/${file}.partial")
    message(FATAL_ERROR "report: ${file} missing, or its .partial left behind")
  endif()
endforeach()
file(GLOB leftovers "${work}/good/*.partial" "${work}/good/plots/*.partial")
file(GLOB svgs "${work}/good/plots/*.svg")
if(leftovers OR NOT svgs)
  message(FATAL_ERROR "report: partial files left behind (${leftovers}) or no SVG written")
endif()
file(READ "${work}/good/REPORT.md" good_report)
# REPORT.md a directory: the rename fails; exit 3 naming the path and the OS error.
file(MAKE_DIRECTORY "${work}/dir/REPORT.md")
expect_run(3 "cannot write .*dir/REPORT.md .*: Is a directory" ${report_args} --out "${work}/dir")
if(EXISTS "${work}/dir/REPORT.md.partial")
  message(FATAL_ERROR "report: REPORT.md.partial left behind after a failed rename")
endif()
# A full disk: REPORT.md is written through REPORT.md.partial, here a link to /dev/full.
if(EXISTS /dev/full)
  file(CREATE_LINK /dev/full "${work}/good/REPORT.md.partial" SYMBOLIC)
  expect_run(3 "cannot write .*good/REPORT.md .*: No space left on device" ${report_args} --out "${work}/good")
  file(READ "${work}/good/REPORT.md" after)
  if(NOT after STREQUAL good_report)
    message(FATAL_ERROR "report: a failed write changed the existing REPORT.md")
  endif()
  file(CREATE_LINK /dev/full "${work}/good/report.json.partial" SYMBOLIC)
  expect_run(3 "cannot write .*good/report.json .*: No space left on device" ${report_args} --out "${work}/good")
  file(GLOB dats "${work}/good/plots/*.dat")
  list(GET dats 0 dat)
  file(CREATE_LINK /dev/full "${dat}.partial" SYMBOLIC)
  expect_run(3 "cannot write .*\\.dat .*: No space left on device" ${report_args} --out "${work}/good")
endif()
file(REMOVE_RECURSE "${work}")
