"""ctest python:pytest (issue #17). Environment from CMake: PYTHONPATH (the build tree's package),
DYNCHECK_CLI (the dyncheck executable), DYNCHECK_EXAMPLES (python/examples)."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import dyncheck

CLI = os.environ["DYNCHECK_CLI"]
EXAMPLES = os.environ["DYNCHECK_EXAMPLES"]


def cli_json(*args):
    return json.loads(subprocess.run([CLI, *args], check=False, capture_output=True, text=True).stdout)


def test_registry_matches_the_cli_list():
    assert dyncheck.claims() == cli_json("list", "--json")
    assert set(dyncheck.families()) == {c["family"] for c in dyncheck.claims()}


@pytest.mark.parametrize("claim,params", [
    ("calib.sgd_mean_matches_gradient_flow", {"eta": 0.05, "d": 3}),
    ("calib.balanced_factorisation_flow", {}),
    ("joma.linear_invariant_exact_per_step", {}),
])
def test_a_run_equals_the_cli_json_bit_for_bit(claim, params):
    verdict = dyncheck.run(claim, params=params, budget="smoke", seed=11, threads=1)
    args = ["run", claim, "--budget", "smoke", "--seed", "11", "--threads", "2", "--json", "--quiet"]
    for name, value in params.items():
        args += ["--param", f"{name}={value!r}"]
    (expected,) = cli_json(*args)
    got = verdict.to_dict()
    got.pop("wall_seconds")
    expected.pop("wall_seconds")
    assert got == expected  # every double read back from the same shortest decimal text


def test_verdict_fields_and_series():
    verdict = dyncheck.run("calib.sgd_mean_matches_gradient_flow", budget="smoke", seed=5)
    assert verdict.outcome in {"PASS", "INCONCLUSIVE"}
    assert verdict.margin == max(c.margin for c in verdict.comparisons)
    assert verdict.seed == 5 and verdict.budget == "smoke"
    curve = verdict.plots[0].curves[0]
    assert isinstance(curve.x, np.ndarray) and curve.x.dtype == float and len(curve.x) == len(curve.y)
    assert "tolerance" in verdict.tolerance_table()


def test_a_family_gives_a_list_and_a_mutant_fails():
    verdicts = dyncheck.run("calib", budget="smoke", seed=2)
    assert [v.claim for v in verdicts] == [c["id"] for c in dyncheck.claims() if c["family"] == "calib"]
    mutant = dyncheck.run("calib.balanced_factorisation_flow", budget="ci", mutant="rate_s_not_2s")
    assert mutant.outcome == "FAIL" and mutant.mutant == "rate_s_not_2s"


@pytest.mark.parametrize("kwargs,fragment", [
    ({"params": {"eta": 2}}, "must be a number in (0, 1]"),
    ({"params": {"eta": "0x1"}}, "eta"),
    ({"params": {"no_such": 1}}, "no_such"),
    ({"params": {"eta": True}}, "eta"),
    ({"budget": "huge"}, "budget"),
    ({"seed": -1}, "seed"),
    ({"threads": 0}, "[1, 1024]"),
])
def test_bad_input_raises_value_error_with_the_cli_message(kwargs, fragment):
    with pytest.raises(ValueError) as error:
        dyncheck.run("calib.sgd_mean_matches_gradient_flow", **kwargs)
    assert fragment in str(error.value)


def test_the_value_error_text_is_the_clis():
    with pytest.raises(ValueError) as error:
        dyncheck.run("calib.sgd_mean_matches_gradient_flow", params={"eta": 2})
    cli = subprocess.run([CLI, "run", "calib.sgd_mean_matches_gradient_flow", "--param", "eta=2"],
                         capture_output=True, text=True)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"dyncheck: {error.value}"


def test_keyboard_interrupt_is_delivered_within_a_second():
    script = ("import dyncheck, sys\n"
              "print('started', flush=True)\n"
              "try:\n"
              "    dyncheck.run('calib', budget='ci', threads=1)\n"
              "except KeyboardInterrupt:\n"
              "    print('interrupted', flush=True)\n"
              "    sys.exit(7)\n")
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ))
    assert process.stdout.readline().strip() == "started"
    time.sleep(0.5)  # inside the run
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    line = process.stdout.readline().strip()
    elapsed = time.monotonic() - sent
    process.wait(timeout=60)
    assert line == "interrupted" and process.returncode == 7
    assert elapsed < 1.0, f"KeyboardInterrupt took {elapsed:.2f} s"


def test_sweep_returns_the_grid_as_arrays(tmp_path):
    result = dyncheck.sweep("calib.discretisation_gap_first_order", grid={"eta": "0.05:0.4:3:log", "batch": [16, 64]},
                            budget="smoke", seed=1, out=str(tmp_path / "s"))
    assert result.margin.shape == (3, 2) and result.outcome.shape == (3, 2)
    np.testing.assert_allclose(result.axes["eta"][[0, -1]], [0.05, 0.4])
    assert (tmp_path / "s" / "sweep.csv").exists()
    cli = subprocess.run([CLI, "sweep", "calib.discretisation_gap_first_order", "--grid", "eta=0.05:0.4:3:log",
                          "--grid", "batch=16,64", "--budget", "smoke", "--seed", "1", "--out", str(tmp_path / "c"),
                          "--quiet"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert (tmp_path / "s" / "sweep.json").read_text() == (tmp_path / "c" / "sweep.json").read_text()


@pytest.mark.parametrize("example", ["theory_vs_simulation.py", "tolerance_breakdown.py"])
def test_examples_run(example, tmp_path):
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, example), str(tmp_path / "out.png")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "margin" in done.stdout
