"""Vendors: NVIDIA beside Google's TPUs, AWS's Trainium and AMD's Instinct, once the results hold their systems.

One row per input: each vendor's share of the GPUs and accelerators shipped per NVIDIA fiscal quarter, weighted by
H100e (100% bars); and each owner's H100e at the end split by vendor (named agents, largest first). Each vendor's
share of all compute over time is the shares figure's vendor panel. Results whose systems are all NVIDIA's have
nothing to split, and the report skips this figure with a note.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from analysis import figure as F
from analysis.cli import DEFAULT_OPTIONS, Options, module_main
from analysis.names import describe_runs, input_titles
from model.palette import vendor_color
from model.results import ResultSet
from model.results import outcomes as O

NAME = "vendors"
TITLE = "Vendors: share of shipments and each owner's compute by vendor (H100e)"
TOP_OWNERS = 12


def tables(rs: ResultSet) -> dict[str, pd.DataFrame]:
    """Per label, fiscal quarter and vendor: the mean share across runs of the H100e and of the GPUs shipped, and
    the median GPUs and H100e shipped; per label, named agent and vendor at the end: H100e (median, 5-95%) and
    GPUs (median)."""
    ship = O.shipment_shares(rs.market, "fiscal_quarter", partial="flag")
    keys = ["label", "period", "period_start", "months", "complete", "vendor"]
    g = ship.groupby(keys, sort=True)
    shares = ship[["share_gpus", "share_h100e"]].fillna(0.0).groupby([ship[k] for k in keys], sort=True).mean()
    shipments = pd.DataFrame({"runs": g.size(), "gpus": g["gpus"].median(), "h100e": g["h100e"].median(),
                              "share_gpus": shares["share_gpus"], "share_h100e": shares["share_h100e"]}).reset_index()
    owners = O.owner_compute_by_vendor(rs.agents, at="end")
    owners = owners[O.is_named(owners["kind"])]
    band = O.band(owners, ["agent", "kind", "vendor"], "h100e")
    gpus = owners.groupby(["label", "agent", "vendor"])["gpus"].median().rename("gpus").reset_index()
    return {"": band.merge(gpus, on=["label", "agent", "vendor"], how="left"), "shipments": shipments}


def vendors_in(rs: ResultSet) -> list[str]:
    """Vendors with GPUs online or shipped anywhere in the results, NVIDIA first."""
    online = set(O.vendors_present(rs.agents))
    units = O.per_system(rs.market, "units_shipped_", "units")
    shipped = set(O.system_facts(list(dict.fromkeys(units.loc[units["units"] > 0, "system"])))["vendor"])
    return sorted(online | shipped, key=lambda v: (v != "NVIDIA", v))


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    vendors = vendors_in(rs)
    if len(vendors) < 2:
        raise F.NotApplicable(f"every system in these results is {vendors[0] if vendors else 'NVIDIA'}'s: the "
                              "vendor figure appears when the results hold other vendors' systems (TPU, Trainium, "
                              "AMD)")
    t = tables(rs)
    titles = input_titles(rs)
    sources = rs.sources[:F.MAX_ROWS]
    colors = {v: vendor_color(v) for v in vendors}
    fig = F.new_figure(3.4 * len(sources) + 1.8)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    for sub, src in zip(rows, sources, strict=False):
        left, right = sub.subplots(1, 2, width_ratios=[1.4, 1])
        s = t["shipments"][t["shipments"]["label"] == src.label]
        wide = s.pivot(index="period_start", columns="vendor", values="share_h100e").reindex(columns=vendors)
        wide = wide.fillna(0.0)
        bottom = np.zeros(len(wide))
        for v in vendors:
            F.bars(left, wide.index + pd.Timedelta(days=45), wide[v].to_numpy(), 80, colors[v], bottom=bottom)
            bottom += wide[v].to_numpy()
        left.set_ylim(0, 1)
        F.percent(left)
        left.set_ylabel("share of H100e shipped")
        left.set_title("share of what shipped per NVIDIA fiscal quarter, by vendor (H100e)", fontsize=9)
        F.date_axis(left, wide.index.min(), wide.index.max() + pd.DateOffset(months=3))
        o = t[""][t[""]["label"] == src.label]
        per = o.pivot_table(index="agent", columns="vendor", values="h100e", aggfunc="sum").reindex(columns=vendors)
        per = per.fillna(0.0)
        per = per.loc[per.sum(axis=1).sort_values(ascending=False).index[:TOP_OWNERS]]
        y = np.arange(len(per))[::-1]
        left_edge = np.zeros(len(per))
        for v in vendors:
            right.barh(y, per[v].to_numpy() / 1e6, left=left_edge, color=colors[v], height=0.7, linewidth=0)
            left_edge += per[v].to_numpy() / 1e6
        right.set_yticks(y, [F.agent_label(a) for a in per.index], fontsize=8)
        right.set_xlabel("H100e (millions)")
        right.grid(axis="y", visible=False)
        end = src.agents["date"].max()
        right.set_title(f"each owner's compute at {end:%Y-%m} by vendor (top {len(per)})", fontsize=9)
        what = describe_runs(src).replace("median and 5-95% range", "mean shares, median H100e")
        sub.suptitle(f"{titles[src.label]}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    F.legend_outside(rows[len(sources) - 1], [Patch(color=colors[v], label=v) for v in vendors],
                     ncols=len(vendors))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        f"H100e: GPUs or accelerator chips x the catalog's dense BF16 FLOP/s over H100's ({F.H100E}), the same for "
        "every vendor. Shipments: systems shipped (the market table's units_shipped_<system>) x the catalog's chips "
        "per system, per NVIDIA fiscal quarter (Q1 = Feb-Apr; the first and last may be partial). Owners: the agents "
        "table's gpus_online_<system> at the run's last month; the rest of the market is not shown. A vendor's share "
        "of all compute over time is in the shares figure."))
    return [F.save(fig, out, NAME, TITLE, t, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
