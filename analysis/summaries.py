"""What the figures share besides the outcomes themselves: the order of kinds and systems, and the per-run outcome
vector the sensitivity figure ranks runs by. The outcomes (leaders, firsts, revenue by period, bands across runs)
come from `model.results.outcomes` and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from model.palette import SYSTEM_COLORS
from model.results import outcomes as O

KIND_ORDER = ("hyperscaler", "neocloud", "lab", "other")
MILESTONES = {"first_online": "first online", "first_cluster_at_scale": "first at-scale cluster"}
PREFERRED_REVENUE_YEAR = 2027


def systems_in(columns: Sequence[str], prefix: str = "") -> list[str]:
    """System keys of the `<prefix><system>` columns (or of plain keys, prefix ""), in catalog (palette) order,
    unknown keys last."""
    found = list(dict.fromkeys(c[len(prefix):] for c in columns if c.startswith(prefix)))
    order = list(SYSTEM_COLORS)
    return sorted(found, key=lambda k: (order.index(k) if k in order else len(order), k))


def kinds_in(agents: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(agents["kind"]))
    return [k for k in KIND_ORDER if k in present] + sorted(k for k in present if k not in KIND_ORDER)


def revenue_year(market: pd.DataFrame, preferred: int = PREFERRED_REVENUE_YEAR) -> int:
    """The calendar year of the 'NVIDIA revenue in a year' outcome: `preferred` if every run simulated all of it,
    else the last year fully simulated, else the last year."""
    full = O.revenue(market, "calendar_year")
    years = sorted({int(y) for y in full["year"]}) if len(full) else []
    if preferred in years:
        return preferred
    return years[-1] if years else int(market["date"].dt.year.max())


def run_outcomes(agents: pd.DataFrame, market: pd.DataFrame, events: pd.DataFrame,
                 year: int | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per label and run: the outcomes the sensitivity figure ranks runs by, and {column: readable name}.

    Total H100e at the end; the largest cluster any named agent reached; the month (counted from the run's first)
    in which GB300 NVL72 and Vera Rubin NVL72 first came online (missing where they never did); NVIDIA revenue in a
    fully simulated calendar year (partial years have none: `revenue_year` picks a full one).
    """
    year = revenue_year(market) if year is None else year
    keys = O.run_keys(agents)
    totals = O.totals(agents)
    end = totals[totals["date"] == totals.groupby(keys)["date"].transform("max")].set_index(keys)
    out = end[["total_h100e"]].rename(columns={"total_h100e": "total_h100e_end"})
    out["largest_cluster_gpus"] = totals.groupby(keys)["largest_cluster_gpus"].max()
    start = agents.groupby(keys)["date"].min()
    names = {"total_h100e_end": f"total H100e at {end['date'].max():%Y-%m}",
             "largest_cluster_gpus": "largest cluster (GPUs)"}
    first = O.firsts(events, agents, which=["first_online"]).set_index([*keys, "system"])["date"]
    for system, col, text in (("gb300_nvl72", "first_gb300_online_month", "GB300 NVL72"),
                              ("vr_nvl72", "first_vr_online_month", "Vera Rubin NVL72")):
        at = first.xs(system, level="system") if system in first.index.get_level_values("system") else None
        if at is None:
            out[col] = np.nan
        else:
            at = at.reindex(out.index)
            s = start.reindex(out.index)
            out[col] = ((at.dt.year - s.dt.year) * 12 + (at.dt.month - s.dt.month)).astype(float)
        names[col] = f"first {text} online (months after {start.min():%Y-%m})"
    revenue = O.revenue(market, "calendar_year")
    out[f"nvidia_revenue_usd_{year}"] = revenue[revenue["year"] == year].set_index(keys)["nvidia_revenue_usd"]
    names[f"nvidia_revenue_usd_{year}"] = f"NVIDIA revenue {year} (USD)"
    return out.reset_index(), names
