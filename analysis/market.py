"""Market: NVIDIA revenue per fiscal quarter against reported data-center revenue, order backlog, rental prices.

NVIDIA's fiscal quarters end late April, July, October and January, so the model's monthly revenue is summed over
Feb-Apr, May-Jul, Aug-Oct and Nov-Jan. The reported figures come from `analysis/data/nvidia_dc_revenue.csv`
(copied with their sources from the project's market facts).
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "market"
TITLE = "NVIDIA revenue, order backlog and rental prices"
REPORTED_CSV = Path(__file__).parent / "data" / "nvidia_dc_revenue.csv"
BACKLOG, RENTAL = "backlog_units_", "rental_usd_per_gpu_hour_"


@cache
def reported_revenue() -> pd.DataFrame:
    """Reported NVIDIA data-center revenue per fiscal quarter (USD), with quarter bounds, source and date."""
    df = pd.read_csv(REPORTED_CSV, comment="#")
    df["quarter_start"] = [O.fiscal_quarter_start(y, q) for y, q in zip(df["fiscal_year"], df["fiscal_quarter"],
                                                                        strict=True)]
    df["reported_dc_revenue_usd"] = df["dc_revenue_usd_bn"] * 1e9
    return df


def _gpus_per_system(key: str) -> int | None:
    from model.hardware import get_system

    try:
        return int(get_system(key).gpus_per_system)
    except Exception:  # noqa: BLE001 - an unknown key is drawn in systems, not GPUs
        return None


def revenue_table(rs: ResultSet) -> pd.DataFrame:
    """Per label and fiscal quarter: runs, months simulated (partial quarters at the run's edges are kept and
    flagged), model revenue (median, 5-95%), reported DC revenue."""
    q = O.revenue(rs.market, "fiscal_quarter", partial="flag")
    keys = ["period", "fiscal_year", "fiscal_quarter", "period_start", "period_end", "months", "complete"]
    out = O.band(q, keys, "nvidia_revenue_usd")
    rep = reported_revenue()[["quarter", "reported_dc_revenue_usd", "source_url"]].rename(columns={"quarter": "period"})
    return out.merge(rep, on="period", how="left")


def _long_band(rs: ResultSet, prefix: str, value: str) -> pd.DataFrame:
    systems = systems_in(rs.market.columns, prefix)
    cols = [prefix + s for s in systems]
    m = rs.market[["label", "run", "date", *cols]].copy()
    m[cols] = m[cols].apply(pd.to_numeric, errors="coerce")
    long = m.melt(id_vars=["label", "run", "date"], var_name="system", value_name=value)
    long["system"] = long["system"].str.removeprefix(prefix)
    return O.band(long, ["date", "system"], value)


def backlog_table(rs: ResultSet) -> pd.DataFrame:
    """Per label, month, system: backlog in systems (median, 5-95%) and in GPUs via the catalog's GPUs per system."""
    t = _long_band(rs, BACKLOG, "backlog_units")
    per = {s: _gpus_per_system(s) for s in t["system"].unique()}
    t["gpus_per_system"] = t["system"].map(per).astype("Float64")
    for suffix in ("", "_p05", "_p95"):
        t[f"backlog_gpus{suffix}"] = t[f"backlog_units{suffix}"] * t["gpus_per_system"]
    return t


def rental_table(rs: ResultSet) -> pd.DataFrame:
    return _long_band(rs, RENTAL, "rental_usd_per_gpu_hour").dropna(subset=["rental_usd_per_gpu_hour"])


def _revenue_panel(ax, rev: pd.DataFrame, color: str) -> None:
    mid = rev["period_start"] + pd.Timedelta(days=45)
    full = rev["complete"]
    yerr = None
    if (rev["runs"] > 1).any():
        yerr = np.vstack([rev["nvidia_revenue_usd"] - rev["nvidia_revenue_usd_p05"],
                          rev["nvidia_revenue_usd_p95"] - rev["nvidia_revenue_usd"]]) / 1e9
    ax.bar(mid[full], rev.loc[full, "nvidia_revenue_usd"] / 1e9, width=70, color=color, alpha=0.85,
           label="model: NVIDIA revenue per fiscal quarter",
           yerr=None if yerr is None else yerr[:, full.to_numpy()], error_kw={"elinewidth": 1, "capsize": 2})
    if (~full).any():
        ax.bar(mid[~full], rev.loc[~full, "nvidia_revenue_usd"] / 1e9, width=70, color=color, alpha=0.3,
               label="model: partial quarter (fewer than 3 months simulated)")
    rep = reported_revenue()
    ax.plot(rep["quarter_start"] + pd.Timedelta(days=45), rep["dc_revenue_usd_bn"], marker="D", color="black",
            linestyle="-", linewidth=1, markersize=5, label="reported: NVIDIA data-center revenue")
    ax.set_ylabel("revenue per quarter (USD bn)")
    ax.set_title("NVIDIA revenue per fiscal quarter (Q1 = Feb-Apr), model vs reported")
    ax.legend(loc="upper left", fontsize=8)
    F.date_axis(ax)
    ax.set_xlabel("date (bars centred on each fiscal quarter)")


def _system_lines(ax, d: pd.DataFrame, value: str, scale: float = 1.0) -> None:
    for system, s in d.groupby("system", sort=False):
        color = F.system_color(system)
        ax.plot(s["date"], s[value] / scale, color=color, linewidth=1.6, label=F.sys_name(system))
        if (s["runs"] > 1).any():
            ax.fill_between(s["date"], s[f"{value}_p05"] / scale, s[f"{value}_p95"] / scale, color=color,
                            alpha=0.18, linewidth=0)
    F.date_axis(ax)


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    rev, backlog, rental = revenue_table(rs), backlog_table(rs), rental_table(rs)
    colors = F.label_colors(rs.labels)
    fig = F.new_figure(8.6 * len(rs.sources) + 0.4)
    subfigs = np.atleast_1d(fig.subfigures(len(rs.sources), 1, squeeze=False)).ravel()
    for sub, src in zip(subfigs, rs.sources, strict=True):
        axd = sub.subplot_mosaic([["rev", "rev"], ["backlog", "rental"]], height_ratios=[1.15, 1])
        _revenue_panel(axd["rev"], rev[rev["label"] == src.label], colors[src.label])
        b = backlog[(backlog["label"] == src.label)]
        used = b.groupby("system")["backlog_units"].max()
        b = b[b["system"].isin(used[used > 0].index)]
        in_gpus = b["gpus_per_system"].notna().all()
        _system_lines(axd["backlog"], b, "backlog_gpus" if in_gpus else "backlog_units", 1e3)
        axd["backlog"].set_ylabel("backlog (thousand GPUs)" if in_gpus else "backlog (thousand systems)")
        axd["backlog"].set_title("Order backlog by system (ordered, not yet shipped)")
        if len(b):
            axd["backlog"].legend(fontsize=7.5, loc="upper right")
        else:
            F.note(axd["backlog"], "no backlog")
        r = rental[rental["label"] == src.label]
        _system_lines(axd["rental"], r, "rental_usd_per_gpu_hour")
        axd["rental"].set_ylabel("rental price (USD per GPU-hour)")
        axd["rental"].set_title("Rental price by system")
        if len(r):
            axd["rental"].legend(fontsize=7.5, loc="upper left", ncols=2)
        what = (f"median and 5-95% range across {src.n_runs} runs" if src.n_runs > 1 else "one run")
        sub.suptitle(f"{src.label}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    fig.suptitle(TITLE)
    return [F.save(fig, out, NAME, TITLE, {"revenue": rev, "backlog": backlog, "rental": rental})]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
