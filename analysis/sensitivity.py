"""Sensitivity: which sampled parameters of a sweep move the outcomes most (Spearman rank correlation, tornado).

Spearman's rho needs no design beyond random sampling (LHS or plain Monte Carlo), so it suits `airace sweep`'s
designs; variance-based indices (SALib's Sobol or Morris) would need a sweep sampled for them and are not computed.
The dotted lines mark |rho| = 1.96 / sqrt(n - 1), roughly what sampling noise alone reaches 5% of the time.
"""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import run_outcomes
from model.results import ResultSet, Source

NAME = "sensitivity"
TITLE = "Sensitivity of outcomes to sampled parameters (Spearman rank correlation)"
MIN_RUNS = 3


def spearman(x: pd.Series, y: pd.Series) -> float:
    """Pearson correlation of average ranks; NaN when either side is constant."""
    rx, ry = x.rank().to_numpy(float), y.rank().to_numpy(float)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _numeric_parameters(runs: pd.DataFrame, params: tuple[str, ...]) -> tuple[pd.DataFrame, list[str]]:
    """Parameters as numbers (booleans as 0/1); text-valued ones have no order and are left out."""
    out, skipped = pd.DataFrame(index=runs.index), []
    for p in params:
        col = runs[p]
        values = pd.to_numeric(col.astype("float64") if col.dtype == bool else col, errors="coerce")
        if values.notna().sum() == col.notna().sum() and col.notna().any():
            out[p] = values
        else:
            skipped.append(p)
    return out, skipped


def tables(rs: ResultSet, src: Source, year: int | None) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str],
                                                                  list[str]]:
    """(per-run outcomes with parameters, rho per outcome and parameter, outcome names, skipped parameters)."""
    sel = {k: getattr(rs, k)[getattr(rs, k)["label"] == src.label] for k in ("agents", "market", "events")}
    outcomes, names = run_outcomes(sel["agents"], sel["market"], sel["events"], year)
    runs = rs.runs[rs.runs["label"] == src.label].reset_index(drop=True)
    params, skipped = _numeric_parameters(runs, src.parameters)
    per_run = runs[["label", "run", "seed"]].join(params).merge(outcomes, on=["label", "run"], how="inner")
    rows = []
    n = len(per_run)
    for outcome in names:
        for p in params.columns:
            pair = per_run[[p, outcome]].dropna()
            rho = spearman(pair[p], pair[outcome]) if len(pair) >= MIN_RUNS else np.nan
            rows.append({"label": src.label, "outcome": outcome, "outcome_name": names[outcome], "parameter": p,
                         "spearman_rho": rho, "runs": len(pair),
                         "noise_band": 1.96 / math.sqrt(len(pair) - 1) if len(pair) > 1 else np.nan})
    rho = pd.DataFrame(rows)
    if n < MIN_RUNS:
        raise F.NotApplicable(f"{src.path}: sensitivity needs at least {MIN_RUNS} ok runs (got {n})")
    return per_run, rho, names, skipped


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    sweeps = [s for s in rs.sources if s.is_sweep and s.parameters]
    if not sweeps:
        raise F.NotApplicable(f"{rs.sources[0].path}: sensitivity needs a sweep folder with sampled parameters "
                              f"(runs.parquet columns besides run/seed/status/error/wall_time_s); none given")
    files = []
    for src in sweeps:
        per_run, rho, names, skipped = tables(rs, src, opts.revenue_year)
        n_params = rho["parameter"].nunique()
        # One shared parameter axis, ordered by the largest |rho| over all outcomes (most influential on top).
        order = (rho.assign(a=rho["spearman_rho"].abs()).groupby("parameter")["a"].max()
                 .sort_values(ascending=False, na_position="last").index.tolist())
        fig = F.new_figure(max(0.42 * n_params, 1.4) + 2.6)
        axes = np.atleast_1d(fig.subplots(1, len(names), sharey=True, squeeze=False)).ravel()
        for ax, (outcome, name) in zip(axes, names.items(), strict=True):
            d = rho[rho["outcome"] == outcome].set_index("parameter").reindex(order).reset_index()
            d["direction"] = np.where(d["spearman_rho"] >= 0, "raises", "lowers")
            sns.barplot(data=d.fillna({"spearman_rho": 0.0}), x="spearman_rho", y="parameter", hue="direction",
                        palette={"raises": F.POSITIVE_COLOR, "lowers": F.NEGATIVE_COLOR}, dodge=False,
                        order=order, hue_order=["raises", "lowers"], legend=False, ax=ax, width=0.7)
            for i, r in enumerate(d.itertuples()):
                text = "n/a\n(constant)" if pd.isna(r.spearman_rho) else f"{r.spearman_rho:+.2f}"
                inside = not pd.isna(r.spearman_rho) and abs(r.spearman_rho) > 0.55
                x = 0.0 if pd.isna(r.spearman_rho) else r.spearman_rho / 2 if inside else r.spearman_rho
                ha = "center" if inside else ("left" if x >= 0 else "right")
                ax.text(x + (0 if inside else 0.04 if x >= 0 else -0.04), i, text, va="center", ha=ha,
                        fontsize=7.5, color="white" if inside else "0.15")
            band = d["noise_band"].dropna()
            if len(band):
                for sign in (-1, 1):
                    ax.axvline(sign * band.iloc[0], color="0.4", linestyle=":", linewidth=1)
            ax.axvline(0, color="0.2", linewidth=0.8)
            ax.set_xlim(-1.05, 1.05)
            ax.set_xticks([-1, 0, 1], ["-1", "0", "+1"])
            ax.set_xticks([-0.5, 0.5], minor=True)
            ax.grid(axis="x", which="minor", linewidth=0.6)
            ax.set_title(textwrap.fill(name, 24), fontsize=8.5)
            ax.set_xlabel("Spearman rho")
            ax.set_ylabel("")
            ax.tick_params(axis="y", labelsize=8)
        handles = [Patch(color=F.POSITIVE_COLOR, label="higher parameter -> higher outcome"),
                   Patch(color=F.NEGATIVE_COLOR, label="higher parameter -> lower outcome"),
                   Line2D([], [], color="0.4", linestyle=":",
                          label=f"noise level for {len(per_run)} runs (1.96/sqrt(n-1))")]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8.5)
        note = f"; not ranked (text values): {', '.join(skipped)}" if skipped else ""
        fig.suptitle(f"{TITLE}\n{src.label}: {len(per_run)} runs, {n_params} sampled parameter"
                     f"{'s' if n_params != 1 else ''}{note}", fontsize=11)
        name = NAME if len(sweeps) == 1 else f"{NAME}_{F.slug(src.label)}"
        files.append(F.save(fig, out, name, TITLE, {"": rho, "outcomes": per_run}))
    return files


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
