"""Shared look and atomic output of every figure: Agg backend, seaborn theme, date axes, PNG + SVG + CSV.

Figures keep a fixed width and a layout engine instead of `bbox_inches="tight"`, so a PNG's pixel size is exactly
its figure size times DPI and can be checked.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from model.errors import InputError  # noqa: E402
from model.palette import AGENT_COLORS, SYSTEM_COLORS, agent_color, system_color  # noqa: E402
from model.results import write_csv, write_file_atomically  # noqa: E402

DPI = 200
WIDTH_IN = 12.0
SYSTEM_NAMES = {
    "hgx_h100": "HGX H100", "hgx_h200": "HGX H200", "hgx_b200": "HGX B200", "hgx_b300": "HGX B300",
    "gb200_nvl72": "GB200 NVL72", "gb300_nvl72": "GB300 NVL72", "vr_nvl72": "Vera Rubin NVL72",
    "rubin_cpx": "Rubin CPX", "rubin_ultra_nvl144": "Rubin Ultra NVL144", "feynman": "Feynman",
}
KIND_TITLES = {"hyperscaler": "Hyperscalers", "neocloud": "Neoclouds", "lab": "AI labs", "other": "Rest of market"}
# Scenario colours for overlays: well-separated hues taken from the shared palette.
_LABEL_COLORS = (AGENT_COLORS["microsoft"], AGENT_COLORS["openai"], AGENT_COLORS["coreweave"],
                 AGENT_COLORS["oracle"], SYSTEM_COLORS["vr_nvl72"], AGENT_COLORS["rest_of_market"],
                 AGENT_COLORS["xai"], AGENT_COLORS["meta_ai"])
POSITIVE_COLOR, NEGATIVE_COLOR = AGENT_COLORS["aws"], AGENT_COLORS["anthropic"]


class NotApplicable(InputError):
    """The inputs cannot make this figure (e.g. a comparison of one scenario); the report skips it with a note."""


@dataclass(frozen=True)
class FigureFile:
    """What one figure module wrote."""

    name: str
    title: str
    png: Path
    svg: Path
    csvs: tuple[Path, ...]
    width_px: int
    height_px: int


def setup() -> None:
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.9,
                  rc={"axes.titleweight": "bold", "figure.titleweight": "bold", "legend.frameon": True,
                      "legend.framealpha": 0.85, "legend.edgecolor": "none",
                      "svg.fonttype": "none", "figure.dpi": 100})


def new_figure(height_in: float, **kwargs) -> plt.Figure:
    setup()
    return plt.figure(figsize=(WIDTH_IN, height_in), layout="constrained", **kwargs)


def sys_name(key: str) -> str:
    return SYSTEM_NAMES.get(key, key)


def slug(text: str) -> str:
    """A label as a file-name part."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def label_colors(labels: list[str]) -> dict[str, str]:
    return {lab: _LABEL_COLORS[i % len(_LABEL_COLORS)] for i, lab in enumerate(labels)}


def agent_palette(agents) -> dict[str, str]:
    return {a: agent_color(a) for a in agents}


def system_palette(systems) -> dict[str, str]:
    return {s: system_color(s) for s in systems}


def date_axis(ax) -> None:
    """Readable, fixed date ticks for the current x range: years for long runs, quarters or months for short ones.

    Fixed ticks (computed once) instead of matplotlib's AutoDateLocator, which layout passes call again and again.
    """
    lo, hi = (pd.Timestamp(mdates.num2date(v)).tz_localize(None) for v in ax.get_xlim())
    months = (hi.year - lo.year) * 12 + hi.month - lo.month
    if months >= 48:
        step = 1 if months <= 12 * 12 else 2
        ticks = [pd.Timestamp(year=y, month=1, day=1) for y in range(lo.year, hi.year + 2) if (y - lo.year) % step == 0]
        fmt = "%Y"
    else:
        every = 1 if months <= 8 else 3 if months <= 20 else 6  # 6-monthly up to four years
        first = pd.Timestamp(year=lo.year, month=1, day=1)
        ticks = [d for d in pd.date_range(first, hi + pd.DateOffset(months=1), freq="MS") if (d.month - 1) % every == 0]
        fmt = "%Y-%m"
    ticks = [t for t in ticks if lo <= t <= hi]
    ax.set_xticks([mdates.date2num(t) for t in ticks], [t.strftime(fmt) for t in ticks])
    ax.set_xlim(mdates.date2num(lo), mdates.date2num(hi))
    ax.set_xlabel("date (month)")


