"""Plot a claim's theory curve against its simulation band (paste into a notebook).

    PYTHONPATH=build/release/python /usr/bin/python3 python/examples/theory_vs_simulation.py [out.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")  # in a notebook, leave the backend alone
import matplotlib.pyplot as plt

import dyncheck

verdict = dyncheck.run("calib.sgd_mean_matches_gradient_flow", params={"eta": 0.05, "d": 3}, budget="smoke", seed=1)
print(verdict)
fig, ax = plt.subplots(figsize=(7, 4))
verdict.plots[0].draw(ax)  # theory lines, simulation means with their bands
fig.tight_layout()
out = sys.argv[1] if len(sys.argv) > 1 else "theory_vs_simulation.png"
fig.savefig(out)
print("wrote", out)
