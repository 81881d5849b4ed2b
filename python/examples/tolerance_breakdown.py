"""Run a claim at your own parameters and print why it passed or failed: for every comparison the
theory, the measurement, and the tolerance split into numerical error, bias and statistical
half-width (paste into a notebook).

    PYTHONPATH=build/release/python /usr/bin/python3 python/examples/tolerance_breakdown.py
"""
import dyncheck

claim = "calib.discretisation_gap_first_order"
info = next(c for c in dyncheck.claims() if c["id"] == claim)
print(info["statement"])
for p in info["params"]:
    print(f"  {p['name']:>12} = {p['default']:<8g} {p['range']}: {p['description']}")

verdict = dyncheck.run(claim, params={"eta": 0.2, "t": 1.5}, budget="smoke", seed=3)
print(verdict)
print(verdict.tolerance_table())
