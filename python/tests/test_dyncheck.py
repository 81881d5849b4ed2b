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


def test_theory_joma_against_mpmath():
    import mpmath
    mpmath.mp.dps = 60
    Delta = np.array([[0.9, 0.3], [0.5, -0.2], [0.1, 0.05]])
    V0 = np.zeros((3, 2))
    zeta0 = np.zeros(3)
    kappa, eta_w = 0.7, 0.5
    out = dyncheck.theory.joma.erf_solution(Delta=Delta, V0=V0, zeta0=zeta0, kappa=kappa, eta_w=eta_w, t=[0.0, 0.5],
                                            digits=50)
    # t*_l = eta_w^-1 sqrt(pi / (2 kappa a_l)) erfc(0) for V0 = 0, zeta0 = 0 (specs/joma.md §3)
    for l in range(3):
        a = sum(mpmath.mpf(x) ** 2 for x in Delta[l])
        expected = mpmath.sqrt(mpmath.pi / (2 * mpmath.mpf(kappa) * a)) / mpmath.mpf(eta_w)
        assert abs(mpmath.mpf(out["blow_up_time"][l]) - expected) < mpmath.mpf(10) ** -45 * expected
    assert [mpmath.mpf(z) for z in out["zeta"][0]] == [0, 0, 0]
    double = dyncheck.theory.joma.erf_solution(Delta=Delta, V0=V0, zeta0=zeta0, kappa=kappa, eta_w=eta_w, t=[0.5])
    assert double["zeta"].shape == (1, 3)
    np.testing.assert_allclose(double["zeta"][0], [float(z) for z in out["zeta"][1]], rtol=1e-13)
    ratio = mpmath.mpf(0.4) / mpmath.mpf(0.8)
    assert abs(mpmath.mpf(dyncheck.theory.joma.zeta_at_first_blow_up(delta_norm=0.4, salient_delta_norm=0.8, digits=50))
               - mpmath.erfinv(ratio) ** 2) < mpmath.mpf(10) ** -45
    with pytest.raises(ValueError):
        dyncheck.theory.joma.zeta_at_first_blow_up(delta_norm=2.0, salient_delta_norm=1.0)
    with pytest.raises(ValueError):
        dyncheck.theory.joma.erf_solution(Delta=Delta, V0=V0, zeta0=zeta0, kappa=-1, eta_w=eta_w, t=[0.5])


def test_theory_scb_against_mpmath():
    import mpmath
    mpmath.mp.dps = 60
    eta, coupling, T = 0.3, 0.2, 50.0
    x, y = dyncheck.theory.scb.linearised_flow(t=[0.0, 3.0, 10.0], eta=eta, coupling=coupling, T=T, digits=50)
    r = mpmath.sqrt(mpmath.mpf(eta) * mpmath.mpf(coupling))
    for t, xi, yi in zip([0, 3, 10], x, y):
        assert abs(mpmath.mpf(xi) - mpmath.mpf(eta) / r * mpmath.sinh(r * t) / T) < mpmath.mpf(10) ** -45
        assert abs(mpmath.mpf(yi) - (mpmath.cosh(r * t) - 1) / T) < mpmath.mpf(10) ** -45
    xg, yg = dyncheck.theory.scb.linearised_gd(t=[0, 1, 7], eta=eta, coupling=coupling, T=T)
    assert isinstance(xg, np.ndarray) and xg[1] == pytest.approx(eta / T) and yg[1] == 0
    assert dyncheck.theory.scb.growth_rate(eta=0.5, rho_bar=0.4, eta_A_K_P=0.2) == pytest.approx(0.2, rel=1e-15)
    with pytest.raises(ValueError):
        dyncheck.theory.scb.linearised_flow(t=[1.0], eta=-1, coupling=0.2, T=T)


def test_progress_in_a_notebook_updates_one_display(monkeypatch):
    """In a Jupyter kernel the default progress is one display updated in place. IPython is not a Debian
    dependency here, so the kernel and IPython.display are stand-ins that record the calls."""
    import types
    updates = []

    class Handle:
        def update(self, text):
            updates.append(text)

    display_module = types.ModuleType("IPython.display")
    display_module.display = lambda text, display_id=False: (updates.append(text), Handle())[1]
    ipython = types.ModuleType("IPython")
    ipython.display = display_module
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)
    # The display is polled every 50 ms, so the run must last a few polls: at ci with t_end = 20 its 512
    # replicates take ~0.3 s (at smoke the claim now ends in ~30 ms, before the first poll).
    verdict = dyncheck.run("calib.sgd_mean_matches_gradient_flow", budget="ci", params={"t_end": 20})
    assert verdict.outcome in ("PASS", "INCONCLUSIVE")
    assert updates[0].endswith("starting") and len(updates) >= 2
    assert updates[-1].startswith("calib.sgd_mean_matches_gradient_flow: ")
