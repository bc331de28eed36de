"""The app's matplotlib charts, each a figure built once per model and updated in place as the model steps.

Rebuilding a figure every month costs more than drawing it (new axes and tick objects, text layout that cannot be
cached across renderers), so each `LiveChart` keeps its figure, canvas and artists and only swaps the data: lines get
`set_data`, stacked areas are re-stacked, bars change width. A chart draws at most once per simulated month (the PNG is
cached), however often the page re-renders. Charts are small (576 x 360 px), drawn on a fixed time axis (the
scenario's start to end) so lines grow to the right as the race runs, and use the shared palette (`model.palette`) so
an agent or a system has one colour everywhere. No pyplot: figures are plain `Figure` objects, safe in a server.
"""

from __future__ import annotations

import io
import threading
import weakref

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from model.palette import agent_color, system_color
from model.viz import data
from model.viz.data import Snapshot

FIGSIZE_IN = (6.4, 4.0)
DPI = 90
NVIDIA_GREEN = "#76b900"
_LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 6.5, "frameon": False,
           "borderaxespad": 0.0, "handlelength": 1.5}


def _short(x: float, _pos=None) -> str:
    """1.2k, 3M, 40: plain-text tick labels (mathtext labels cost more than the rest of a chart to draw)."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:g}{suffix}"
    return f"{x:g}"


def _millions(x: float, _pos=None) -> str:
    return f"{x / 1e6:g}"


def _x(index: pd.DatetimeIndex) -> np.ndarray:
    return mdates.date2num(index.to_pydatetime()) if len(index) else np.empty(0)


class LiveChart:
    """A figure with a fixed layout whose data is replaced each month; `png(snap)` draws it for that month."""

    title = ""
    nrows = 1
    right = 0.74  # room for a legend on the right

    def __init__(self, snap: Snapshot):
        self.fig = Figure(figsize=FIGSIZE_IN, dpi=DPI)
        FigureCanvasAgg(self.fig)
        self.axes = list(self.fig.subplots(self.nrows, 1, sharex=True, squeeze=False)[:, 0])
        self.fig.subplots_adjust(left=0.12, right=self.right, top=0.9, bottom=0.11, hspace=0.15)
        self.axes[0].set_title(self.title, fontsize=10)
        self._waiting = self.axes[0].text(0.5, 0.5, f"starts {snap.start_month}: press Step or \u25b6",
                                          transform=self.axes[0].transAxes, ha="center", va="center",
                                          fontsize=10, color="#666666")
        self._legend_keys: dict[int, tuple[str, ...]] = {}
        self.months_done = -1
        self._png = b""
        self._lock = threading.Lock()
        self.setup(snap)

    def setup(self, snap: Snapshot) -> None:
        """Axes, labels and limits that do not change with the data."""

    def update(self, snap: Snapshot) -> None:
        """Replace the data with the snapshot's (called only once the model has stepped)."""

    def time_axis(self, ax, snap: Snapshot) -> None:
        ax.set_xlim(_x(pd.DatetimeIndex([data.month_timestamp(snap.start_month),
                                         data.month_timestamp(snap.end_month)])))
        ax.xaxis.set_major_locator(mdates.YearLocator())
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y"))
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3, linewidth=0.5)

    def legend(self, ax, keys: list[str], color) -> None:
        """(Re)build the legend only when the set of series changes; proxies keep it cheap."""
        if self._legend_keys.get(id(ax)) == tuple(keys):
            return
        self._legend_keys[id(ax)] = tuple(keys)
        ax.legend([Patch(color=color(k)) for k in keys], keys, **_LEGEND)

    def png(self, snap: Snapshot) -> bytes:
        """The chart for this snapshot as PNG bytes (drawn once per month)."""
        with self._lock:
            if snap.months_done != self.months_done or not self._png:
                if snap.started:
                    self._waiting.set_visible(False)
                    self.update(snap)
                self.months_done = snap.months_done
                buf = io.BytesIO()
                self.fig.savefig(buf, format="png", dpi=DPI)
                self._png = buf.getvalue()
            return self._png


class _LinesChart(LiveChart):
    """One line per series (agents or systems); log or linear y, limits from the data."""

    ylabel = ""
    log = False

    def setup(self, snap: Snapshot) -> None:
        ax = self.axes[0]
        self.time_axis(ax, snap)
        ax.set_ylabel(self.ylabel, fontsize=8)
        self.lines: dict[str, object] = {}
        if self.log:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10, numticks=8))
            ax.yaxis.set_major_formatter(FuncFormatter(_short))
            ax.yaxis.set_minor_locator(NullLocator())

    def series(self, snap: Snapshot) -> pd.DataFrame:
        raise NotImplementedError

    def color(self, key: str) -> str:
        raise NotImplementedError

    def update(self, snap: Snapshot) -> None:
        ax = self.axes[0]
        wide = self.series(snap)
        x = _x(wide.index)
        for key in wide.columns:
            y = wide[key].to_numpy(dtype=float)
            if key not in self.lines:
                if not np.isfinite(y).any():
                    continue
                (self.lines[key],) = ax.plot([], [], color=self.color(key), linewidth=1.3, label=key)
            self.lines[key].set_data(x, y)
        self.legend(ax, [k for k in wide.columns if k in self.lines], self.color)
        values = wide.to_numpy(dtype=float)
        values = values[np.isfinite(values) & (values > 0)] if self.log else values[np.isfinite(values)]
        if values.size:
            lo, hi = float(values.min()), float(values.max())
            if self.log:
                ax.set_ylim(lo / 1.6, hi * 1.6)
            else:
                ax.set_ylim(0, hi * 1.08 if hi > 0 else 1.0)


