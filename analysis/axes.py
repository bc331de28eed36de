"""The report's figure and axes classes: matplotlib's, with each axis's further ticks made by copying its first.

Making ticks was a sixth of a report's drawing time. Matplotlib makes every tick from scratch (two tick lines, a grid
line and two labels, each reading its defaults from rcParams), then copies the first tick's properties onto it (deep
copies of its markers included). Here a further tick is a copy of the first, with its own callbacks, sticky edges and
label fonts (what a tick's artists change in place); the rest of its state is replaced, not changed, when it is moved
or restyled. Whatever is drawn is the same: each tick is the first one, moved (`Tick.update_position`) and relabelled.

`ReportFigure` makes these axes wherever the figure or its subfigures make an axes without a projection of its own.
"""

from __future__ import annotations

import copy

from matplotlib import cbook
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Tick, XAxis, YAxis
from matplotlib.figure import Figure, SubFigure, _stale_figure_callback

_TICK_PARTS = ("tick1line", "tick2line", "gridline", "label1", "label2")


def _copy_artist(artist: Artist) -> Artist:
    new = copy.copy(artist)
    new._callbacks = cbook.CallbackRegistry(signals=["pchanged"])
    edges = artist._sticky_edges
    if edges is not None:
        new._sticky_edges = type(edges)(list(edges.x), list(edges.y))
    return new


def copy_tick(tick: Tick) -> Tick:
    """A tick like `tick` (the same class, place, style and label), sharing nothing that either may change in place."""
    new = _copy_artist(tick)
    for part in _TICK_PARTS:
        setattr(new, part, _copy_artist(getattr(tick, part)))
    for label in (new.label1, new.label2):
        label._fontproperties = label._fontproperties.copy()  # set_fontsize and the like change it in place
    return new


def _grown(ticks: list, numticks: int) -> list:
    """The first `numticks` of `ticks`, copying the first tick for any that are missing (kept for later calls)."""
    while len(ticks) < numticks:
        ticks.append(copy_tick(ticks[0]))
    return ticks[:numticks]


class _CopiedTicks:
    """`Axis.get_major_ticks` and `get_minor_ticks`, with the ticks they add copied from the first."""

    def get_major_ticks(self, numticks=None):
        return _grown(self.majorTicks, len(self.get_majorticklocs()) if numticks is None else numticks)

    def get_minor_ticks(self, numticks=None):
        return _grown(self.minorTicks, len(self.get_minorticklocs()) if numticks is None else numticks)


class _XAxis(_CopiedTicks, XAxis):
    pass


class _YAxis(_CopiedTicks, YAxis):
    pass


class ReportAxes(Axes):
    """Matplotlib's rectilinear axes with the axes above."""

    def _init_axis(self):  # as `_AxesBase._init_axis`, with the axis classes above
        self.xaxis = _XAxis(self, clear=False)
        self.spines.bottom.register_axis(self.xaxis)
        self.spines.top.register_axis(self.xaxis)
        self.yaxis = _YAxis(self, clear=False)
        self.spines.left.register_axis(self.yaxis)
        self.spines.right.register_axis(self.yaxis)


class _ReportAxesByDefault:
    """A figure (or subfigure) whose axes are `ReportAxes` unless a projection or class is asked for, and whose
    subfigures do the same."""

    def _process_projection_requirements(self, *, axes_class=None, polar=False, projection=None, **kwargs):
        if axes_class is None and not polar and projection is None:
            axes_class = ReportAxes
        return super()._process_projection_requirements(axes_class=axes_class, polar=polar, projection=projection,
                                                        **kwargs)

    def add_subfigure(self, subplotspec, **kwargs):  # as `FigureBase.add_subfigure`, with the class below
        sub = ReportSubFigure(self, subplotspec, **kwargs)
        self.subfigs += [sub]
        sub._remove_method = self.subfigs.remove
        sub.stale_callback = _stale_figure_callback
        self.stale = True
        return sub


class ReportSubFigure(_ReportAxesByDefault, SubFigure):
    pass


class ReportFigure(_ReportAxesByDefault, Figure):
    pass
