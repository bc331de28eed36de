"""Sensitivity: which sampled parameters of a sweep move its outcomes, with SALib's indices and their noise.

The sweep's design (`[sweep] method` in the scenario, recorded in sweep.json) picks the analysis:

- Latin hypercube (`lhs`, the default): SALib's moment-independent delta (Borgonovo; Plischke's estimator, with a
  bootstrap confidence interval) and RBD-FAST first-order indices (with a bootstrap interval), both valid on any
  random design, plus scipy's Spearman rank correlation for the direction of the effect. A dummy parameter the model
  never reads is analysed beside the real ones: an index not clearly above the dummy's is noise (greyed).
- Sobol (`sobol`): SALib's Sobol' analysis of the Saltelli design: first-order (S1), total (ST) and second-order
  (S2) indices with bootstrap intervals; an index whose interval reaches zero is greyed.
- Morris (`morris`): SALib's elementary effects: mu* (mean absolute effect, with its interval), mu and sigma (the
  spread of the effects: interactions or non-linearity), per the parameter's whole quantile range.

Every run of a sweep has its own seed, so the seeds' noise is in every index; the grey marks what cannot be told
apart from it. Parameters are shown with readable names and their sampled ranges, most important first.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import input_titles, parameter_labels
from analysis.summaries import run_outcomes
from model.results import ResultSet, Source

NAME = "sensitivity"
TITLE = "Sensitivity of outcomes to the sampled parameters (SALib)"
MIN_RUNS = 3
DUMMY = "dummy (a parameter the model never reads: the noise reference)"
CONF_LEVEL = 0.95
RESAMPLES = 100
SEED = 1  # bootstrap resampling and the dummy's draws (not the model's seeds)
MORRIS_LEVELS = 4  # the levels of model.sweep.design's Morris grid (SALib's default); a test holds them equal
RBD_COLOR = "#f1a340"
INDEX_NAMES = {"delta": "delta (moment-independent)", "rbd_fast": "RBD-FAST first order", "S1": "Sobol' first order",
               "ST": "Sobol' total", "mu_star": "Morris mu*"}


# -- the indices -----------------------------------------------------------------------------------------------------
def _problem(names: Sequence[str], X: np.ndarray) -> dict[str, Any]:
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    return {"num_vars": len(names), "names": list(names),
            "bounds": [[float(a), float(b) if b > a else float(a) + 1.0] for a, b in zip(lo, hi, strict=True)]}


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from scipy.stats import spearmanr

    if np.std(x) == 0 or np.std(y) == 0:
        return float("nan"), float("nan")
    res = spearmanr(x, y)
    return float(res.statistic), float(res.pvalue)


def analyse(X: pd.DataFrame, y: np.ndarray | pd.Series, design: str, seed: int = SEED) -> pd.DataFrame:
    """SALib's indices of one outcome `y` over the parameters (columns of `X`, numbers, rows in the design's order).

    `design` "lhs" (any random sample): delta, delta_conf, rbd_fast, rbd_fast_conf, spearman_rho, spearman_p, with a
    dummy parameter's row; "sobol" (a Saltelli design): S1, S1_conf, ST, ST_conf; "morris" (trajectories): mu,
    mu_star, mu_star_conf, sigma. `within_noise` flags an index that is not clearly above the noise (module
    docstring); `importance` is the index the parameters are sorted by. Returns one row per parameter."""
    from threadpoolctl import threadpool_limits  # lazy with SALib: only sweeps need them

    names = list(X.columns)
    x = X.to_numpy(dtype=float)
    y = np.asarray(y, dtype=float)
    rows = pd.DataFrame({"parameter": names})
    if np.std(y) == 0:
        rows["importance"] = np.nan
        rows["within_noise"] = True
        rows["note"] = "constant across runs"
        return rows
    with threadpool_limits(1), np.errstate(all="ignore"):  # tiny BLAS products: threads only add wake-ups
        if design == "lhs":
            return _analyse_random(names, x, y, seed)
        if design == "sobol":
            return _analyse_sobol(names, x, y, seed)
        if design == "morris":
            return _analyse_morris(names, x, y, seed)
    raise ValueError(f"design {design!r}: expected lhs, sobol or morris")


def _analyse_random(names: list[str], x: np.ndarray, y: np.ndarray, seed: int) -> pd.DataFrame:
    from SALib.analyze import delta, rbd_fast

    rng = np.random.default_rng(seed)
    dummy = rng.uniform(size=(len(y), 1))
    xd = np.hstack([x, dummy])
    all_names = [*names, DUMMY]
    problem = _problem(all_names, xd)
    np.random.seed(seed)  # SALib 1.5's delta draws its bootstrap from numpy's global generator
    nan = np.full(len(all_names), np.nan)
    q1, q3 = np.percentile(y, [25, 75])
    if q3 == q1:  # the middle half of the runs share one value: a rule of thumb for a spiky kernel density
        d, delta_note = {"delta": nan, "delta_conf": nan}, "too few distinct runs for delta"
    else:
        try:
            d = delta.analyze(problem, xd, y, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, seed=seed,
                              method="delta")
            delta_note = ""
        except (np.linalg.LinAlgError, ValueError):  # a kernel density of a few equal values: too few runs
            d, delta_note = {"delta": nan, "delta_conf": nan}, "too few distinct runs for delta"
        if not delta_note and not np.all(d["delta"] <= 1.05):
            # delta is at most 1 (a little more from sampling noise; bias correction can take it below 0): far
            # above it, the density estimate failed
            d, delta_note = {"delta": nan, "delta_conf": nan}, "too few distinct runs for delta"
    harmonics = max(1, min(10, len(y) // 10))  # RBD-FAST needs 2M below half the bootstrap sample
    try:
        r = rbd_fast.analyze(problem, xd, y, M=harmonics, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, seed=seed)
    except (ZeroDivisionError, ValueError, IndexError):  # too few runs for the harmonics' bootstrap
        if delta_note:
            raise F.NotApplicable(f"too few runs ({len(y)}) for delta and RBD-FAST sensitivity indices") from None
        r = {"S1": nan, "S1_conf": nan}
    out = pd.DataFrame({"parameter": all_names, "delta": d["delta"], "delta_conf": d["delta_conf"],
                        "rbd_fast": np.asarray(r["S1"], dtype=float), "rbd_fast_conf": np.asarray(r["S1_conf"],
                                                                                                dtype=float)})
    rho = [_spearman(xd[:, j], y) for j in range(len(all_names))]
    out["spearman_rho"] = [a for a, _ in rho]
    out["spearman_p"] = [b for _, b in rho]
    floor_delta = out["delta"].iloc[-1] + out["delta_conf"].iloc[-1]
    floor_rbd = out["rbd_fast"].iloc[-1] + out["rbd_fast_conf"].iloc[-1]
    out["delta_within_noise"] = out["delta"] - out["delta_conf"] <= floor_delta
    out["rbd_fast_within_noise"] = out["rbd_fast"] - out["rbd_fast_conf"] <= floor_rbd
    out["spearman_within_noise"] = ~(out["spearman_p"] < 1 - CONF_LEVEL)
    out["importance"] = out["delta"] if not delta_note else out["rbd_fast"]
    out["within_noise"] = out["delta_within_noise"] if not delta_note else out["rbd_fast_within_noise"]
    out.loc[out["parameter"] == DUMMY, "within_noise"] = True
    if delta_note:
        out["note"] = delta_note
    return out


def _analyse_sobol(names: list[str], x: np.ndarray, y: np.ndarray, seed: int) -> pd.DataFrame:
    from SALib.analyze import sobol

    problem = _problem(names, x)
    s = sobol.analyze(problem, y, calc_second_order=True, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, seed=seed)
    out = pd.DataFrame({"parameter": names, "S1": s["S1"], "S1_conf": s["S1_conf"], "ST": s["ST"],
                        "ST_conf": s["ST_conf"]})
    out["S1_within_noise"] = out["S1"] - out["S1_conf"] <= 0
    out["ST_within_noise"] = out["ST"] - out["ST_conf"] <= 0
    out["importance"] = out["ST"]
    out["within_noise"] = out["ST_within_noise"]
    s2 = np.asarray(s["S2"], dtype=float)
    s2c = np.asarray(s["S2_conf"], dtype=float)
    out.attrs["S2"] = pd.DataFrame([{"parameter": names[i], "other": names[j], "S2": s2[i, j], "S2_conf": s2c[i, j],
                                     "within_noise": bool(s2[i, j] - s2c[i, j] <= 0)}
                                    for i in range(len(names)) for j in range(i + 1, len(names))])
    return out


def _analyse_morris(names: list[str], x: np.ndarray, y: np.ndarray, seed: int) -> pd.DataFrame:
    from SALib.analyze import morris

    problem = _problem(names, x)
    m = morris.analyze(problem, x, y, num_resamples=RESAMPLES, conf_level=CONF_LEVEL, num_levels=MORRIS_LEVELS,
                       seed=seed)
    # SALib divides each change of the outcome by the grid's step (2/3 of the range): effects per whole range
    out = pd.DataFrame({"parameter": names, "mu": np.asarray(m["mu"], dtype=float),
                        "mu_star": np.asarray(m["mu_star"], dtype=float),
                        "mu_star_conf": np.asarray(m["mu_star_conf"], dtype=float),
                        "sigma": np.asarray(m["sigma"], dtype=float)})
    out["within_noise"] = out["mu_star"] - out["mu_star_conf"] <= 0
    out["importance"] = out["mu_star"]
    return out


def design_blocks(design: str, d: int) -> int:
    """Runs that belong together in a design (a Saltelli block of 2d + 2, a Morris trajectory of d + 1; 1 for a
    random sample): a run missing or without an outcome costs its whole block."""
    return 2 * d + 2 if design == "sobol" else d + 1 if design == "morris" else 1


def complete_rows(runs: pd.Series, y: pd.Series, design: str, d: int, planned: int) -> np.ndarray:
    """Mask of the rows whose block has every run of the planned design and an outcome in each."""
    block = design_blocks(design, d)
    ok = pd.Series(y.notna().to_numpy(), index=runs.to_numpy())
    ids = runs.to_numpy() // block
    full = {b for b in set(ids) if all(ok.get(r, False) for r in range(b * block, min((b + 1) * block, planned)))}
    return np.array([i in full for i in ids], dtype=bool)


# -- the sweep ------------------------------------------------------------------------------------------------------
def numeric_parameters(runs: pd.DataFrame, params: Sequence[str],
                       specs: Mapping[str, Mapping[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """Parameters as numbers: sampled values, or for a `choice` the index of the value in its list (an order the
    design's inverse CDF keeps); booleans as 0/1. Parameters without an order are left out (returned second)."""
    out, skipped = pd.DataFrame(index=runs.index), []
    for p in params:
        col = runs[p]
        spec = specs.get(p, {}) if isinstance(specs.get(p), Mapping) else {}
        if spec.get("dist") == "choice":
            values = list(spec.get("values", []))
            out[p] = [next((i for i, v in enumerate(values) if v == x), np.nan) for x in col]
            continue
        values = pd.to_numeric(col.astype("float64") if col.dtype == bool else col, errors="coerce")
        if values.notna().sum() == col.notna().sum() and col.notna().any():
            out[p] = values
        else:
            skipped.append(p)
    return out, skipped


def sweep_design(src: Source) -> str:
    """The design a sweep was sampled with (sweep.json's `design`): lhs, sobol or morris."""
    design = str(src.manifest.get("design", "lhs"))
    return design if design in ("lhs", "sobol", "morris") else "lhs"


def tables(rs: ResultSet, src: Source, year: int | None) -> dict[str, Any]:
    """Per-run outcomes with parameters, the indices of each outcome, second-order Sobol' indices, the outcome and
    parameter names, and the parameters left out."""
    sel = {k: getattr(rs, k)[getattr(rs, k)["label"] == src.label] for k in ("agents", "market", "events")}
    outcomes, names = run_outcomes(sel["agents"], sel["market"], sel["events"], year)
    runs = rs.runs[rs.runs["label"] == src.label].reset_index(drop=True)
    specs = src.manifest.get("parameters") if isinstance(src.manifest.get("parameters"), Mapping) else {}
    params, skipped = numeric_parameters(runs, src.parameters, specs)
    per_run = runs[["label", "run", "seed"]].join(params).merge(outcomes, on=["label", "run"], how="inner")
    per_run = per_run.sort_values("run").reset_index(drop=True)
    if len(per_run) < MIN_RUNS:
        raise F.NotApplicable(f"{src.path}: sensitivity needs at least {MIN_RUNS} ok runs (got {len(per_run)})")
    design = sweep_design(src)
    planned = int(src.manifest.get("runs", per_run["run"].max() + 1))
    labels = parameter_labels(list(params.columns), specs)
    rows, second = [], []
    for outcome, outcome_name in names.items():
        mask = complete_rows(per_run["run"], per_run[outcome], design, len(params.columns), planned)
        sub = per_run[mask]
        if len(sub) < MIN_RUNS:
            idx = pd.DataFrame({"parameter": list(params.columns), "importance": np.nan, "within_noise": True,
                                "note": f"{len(sub)} runs with this outcome"})
        else:
            idx = analyse(sub[list(params.columns)], sub[outcome].to_numpy(float), design)
            if "S2" in idx.attrs:
                second.append(idx.attrs["S2"].assign(outcome=outcome))
        idx.insert(0, "runs", len(sub))
        idx.insert(0, "outcome_name", outcome_name)
        idx.insert(0, "outcome", outcome)
        idx.insert(0, "label", src.label)
        idx.insert(5, "parameter_name", idx["parameter"].map(lambda p: labels.get(p, p)))
        idx.insert(6, "design", design)
        rows.append(idx)
    indices = pd.concat(rows, ignore_index=True)
    s2 = pd.concat(second, ignore_index=True) if second else pd.DataFrame()
    return {"per_run": per_run, "indices": indices, "second_order": s2, "names": names, "labels": labels,
            "skipped": skipped, "design": design}


# -- drawing --------------------------------------------------------------------------------------------------------
def _bars(ax, d: pd.DataFrame, value: str, conf: str, noise: str, offset: float, height: float, color: str,
          y_of: dict[str, int]) -> None:
    for r in d.itertuples():
        v, c = getattr(r, value), getattr(r, conf)
        if pd.isna(v):
            continue
        muted = bool(getattr(r, noise)) if noise else False
        y = y_of[r.parameter] + offset
        ax.barh(y, v, height=height, color=F.MUTED_COLOR if muted else color, edgecolor="none")
        if not pd.isna(c):
            ax.plot([v - c, v + c], [y, y], color="0.25" if not muted else "0.6", linewidth=0.9)


def parameter_order(indices: pd.DataFrame) -> list[str]:
    """Parameters most important first: by their largest index over the outcomes, those above the noise in some
    outcome before those that never are; the dummy last."""
    real = indices[indices["parameter"] != DUMMY]
    signal = real.assign(score=real["importance"].where(~real["within_noise"].astype(bool)))
    best = signal.groupby("parameter", sort=False)["score"].max()
    raw = real.groupby("parameter", sort=False)["importance"].max()
    order = sorted(raw.index, key=lambda p: (pd.isna(best.get(p)), -np.nan_to_num(best.get(p, np.nan), nan=0.0),
                                             -np.nan_to_num(raw.get(p), nan=0.0)))
    return order + ([DUMMY] if (indices["parameter"] == DUMMY).any() else [])


def _panel(ax, d: pd.DataFrame, design: str, name: str, order: list[str]) -> None:
    y_of = {p: i for i, p in enumerate(order)}
    d = d[d["parameter"].isin(y_of)]
    if design == "lhs":
        _bars(ax, d, "delta", "delta_conf", "delta_within_noise", -0.18, 0.36, F.POSITIVE_COLOR, y_of)
        _bars(ax, d, "rbd_fast", "rbd_fast_conf", "rbd_fast_within_noise", 0.18, 0.36, RBD_COLOR, y_of)
        dummy = d[d["parameter"] == DUMMY]
        if len(dummy) and dummy["delta"].notna().all():
            ax.axvline(float(dummy["delta"].iloc[0] + dummy["delta_conf"].iloc[0]), color="0.35", linestyle="--",
                       linewidth=0.9)
    elif design == "sobol":
        _bars(ax, d, "ST", "ST_conf", "ST_within_noise", -0.18, 0.36, F.POSITIVE_COLOR, y_of)
        _bars(ax, d, "S1", "S1_conf", "S1_within_noise", 0.18, 0.36, RBD_COLOR, y_of)
    else:
        _bars(ax, d, "mu_star", "mu_star_conf", "within_noise", 0.0, 0.55, F.POSITIVE_COLOR, y_of)
        ax.plot(d["sigma"], [y_of[p] for p in d["parameter"]], linestyle="none", marker="D", markersize=4,
                color="0.15")
        F.count_ticks(ax, "x")
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="x", labelsize=7)
    note = d["note"].dropna().iloc[0] if "note" in d.columns and d["note"].notna().any() else ""
    ax.set_title(textwrap.fill(name + (f" ({note})" if note else ""), 17), fontsize=8)