class H100eChart(_LinesChart):
    title = "Compute online by agent"
    ylabel = "H100-equivalents (log)"
    log = True

    def series(self, snap: Snapshot) -> pd.DataFrame:
        return data.h100e_by_agent(snap.agents)

    def color(self, key: str) -> str:
        return agent_color(key)


class FrontierDaysChart(_LinesChart):
    title = "Days to train the reference frontier run"
    ylabel = "days on largest cluster (log)"
    log = True

    def series(self, snap: Snapshot) -> pd.DataFrame:
        return data.frontier_days_by_agent(snap.agents)

    def color(self, key: str) -> str:
        return agent_color(key)


class RentalChart(_LinesChart):
    title = "Rental price by system"
    ylabel = "USD per GPU-hour"

    def series(self, snap: Snapshot) -> pd.DataFrame:
        return data.rental_by_system(snap.market)

    def color(self, key: str) -> str:
        return system_color(key)


def _restack(ax, old: list, wide: pd.DataFrame) -> tuple[list, list[str]]:
    """Replace a stacked area (PolyCollections) with the data's; returns the new collections and their keys."""
    for coll in old:
        coll.remove()
    keys = [k for k in wide.columns if wide[k].fillna(0.0).any()]
    if not keys:
        return [], []
    colls = ax.stackplot(_x(wide.index), wide[keys].fillna(0.0).to_numpy().T,
                         colors=[system_color(k) for k in keys], linewidth=0)
    total = float(wide[keys].fillna(0.0).sum(axis=1).max())
    ax.set_ylim(0, total * 1.08 if total > 0 else 1.0)
    return list(colls), keys


class GpusBySystemChart(LiveChart):
    title = "Installed GPUs by system (all agents)"

    def setup(self, snap: Snapshot) -> None:
        ax = self.axes[0]
        self.time_axis(ax, snap)
        ax.set_ylabel("GPUs online (millions)", fontsize=8)
        ax.yaxis.set_major_formatter(FuncFormatter(_millions))
        self.stack: list = []
        self.keys: list[str] = []

    def update(self, snap: Snapshot) -> None:
        self.stack, self.keys = _restack(self.axes[0], self.stack, data.gpus_by_system(snap.agents))
        self.legend(self.axes[0], self.keys[::-1], system_color)  # newest generation on top, as stacked


class LargestClusterChart(LiveChart):
    title = "Largest cluster per agent"
    right = 0.95

    def setup(self, snap: Snapshot) -> None:
        ax = self.axes[0]
        self.fig.subplots_adjust(left=0.22, bottom=0.13)
        ax.set_xlabel("GPUs in one cluster (thousands)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(axis="x", alpha=0.3, linewidth=0.5)
        self.bars: dict[str, object] = {}

    def update(self, snap: Snapshot) -> None:
        ax = self.axes[0]
        sizes = data.largest_cluster_now(snap.agents).fillna(0.0) / 1e3
        if list(sizes.index) != list(self.bars):
            for bar in self.bars.values():
                bar.remove()
            y = np.arange(len(sizes))[::-1]
            rects = ax.barh(y, sizes.to_numpy(), color=[agent_color(a) for a in sizes.index], height=0.75)
            self.bars = dict(zip(sizes.index, rects, strict=True))
            ax.set_yticks(y, list(sizes.index))
            ax.set_ylim(-0.6, len(sizes) - 0.4)
        for agent, width in sizes.items():
            self.bars[agent].set_width(float(width))
        ax.set_xlim(0, max(float(sizes.max()) * 1.08, 1.0))
        ax.set_title(f"{self.title}, {snap.month}", fontsize=10)


class RevenueBacklogChart(LiveChart):
    title = "NVIDIA: monthly revenue and order backlog"
    nrows = 2

    def setup(self, snap: Snapshot) -> None:
        top, bottom = self.axes
        for ax in self.axes:
            self.time_axis(ax, snap)
        top.set_ylabel("revenue\n(USD B / month)", fontsize=8)
        bottom.set_ylabel("backlog\n(systems)", fontsize=8)
        bottom.yaxis.set_major_formatter(FuncFormatter(_short))
        (self.revenue,) = top.plot([], [], color=NVIDIA_GREEN, linewidth=1.6)
        top.legend([self.revenue], ["revenue"], **_LEGEND)
        self.stack: list = []

    def update(self, snap: Snapshot) -> None:
        top, bottom = self.axes
        revenue = data.nvidia_revenue_usd(snap.market) / 1e9
        self.revenue.set_data(_x(revenue.index), revenue.to_numpy())
        top.set_ylim(0, max(float(revenue.max()) * 1.1, 1.0))
        self.stack, keys = _restack(bottom, self.stack, data.backlog_units_by_system(snap.market))
        self.legend(bottom, keys[::-1], system_color)


CHARTS: dict[str, type[LiveChart]] = {
    "h100e": H100eChart,
    "gpus_by_system": GpusBySystemChart,
    "largest_cluster": LargestClusterChart,
    "frontier_days": FrontierDaysChart,
    "revenue_backlog": RevenueBacklogChart,
    "rental": RentalChart,
}

_LIVE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LIVE_LOCK = threading.Lock()


def live_chart(model, name: str) -> LiveChart:
    """The model's chart `name`, created on first use and kept as long as the model lives (a reset = a new model)."""
    with _LIVE_LOCK:
        per_model = _LIVE.setdefault(model, {})
        if name not in per_model:
            per_model[name] = CHARTS[name](data.cached_snapshot(model))
        return per_model[name]


def chart_png(model, name: str) -> bytes:
    """The chart `name` for the model's current month, as PNG bytes."""
    return live_chart(model, name).png(data.cached_snapshot(model))