def millions(ax, axis: str = "y") -> None:
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1e6:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def plain_ticks(ax) -> None:
    """Log axes labelled 20, 30, 100 rather than 2x10^1."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: f"{v:g}" if f"{v:g}"[0] in "235" else ""))


def note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.4", fontsize=9, wrap=True)


def kind_panels(fig, data: pd.DataFrame, value: str, kinds: list[str], ylabel: str, log: bool,
                     empty_note: str, descending: bool = True,
                hidden_text: str = "not shown (none of their own)", legend_loc: str = "upper left") -> None:
    """2-column grid of panels, one per kind: a line per agent (legend by end value) and its 5-95% band."""
    ncols = 2 if len(kinds) > 1 else 1
    nrows = math.ceil(len(kinds) / ncols)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, squeeze=False)).ravel()
    for ax in axes[len(kinds):]:
        ax.set_visible(False)
    for ax, kind in zip(axes, kinds, strict=False):
        d = data[data["kind"] == kind]
        shown = d.groupby("agent", sort=False)[value].apply(lambda s: bool((s.fillna(0) > 0).any()))
        agents = list(shown[shown].index)
        hidden = list(shown[~shown].index)
        end = d[d["agent"].isin(agents)].sort_values("date").groupby("agent")[value].last()
        agents.sort(key=lambda a: (-1 if descending else 1) * np.nan_to_num(end.get(a, 0.0)))
        d = d[d["agent"].isin(agents)]
        if log:
            d = d.assign(**{c: d[c].where(d[c] > 0) for c in (value, f"{value}_p05", f"{value}_p95")})
        if agents:
            sns.lineplot(data=d, x="date", y=value, hue="agent", hue_order=agents, palette=agent_palette(agents),
                         ax=ax, linewidth=1.6, errorbar=None)
            for agent in agents:
                a = d[d["agent"] == agent]
                if (a["runs"] > 1).any():
                    ax.fill_between(a["date"], a[f"{value}_p05"], a[f"{value}_p95"], color=agent_color(agent),
                                    alpha=0.18, linewidth=0)
            ax.legend(title=None, loc=legend_loc, fontsize=8, ncols=1 if len(agents) <= 6 else 2)
        else:
            note(ax, empty_note)
        if hidden:
            ax.text(0.99, 0.02, f"{hidden_text}: " + ", ".join(hidden), transform=ax.transAxes,
                    ha="right", va="bottom", fontsize=7, color="0.4")
        if log:
            ax.set_yscale("log")
            plain_ticks(ax)
        if not agents:
            ax.set_yticks([], minor=False)
            ax.set_yticks([], minor=True)
        ax.set_title(KIND_TITLES.get(kind, kind))
        ax.set_ylabel(ylabel)
        date_axis(ax)
        ax.tick_params(labelbottom=True)


def write_text(path: Path, text: str) -> Path:
    return write_file_atomically(path, lambda p: p.write_text(text))


def save(fig: plt.Figure, out_dir: Path, name: str, title: str, tables: dict[str, pd.DataFrame]) -> FigureFile:
    """Write NAME.png (DPI), NAME.svg and the tables behind it (NAME.csv, or NAME_<key>.csv for several), atomically."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
    try:
        write_file_atomically(png, lambda p: fig.savefig(p, format="png", dpi=DPI))
        fig.set_layout_engine("none")  # keep the layout just computed: the SVG matches the PNG and saves faster
        write_file_atomically(svg, lambda p: fig.savefig(p, format="svg"))
        width_in, height_in = fig.get_size_inches()
    finally:
        plt.close(fig)
    csvs = tuple(write_csv(out_dir / (f"{name}.csv" if key == "" else f"{name}_{key}.csv"), df)
                 for key, df in tables.items())
    return FigureFile(name, title, png, svg, csvs, round(width_in * DPI), round(height_in * DPI))
