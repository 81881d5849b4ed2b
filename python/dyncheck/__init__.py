"""dyncheck from Python: the same theory, claims and verdicts as the command line.

Built on the C++ library (the extension module ``_dyncheck``); nothing here re-implements a claim.
A verdict read here is the CLI's ``dyncheck run --json`` for the same claim, parameters, budget and
seed, number for number.

    import dyncheck
    dyncheck.claims()                                   # the registry
    v = dyncheck.run("calib.sgd_mean_matches_gradient_flow", params={"eta": 0.01}, budget="smoke")
    v.outcome, v.margin, v.comparisons[0].tolerance     # the verdict and why
    v.plots[0].curves[0].x                              # plotted series as numpy arrays
    dyncheck.sweep("calib.discretisation_gap_first_order", grid={"eta": "0.05:0.8:6:log"})

Bad input raises ValueError with the CLI's message (the parameter and its valid range). A claim's
ERROR verdict is a verdict, not an exception. Runs release the GIL; Ctrl-C raises
KeyboardInterrupt within 50 ms and asks the run to stop at its next progress report.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _dyncheck

__all__ = ["claims", "families", "run", "sweep", "theory", "Verdict", "Comparison", "Plot", "Curve", "SweepResult",
           "version"]

version: str = _dyncheck.version

# dyncheck.theory.<family>: the theory functions, on the same C++ templates as the claims
# (python/src/theory/<family>.cpp; help(dyncheck.theory.<family>) lists them). For example
#   dyncheck.theory.joma.erf_solution(Delta=, V0=, zeta0=, kappa=, eta_w=, t=[...], digits=None|50)
#       -> {"zeta": (len(t), M_C), "V": [M_C x K per t], "blow_up_time": [M_C]}  (specs/joma.md §3)
#   dyncheck.theory.joma.nonlinear_flow(mu=, v0=, t=[...], x=) -> {"v", "entropy", "error_estimate", ...}
#   dyncheck.theory.scb.linearised_flow(t=[...], eta=, coupling=, T=) -> (x, y)    (specs/scb.md §4.3)
#   dyncheck.theory.scb.reduced_flow(P=, mu=, q=, eta=, eta_A=, m0=, alpha0=, nu0=, beta0=, omega0=, t=[...])
#   dyncheck.theory.topic.stage1_excluded_keys(T=, v=, lambda_=, alpha=) -> {"diag", "same", "diff", "mask"}
#   dyncheck.theory.kernels.value_only(B=, W0=, O=, Y=, eta=, t=[steps]) -> {"loss", "floor", ...}
#   dyncheck.theory.kernels.conditions(X=[...], Q=, K=, V=, O=, kernel="softmax") -> {"lambda_V", "lambda_Q", ...}
#   dyncheck.theory.multihead.crude_estimates(theta=[...], w=[...], k=) -> {"c1", "c2", ...}
# digits=50 returns 50-significant-digit decimal strings (for decimal.Decimal or mpmath.mpf).
import types as _types

theory = _types.ModuleType("dyncheck.theory", "Theory functions of each family (numpy-returning; digits=50 for strings)")
for _name in dir(_dyncheck):
    if _name.startswith("theory_"):
        setattr(theory, _name[len("theory_"):], getattr(_dyncheck, _name))
sys.modules["dyncheck.theory"] = theory

try:  # numpy is optional for the registry, needed for plotted series
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None


def _array(values: Sequence[Any]):
    numbers = [float("nan") if v == "NaN" else float(v) if not isinstance(v, str) else
               (float("inf") if v == "Infinity" else float("-inf")) for v in values]
    return _np.asarray(numbers, dtype=float) if _np is not None else numbers


def claims() -> List[Dict[str, Any]]:
    """Every registered claim: id, family, paper, source, tag, statement, latex, simulation,
    params (name, default, range, min, max, integer, log_scale, description), mutants."""
    return json.loads(_dyncheck.claims_json())


def families() -> List[str]:
    """The registered families, in registration order."""
    return json.loads(_dyncheck.families_json())


@dataclass(frozen=True)
class Comparison:
    """One compared quantity: theory (± its numerical error) against the measurement (± its
    half-width), with the tolerance terms and their reasons."""
    quantity: str
    relation: str
    theory: float
    theory_error: float
    measured: float
    half_width: float
    discrepancy: float
    tolerance: Dict[str, Any]
    resolution: Dict[str, Any]
    margin: float
    outcome: str

    @staticmethod
    def _from(d: Dict[str, Any]) -> "Comparison":
        num = lambda v: float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))
        return Comparison(d["quantity"], d["relation"], num(d["theory"]), num(d["theory_error"]),
                          num(d["measured"]), num(d["half_width"]), num(d["discrepancy"]), d["tolerance"],
                          d["resolution"], num(d["margin"]), d["outcome"])


@dataclass(frozen=True)
class Curve:
    label: str
    style: str  # "line" (theory), "points" (simulation), "band" (simulation mean with band), "image" (heatmap cells)
    x: Any
    y: Any
    lower: Any
    upper: Any


@dataclass(frozen=True)
class Plot:
    name: str
    title: str
    x_label: str
    y_label: str
    log_x: bool
    log_y: bool
    curves: List[Curve]

    def draw(self, ax=None):
        """Draws the plot with matplotlib (theory lines, simulation points with error bars, bands)."""
        import matplotlib.pyplot as plt
        ax = ax if ax is not None else plt.gca()
        for c in self.curves:
            if c.style == "band":
                ax.fill_between(c.x, c.lower, c.upper, alpha=0.25)
                ax.plot(c.x, c.y, ".-", label=c.label)
            elif c.style == "image":
                # Heatmap cells at (column x, row y), value in lower (= upper) on [-1, 1]; rows downwards.
                ax.scatter(c.x, c.y, c=c.lower, cmap="bwr", vmin=-1, vmax=1, marker="s", label=c.label)
                if not ax.yaxis_inverted():
                    ax.invert_yaxis()
            elif c.style == "points":
                if len(c.lower):
                    ax.errorbar(c.x, c.y, yerr=[c.y - c.lower, c.upper - c.y], fmt="o", label=c.label)
                else:
                    ax.plot(c.x, c.y, "o", label=c.label)
            else:
                ax.plot(c.x, c.y, "-", label=c.label)
        ax.set_title(self.title)
        ax.set_xlabel(self.x_label)
        ax.set_ylabel(self.y_label)
        if self.log_x:
            ax.set_xscale("log")
        if self.log_y:
            ax.set_yscale("log")
        ax.legend()
        return ax


@dataclass
class Verdict:
    """A claim's verdict: outcome (PASS, FAIL, INCONCLUSIVE, ERROR), margin (largest discrepancy /
    tolerance), every comparison, the plotted series, the parameters and seed. ``to_dict()`` is
    exactly one element of the CLI's ``dyncheck run --json`` output."""
    claim: str
    outcome: str
    margin: float
    comparisons: List[Comparison]
    plots: List[Plot]
    params: Dict[str, float]
    seed: int
    budget: str
    notes: List[str]
    mutant: Optional[str] = None
    error: Optional[str] = None
    _json: Dict[str, Any] = field(default_factory=dict, repr=False)

    @staticmethod
    def _from(d: Dict[str, Any]) -> "Verdict":
        plots = [Plot(p["name"], p["title"], p["x_label"], p["y_label"], p["log_x"], p["log_y"],
                      [Curve(c["label"], c["style"], _array(c["x"]), _array(c["y"]), _array(c["lower"]),
                             _array(c["upper"])) for c in p["curves"]]) for p in d["plots"]]
        margin = d["margin"]
        return Verdict(d["claim"], d["outcome"], float(margin) if not isinstance(margin, str) else float("nan"),
                       [Comparison._from(c) for c in d["comparisons"]], plots, dict(d["params"]), d["seed"],
                       d["budget"], list(d["notes"]), d.get("mutant"), d.get("error"), d)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(json.dumps(self._json))

    @property
    def passed(self) -> bool:
        return self.outcome == "PASS"

    def __str__(self) -> str:
        name = self.claim + (f" [mutant {self.mutant}]" if self.mutant else "")
        return f"{self.outcome:<12} {name}  margin {self.margin:.3g}  ({len(self.comparisons)} comparisons)"

    def tolerance_table(self) -> str:
        """Each comparison: theory, measurement, discrepancy and the tolerance terms."""
        rows = []
        for c in self.comparisons:
            t = c.tolerance
            rows.append(f"{c.outcome:<12} {c.quantity}\n"
                        f"    theory {c.theory:.6g} ± {c.theory_error:.2g}   measured {c.measured:.6g} ± {c.half_width:.2g}\n"
                        f"    discrepancy {c.discrepancy:.3g}  tolerance {t['total']:.3g} = numerical "
                        f"{t['numerical']['value']:.3g} + bias {t['bias']['value']:.3g} + statistical "
                        f"{t['statistical']['value']:.3g}   margin {c.margin:.3g}")
        return "\n".join(rows)