def short_name(outcome: str) -> str:
    """A column heading for an outcome of `run_outcomes`."""
    fixed = {"total_h100e_end": "H100e at the end", "largest_cluster_gpus": "largest cluster",
             "first_gb300_online_month": "GB300 online", "first_vr_online_month": "Vera Rubin online"}
    if outcome in fixed:
        return fixed[outcome]
    return "revenue " + outcome.rsplit("_", 1)[-1] if outcome.startswith("nvidia_revenue_usd_") else outcome


def _rho_panel(ax, indices: pd.DataFrame, outcomes: list[str], names: dict[str, str], order: list[str]) -> None:
    """Spearman's rho of every parameter and outcome, as numbers on a diverging shade (grey: p >= 0.05)."""
    m = np.full((len(order), len(outcomes)), np.nan)
    for j, outcome in enumerate(outcomes):
        d = indices[indices["outcome"] == outcome].set_index("parameter")
        for i, p in enumerate(order):
            if p in d.index and "spearman_rho" in d.columns and not d.loc[p, "spearman_within_noise"]:
                m[i, j] = d.loc[p, "spearman_rho"]
            if p in d.index and "spearman_rho" in d.columns and not pd.isna(d.loc[p, "spearman_rho"]):
                ax.text(j, i, f"{d.loc[p, 'spearman_rho']:+.2f}", ha="center", va="center", fontsize=6.5,
                        color="0.6" if d.loc[p, "spearman_within_noise"] else "0.05")
    ax.imshow(m, cmap="RdBu", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(outcomes)), [short_name(o) for o in outcomes], rotation=35, ha="right", fontsize=6.5)
    ax.grid(False)
    ax.set_title("Spearman's rho\n(scipy)", fontsize=8)


