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

expect_run(0 "calib.sgd_mean_matches_gradient_flow" list)
expect_run(0 "\"family\": \"calib\"" list --json)
# A bad parameter: exit 2, naming the parameter and its range.
expect_run(2 "parameter 'd' must be an integer in \\[1, 16\\]" run calib --param d=0 --budget smoke)
expect_run(2 "parameter 'eta' must be a number in \\(0, 1\\]" run calib.sgd_mean_matches_gradient_flow --param eta=-1)
expect_run(2 "parameter 'eta' must be in \\(0, 1/lambda_max\\) = \\(0, 0.5\\)" run calib.sgd_mean_matches_gradient_flow --param eta=0.9)
expect_run(2 "not a number" run calib.balanced_factorisation_flow --param s=abc)
expect_run(2 "no selected claim has a parameter 'nonsense'" run calib --param nonsense=1)
expect_run(2 "no claim or family named 'nope'" run nope)
expect_run(2 "has no mutant 'nope'" run calib.balanced_factorisation_flow --mutant nope)
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
expect_run(2 "no batch in the range of parameter 'B' \\[1, 1e6\\] works for this instance"
           run scb.stage_two_l1_error_flat_in_T --param N=20 --param T=400 --param Q=20 --budget smoke)