class Verdicts(list):
    """A list of verdicts that prints one line each."""

    def __str__(self) -> str:
        return "\n".join(str(v) for v in self)

    __repr__ = __str__


def _param_texts(params: Optional[Dict[str, Any]]) -> List[str]:
    texts = []
    for name, value in (params or {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"parameter '{name}': give a number (or its decimal text), got {value!r}")
        # repr of a float is its shortest round-trip decimal text, which the CLI's parser accepts.
        texts.append(f"{name}={value if isinstance(value, str) else repr(value)}")
    return texts


def _optional_text(name: str, value: Optional[int]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return str(value)  # a negative value gets the CLI's range message


def _notebook_progress(label: str) -> Optional[Callable[[int, int], None]]:
    """In a Jupyter kernel (ipykernel loaded): one output line, updated in place through IPython's
    display handle. None elsewhere, or where IPython's display cannot be imported."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        from IPython.display import display
    except ImportError:
        return None
    handle = display(f"{label}: starting", display_id=True)
    if handle is None:
        return None

    def show(done: int, total: int) -> None:
        handle.update(f"{label}: {done}/{total}")

    return show


def _terminal_progress(label: str) -> Optional[Callable[[int, int], None]]:
    """The default progress display: a line updated in place on a terminal, or in a notebook."""
    notebook = _notebook_progress(label)
    if notebook is not None:
        return notebook
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\r\033[K{label}: {done}/{total}")
        sys.stderr.flush()

    return show


def run(claim_or_family: Union[str, Iterable[str]], params: Optional[Dict[str, Any]] = None, budget: str = "ci",
        seed: Optional[int] = None, threads: Optional[int] = None, mutant: Optional[str] = None,
        progress: Optional[Callable[[int, int], None]] = None) -> Union[Verdict, Verdicts]:
    """Runs a claim (returns its Verdict) or a family or several ids (returns a list of Verdicts).

    params: {name: value} overrides, checked against each claim's declared range (ValueError).
    budget: "smoke", "ci" or "full". seed: the master seed (default DYNCHECK_SEED or 20261122).
    threads: worker threads (results do not depend on it). mutant: a deliberately wrong theory.
    progress: called as progress(done, total) while the run goes (default: a line on a terminal, or an
        output line updated in place in a Jupyter notebook).
    """
    selectors = [claim_or_family] if isinstance(claim_or_family, str) else list(claim_or_family)
    label = ", ".join(selectors)
    text = _dyncheck.run_json(selectors, _param_texts(params), budget, _optional_text("seed", seed),
                              _optional_text("threads", threads), mutant,
                              progress if progress is not None else _terminal_progress(label))
    verdicts = Verdicts(Verdict._from(d) for d in json.loads(text))
    single = isinstance(claim_or_family, str) and claim_or_family in {c["id"] for c in claims()}
    return verdicts[0] if single else verdicts


@dataclass
class SweepResult:
    """A sweep's grid as numpy arrays: ``axes`` maps each axis name to its values, ``margin`` and
    ``outcome`` have one entry per grid point in the grid's shape (last axis fastest); ``points``
    holds every point's full record (comparisons included), ``directory`` the files."""
    claim: str
    axes: Dict[str, Any]
    margin: Any
    outcome: Any
    points: List[Dict[str, Any]]
    directory: str


def sweep(claim: str, grid: Union[Dict[str, Any], Sequence[str]], params: Optional[Dict[str, Any]] = None,
          budget: str = "ci", seed: Optional[int] = None, threads: Optional[int] = None, out: Optional[str] = None,
          resume: bool = False, progress: Optional[Callable[[int, int], None]] = None) -> SweepResult:
    """Runs ``claim`` at every point of ``grid`` (as ``dyncheck sweep``): grid is {name: values} with
    values a list of numbers or a "lo:hi:n[:log]" string, or a list of "name=..." strings. The files
    (points.jsonl, sweep.json, sweep.csv, sweep.svg) go to ``out`` (default: a new temporary folder)."""
    if isinstance(grid, dict):
        texts = []
        for name, values in grid.items():
            if isinstance(values, str):
                texts.append(f"{name}={values}")
            else:
                texts.append(f"{name}=" + ",".join(v if isinstance(v, str) else repr(v) for v in values))
    else:
        texts = list(grid)
    directory = out if out is not None else tempfile.mkdtemp(prefix="dyncheck-sweep-")
    if out is None:
        os.rmdir(directory)  # the sweep creates it
    text = _dyncheck.sweep_json(claim, texts, _param_texts(params), budget, _optional_text("seed", seed),
                                _optional_text("threads", threads), directory, resume, version,
                                progress if progress is not None else _terminal_progress(claim))
    data = json.loads(text)
    header, points = data["header"], data["points"]
    shape = [len(a["values"]) for a in header["axes"]]
    axes = {a["name"]: _array([float(v) for v in a["values"]]) for a in header["axes"]}
    margins = [float(p["margin"]) if isinstance(p.get("margin"), (int, float)) else float("nan") for p in points]
    outcomes = [p["outcome"] for p in points]
    if _np is not None:
        margin = _np.asarray(margins, dtype=float).reshape(shape)
        outcome = _np.asarray(outcomes, dtype=object).reshape(shape)
    else:  # pragma: no cover
        margin, outcome = margins, outcomes
    return SweepResult(claim, axes, margin, outcome, points, directory)