def _second_order(rs_title: str, t: dict[str, Any], out: Path) -> F.FigureFile | None:
    s2 = t["second_order"]
    if s2.empty:
        return None
    outcomes = list(dict.fromkeys(s2["outcome"]))
    params = list(t["labels"])
    fig = F.new_figure(3.6 * -(-len(outcomes) // 2) + 1.2)
    body = fig.subfigures(1, 1)
    axes = F.grid_axes(body, len(outcomes), ncols=2, sharex=False)
    for ax, outcome in zip(axes, outcomes, strict=False):
        m = np.full((len(params), len(params)), np.nan)
        d = s2[s2["outcome"] == outcome]
        for r in d.itertuples():
            i, j = params.index(r.parameter), params.index(r.other)
            m[i, j] = r.S2 if not r.within_noise else np.nan
        ax.imshow(m, cmap="Blues", vmin=0, vmax=max(0.05, np.nanmax(m) if np.isfinite(m).any() else 0.05))
        for r in d.itertuples():
            i, j = params.index(r.parameter), params.index(r.other)
            ax.text(j, i, f"{r.S2:.2f}", ha="center", va="center", fontsize=6,
                    color="0.6" if r.within_noise else "0.05")
        short = [textwrap.shorten(t["labels"][p].split(" [")[0], 28, placeholder="...") for p in params]
        ax.set_xticks(range(len(params)), short, rotation=40, ha="right", fontsize=6.5)
        ax.set_yticks(range(len(params)), short, fontsize=6.5)
        ax.grid(False)
        ax.set_title(textwrap.fill(t["names"][outcome], 60), fontsize=8.5)
    F.title(fig, "Second-order Sobol' indices (pairs of parameters)", rs_title)
    notes = F.definitions(fig, (
        "S2: the share of the outcome's variance due to the interaction of two parameters beyond their own effects "
        "(SALib's Sobol' analysis of the Saltelli design, 95% bootstrap intervals); grey numbers and white cells: "
        "intervals that reach zero."))
    return F.save(fig, out, f"{NAME}_second_order", "Second-order Sobol' indices", {"": s2}, notes)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    sweeps = [s for s in rs.sources if s.is_sweep and s.parameters]
    if not sweeps:
        raise F.NotApplicable(f"{rs.sources[0].path}: sensitivity needs a sweep folder with sampled parameters "
                              f"(runs.parquet columns besides run/seed/status/error/wall_time_s); none given")
    titles = input_titles(rs)
    files = []
    for src in sweeps:
        t = tables(rs, src, opts.revenue_year)
        indices, design = t["indices"], t["design"]
        outcomes = list(t["names"])
        order = parameter_order(indices)
        lhs = design == "lhs"
        fig = F.new_figure(0.3 * len(order) + 3.2)
        body = fig.subfigures(1, 1)
        ratios = [1.0] * len(outcomes) + ([0.25 * len(outcomes) + 0.3] if lhs else [])
        axes = np.atleast_1d(body.subplots(1, len(ratios), sharey=True, width_ratios=ratios)).ravel()
        for ax, outcome in zip(axes, outcomes, strict=False):
            _panel(ax, indices[indices["outcome"] == outcome], design, t["names"][outcome], order)
        if lhs:
            _rho_panel(axes[-1], indices, outcomes, t["names"], order)
        names = indices.drop_duplicates("parameter").set_index("parameter")["parameter_name"]
        axes[0].set_yticks(range(len(order)), [textwrap.fill(str(names.get(p, p)), 48) for p in order], fontsize=7)
        axes[0].set_ylim(len(order) - 0.5, -0.5)
        if design == "lhs":
            handles = [Patch(color=F.POSITIVE_COLOR, label="delta, moment-independent (SALib; bar: 95% interval)"),
                       Patch(color=RBD_COLOR, label="RBD-FAST first-order index (SALib)"),
                       Patch(color=F.MUTED_COLOR, label="within noise: not above the dummy parameter"),
                       Line2D([], [], color="0.35", linestyle="--", label="the dummy's delta + its interval"),
                       Patch(color="#92c5de", label="Spearman's rho (scipy; blue: higher parameter, higher "
                             "outcome; red: lower; grey number: p >= 0.05)")]
            method = "Latin hypercube: delta and RBD-FAST (SALib), Spearman (scipy)"
        elif design == "sobol":
            handles = [Patch(color=F.POSITIVE_COLOR, label="total index ST (SALib; bar: 95% interval)"),
                       Patch(color=RBD_COLOR, label="first-order index S1"),
                       Patch(color=F.MUTED_COLOR, label="within noise: interval reaches zero")]
            method = "Saltelli design: Sobol' indices (SALib)"
        else:
            handles = [Patch(color=F.POSITIVE_COLOR, label="mu*: mean absolute elementary effect (bar: 95% interval)"),
                       Line2D([], [], linestyle="none", marker="D", color="0.15", label="sigma: spread of the effects"),
                       Patch(color=F.MUTED_COLOR, label="within noise: interval reaches zero")]
            method = "Morris trajectories: elementary effects (SALib)"
        F.legend_outside(body, handles, ncols=3)
        skipped = f"; not analysed (no order): {', '.join(t['skipped'])}" if t["skipped"] else ""
        F.title(fig, TITLE, f"{titles[src.label]}: {len(t['per_run'])} runs, {len(order) - lhs} "
                f"sampled parameters; {method}{skipped}")
        notes = F.definitions(fig, _definitions(design))
        name = NAME if len(sweeps) == 1 else f"{NAME}_{F.slug(src.label)}"
        files.append(F.save(fig, out, name, TITLE, {"": indices, "outcomes": t["per_run"]}, notes))
        second = _second_order(titles[src.label], t, out)
        if second is not None:
            files.append(second)
    return files


def _definitions(design: str) -> str:
    common = ("Parameters: the scenario's [sweep] entries, named in words with their sampled range (uniform low-high, "
              "normal N(mean, sd) truncated to low-high, or one of a list), most important first (the largest index "
              "above the noise over the outcomes). Each "
              "run has its own seed, so the seeds' noise is in every index. Outcomes per run: total H100e at the "
              "end, the largest cluster of a named agent, the month GB300 NVL72 and Vera Rubin NVL72 first came "
              "online (runs where it never did are left out), NVIDIA revenue in a fully simulated calendar year. ")
    if design == "lhs":
        return common + ("delta (Borgonovo 2007; Plischke et al. 2013): how far the outcome's distribution moves "
                         "when the parameter is known, 0 to 1; RBD-FAST (Tarantola et al. 2006, Plischke 2010): the "
                         "share of the outcome's variance the parameter explains alone. Both from one random "
                         "design; bars: 95% bootstrap intervals. The dummy is a random column the model never read: "
                         "what a parameter of no influence scores with this many runs.")
    if design == "sobol":
        return common + ("S1: share of the outcome's variance due to the parameter alone; ST: including all its "
                         "interactions (Saltelli 2002/2010 estimators, 95% bootstrap intervals). Second-order "
                         "indices are in the second-order figure.")
    return common + ("mu*: the mean absolute change of the outcome per whole sampled (quantile) range of the "
                     "parameter, from steps of 2/3 of it along Morris trajectories on a 4-level grid; mu (in the CSV) "
                     "keeps the sign; sigma: the spread of those effects (interactions or curvature).")


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
