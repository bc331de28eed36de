"""Generations: the mix of compute online by system, weighted by H100e (so Rubin and Feynman count for what they do).

One row per input: H100e online by system, stacked to the total, and each system's share of all H100e (100%).
A sweep stacks the mean across runs.
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
from analysis.summaries import systems_in
from model.results import ResultSet
from model.results import outcomes as O

NAME = "generations"
TITLE = "Generation mix: compute online by system, weighted by H100e"


def table(rs: ResultSet) -> pd.DataFrame:
    """label, date, system, vendor, runs, gpus (median), h100e (median), h100e_p05, h100e_p95, h100e_mean,
    share (mean share of all H100e across runs)."""
    mix = O.generation_mix(rs.agents)
    out = O.band(mix, ["date", "system", "vendor"], "h100e")
    keys = ["label", "date", "system"]
    idx = pd.MultiIndex.from_frame(out[keys])
    g = mix.groupby(keys, sort=False)
    out.insert(5, "gpus", g["gpus"].median().reindex(idx).to_numpy())
    out["h100e_mean"] = g["h100e"].mean().reindex(idx).to_numpy()
    out["share"] = mix["share"].fillna(0.0).groupby([mix[k] for k in keys], sort=False).mean().reindex(idx).to_numpy()
    return out


def make(rs: ResultSet, out: Path, opts: Options = DEFAULT_OPTIONS) -> list[F.FigureFile]:
    data = table(rs)
    titles = input_titles(rs)
    systems = systems_in(data["system"].unique())
    used = [s for s in systems if (data.loc[data["system"] == s, "h100e"] > 0).any()]
    sources = rs.sources[:F.MAX_ROWS]
    fig = F.new_figure(3.0 * len(sources) + 1.6)
    rows = np.atleast_1d(fig.subfigures(len(sources), 1, squeeze=False)).ravel()
    colors = [F.system_color(s) for s in used]
    for sub, src in zip(rows, sources, strict=False):
        d = data[data["label"] == src.label]
        absolute = d.pivot(index="date", columns="system", values="h100e_mean").reindex(columns=used).fillna(0.0)
        share = d.pivot(index="date", columns="system", values="share").reindex(columns=used).fillna(0.0)
        left, right = sub.subplots(1, 2, sharex=True)
        left.stackplot(absolute.index, *(absolute[s].to_numpy() for s in used), colors=colors, linewidth=0.2,
                       edgecolor="white")
        F.millions(left)
        left.set_ylabel("H100e online (millions)")
        left.set_title("H100e by system", fontsize=9)
        right.stackplot(share.index, *(share[s].to_numpy() for s in used), colors=colors, linewidth=0.2,
                        edgecolor="white")
        right.set_ylim(0, 1)
        F.percent(right)
        right.set_title("share of all H100e by system", fontsize=9)
        for ax in (left, right):
            ax.margins(x=0)
            F.date_axis(ax, absolute.index.min(), absolute.index.max())
        what = describe_runs(src).replace("median and 5-95% range", "mean")
        sub.suptitle(f"{titles[src.label]}: {what}", fontsize=10, fontweight="normal", x=0.01, ha="left")
    vendor_of = data.drop_duplicates("system").set_index("system")["vendor"].to_dict()
    several = len({vendor_of.get(s) for s in used}) > 1  # then each system is named with its vendor
    F.legend_outside(rows[len(sources) - 1], [Patch(color=c, label=F.sys_name(s, vendor_of.get(s, "")) if several
                                                    else F.sys_name(s)) for s, c in zip(used, colors, strict=True)],
                     ncols=min(len(used), 6 if several else 8))
    F.title(fig, TITLE)
    notes = F.definitions(fig, (
        f"GPUs online of each system (the agents table's gpus_online_<system>) times the catalog's H100e per GPU "
        f"({F.H100E}, for every vendor); all owners, the rest of the market included. Systems in the catalog's "
        "order (NVIDIA's, then Google's TPUs in teal, AWS's Trainium in browns, AMD's Instinct in reds), oldest at "
        "the bottom; a counted GPU is a package (a B200 is one GPU of two dies; a TPU or Trainium is one chip)."))
    return [F.save(fig, out, NAME, TITLE, {"": data}, notes)]


def main(argv=None) -> int:
    return module_main(NAME, __doc__, make, argv)


if __name__ == "__main__":
    sys.exit(main())
