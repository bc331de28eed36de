"""Shared look and atomic output of every figure: Agg backend, seaborn theme, date axes, PNG + SVG + CSV.

Figures keep a fixed width and a layout engine instead of `bbox_inches="tight"`, so a PNG's pixel size is exactly
its figure size times DPI and can be checked. Every figure states its definitions in a note at its foot
(`definitions`); names come from `analysis.names` (scenario titles, catalog names, readable parameters).
"""

from __future__ import annotations

import io
import struct
import textwrap
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from isal import isal_zlib  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

from analysis.axes import ReportFigure  # noqa: E402
from analysis.canvas import Canvas  # noqa: E402
from analysis.names import KIND_NAMES, agent_name, system_name, system_vendor  # noqa: E402
from model.errors import InputError  # noqa: E402
from model.palette import AGENT_COLORS, SYSTEM_COLORS, agent_color, system_color  # noqa: E402
from model.results import write_csv, write_file_atomically  # noqa: E402
from model.results.names import with_vendor  # noqa: E402

DPI = 150  # 1800 px wide: sharper than the report's page (1240 px) and the README's 1200 px on a 1.5x screen
WIDTH_IN = 12.0
# ISA-L's deflate at level 1: a ninth of zlib's level-1 time on these charts for files ~2% larger (zlib's default 6
# costs 2.5x level 1 for files ~17% smaller); any inflater reads it.
PNG_COMPRESSION = 1
KIND_TITLES = KIND_NAMES
H100E = "1 H100e = 989 dense BF16 TFLOP/s (an NVIDIA H100 SXM)"
# Scenario colours for overlays: well-separated hues, none an agent's or a system's colour.
_LABEL_COLORS = ("#1b1b1b", "#e66101", "#5e3c99", "#1a9850", "#d01c8b", "#0571b0", "#8c510a", "#b2182b")
RECORD_COLOR = "#222222"
POSITIVE_COLOR, NEGATIVE_COLOR, MUTED_COLOR = "#2166ac", "#b2182b", "#bdbdbd"
MAX_ROWS = 4  # inputs drawn one row each; beyond this the comparison figure holds them


class NotApplicable(InputError):
    """The inputs cannot make this figure (e.g. a comparison of one scenario); the report skips it with a note."""


@dataclass(frozen=True)
class FigureFile:
    """What one figure module wrote, and what the figure shows (for the reports)."""

    name: str
    title: str
    png: Path
    svg: Path
    csvs: tuple[Path, ...]
    width_px: int
    height_px: int
    notes: str = ""


def setup() -> None:
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.9,
                  rc={"axes.titleweight": "bold", "figure.titleweight": "bold", "legend.frameon": True,
                      "legend.framealpha": 0.85, "legend.edgecolor": "none", "axes.titlesize": 10,
                      "svg.fonttype": "none", "figure.dpi": 100, "path.simplify": True,
                      # Titles at a fixed height (1.0, matplotlib's own default position): by default every draw
                      # measures each panel's tick labels to lift a title above x ticks on top, which no figure
                      # has; that search was a quarter of a report's drawing time.
                      "axes.titley": 1.0,
                      # Glyphs drawn from their outlines (smooth at 150 dpi) rather than through the font's
                      # hinting programs, which matplotlib runs again for every glyph it loads.
                      "text.hinting": "no_hinting"})
    # The default patch colour "C0" names the colour cycle, which matplotlib resolves again (reading the whole
    # cycle) for every patch it makes, four spines per panel included; the same colour as hex is looked up once.
    matplotlib.rcParams["patch.facecolor"] = matplotlib.colors.to_hex(matplotlib.rcParams["patch.facecolor"])


def new_figure(height_in: float, **kwargs) -> Figure:
    """A figure on the report's canvas (`analysis.canvas`), with the report's axes (`analysis.axes`), outside pyplot:
    nothing to register or close."""
    setup()
    fig = ReportFigure(figsize=(WIDTH_IN, height_in), layout="constrained", **kwargs)
    Canvas(fig)
    return fig


def sys_name(key: str, vendor: str = "") -> str:
    """The catalog's name of a system, other vendors' with their vendor in front ("Google · TPU7x Ironwood"); with
    `vendor`, that vendor in front (NVIDIA's too) unless the name starts with it."""
    vendor = vendor or ("" if system_vendor(key) == "NVIDIA" else system_vendor(key))
    return with_vendor(system_name(key), vendor) if vendor else system_name(key)


def slug(text: str) -> str:
    """A label as a file-name part."""
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def label_colors(labels: Sequence[str]) -> dict[str, str]:
    return {lab: _LABEL_COLORS[i % len(_LABEL_COLORS)] for i, lab in enumerate(labels)}


def agent_palette(agents) -> dict[str, str]:
    return {a: agent_color(a) for a in agents}


def system_palette(systems) -> dict[str, str]:
    return {s: system_color(s) for s in systems}


def date_axis(ax, lo: pd.Timestamp | None = None, hi: pd.Timestamp | None = None, narrow: bool = False) -> None:
    """Readable, fixed date ticks for the x range (or `lo`..`hi`): years for long runs or narrow panels, quarters or
    months for short runs.

    Fixed ticks (computed once) instead of matplotlib's AutoDateLocator, which layout passes call again and again.
    """
    if lo is None or hi is None:
        lo, hi = (pd.Timestamp(mdates.num2date(v)).tz_localize(None) for v in ax.get_xlim())
    months = (hi.year - lo.year) * 12 + hi.month - lo.month
    if months >= 48 or (narrow and months >= 18):
        step = 1 if months <= (12 * 12 if not narrow else 12 * 5) else 2
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
    ax.set_xlabel("")


def millions(ax, axis: str = "y") -> None:
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1e6:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def scaled(ax, scale: float, axis: str = "y") -> None:
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / scale:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def percent(ax, axis: str = "y") -> None:
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.0%}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def plain_ticks(ax) -> None:
    """Log axes labelled 2, 5, 10, 20 rather than 2x10^0 (major ticks at 1, 2 and 5 of each decade, no minor)."""
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=10))
    ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))


def compact(v: float) -> str:
    """1500 -> "1.5k", 2000000 -> "2M"."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


def count_ticks(ax, axis: str = "y") -> None:
    """Counts labelled 10k, 500k, 1M on linear or log axes (minor log ticks at 2, 3, 5)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: compact(v)))
    if target.get_scale() == "log":
        target.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=8))
        target.set_minor_locator(matplotlib.ticker.NullLocator())


def note(ax, text: str) -> None:
    ax.text(0.5, 0.5, textwrap.fill(text, 60), transform=ax.transAxes, ha="center", va="center", color="0.35",
            fontsize=8.5)


def definitions(fig, text: str, width: int = 205) -> str:
    """The figure's definitions (what each quantity is, thresholds, sources) in a small note at its foot; the layout
    engine keeps room for it. Returns the text (the reports repeat it)."""
    wrapped = "\n".join(textwrap.fill(p, width) for p in text.split("\n") if p.strip())
    fig.supxlabel(wrapped, x=0.005, ha="left", fontsize=7.5, color="0.25", fontweight="normal")
    return text


def title(fig, text: str, subtitle: str = "") -> None:
    fig.suptitle(text + (f"\n{subtitle}" if subtitle else ""), fontsize=12 if not subtitle else 11, x=0.005,
                 ha="left")


def bars(ax, x, heights, width_days: float, color, bottom=None, alpha: float = 1.0, **kwargs):
    """Vertical bars centred on dates `x`, `width_days` wide, as one collection (one artist to draw, not one per bar
    as `Axes.bar` makes); returns it. Zero-height bars are left out."""
    from matplotlib.collections import PolyCollection

    centre = mdates.date2num(pd.DatetimeIndex(x))
    top = np.asarray(heights, dtype=float)
    base = np.zeros_like(top) if bottom is None else np.asarray(bottom, dtype=float)
    keep = np.isfinite(top) & (top != 0)
    left, right = centre[keep] - width_days / 2, centre[keep] + width_days / 2
    lo, hi = base[keep], base[keep] + top[keep]
    verts = np.stack([np.column_stack(c) for c in ((left, lo), (left, hi), (right, hi), (right, lo))], axis=1)
    coll = PolyCollection(verts, facecolors=color, edgecolors="none", linewidths=0, alpha=alpha, **kwargs)
    if len(lo):
        coll.sticky_edges.y.append(float(lo.min()))  # as Axes.bar: no margin below the bars' base
    ax.add_collection(coll, autolim=True)
    ax.autoscale_view()
    return coll


def band(ax, x, lo, hi, color: str, alpha: float = 0.18, **kwargs) -> None:
    ax.fill_between(x, lo, hi, color=color, alpha=alpha, linewidth=0, **kwargs)


def legend_below(ax, handles, ncols: int, fontsize: float = 7.5, title: str | None = None) -> None:
    """A legend under an axes (the layout engine makes room; the figure's foot keeps the definitions)."""
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.09), ncols=max(1, ncols),
                  fontsize=fontsize, title=title, title_fontsize=fontsize, frameon=False, borderaxespad=0)


def legend_outside(sub, handles, ncols: int, fontsize: float = 7.5, title: str | None = None) -> None:
    """A legend under a subfigure's panels (the figure's foot keeps the definitions)."""
    if handles:
        sub.legend(handles=handles, loc="outside lower center", ncols=max(1, ncols), fontsize=fontsize, title=title,
                   title_fontsize=fontsize, frameon=False)


def record_window(lo: pd.Timestamp, hi: pd.Timestamp, last_record: pd.Timestamp | None) -> tuple:
    """The x range of a panel set beside the public record: the run's start to a year after the last record date
    (not beyond the run's end), so the years with facts are not squeezed by the projection."""
    if last_record is None or pd.isna(last_record):
        return lo, hi
    return lo, min(hi, max(lo + pd.DateOffset(months=24), last_record + pd.DateOffset(months=12)))


def grid_axes(fig, n: int, ncols: int, sharex: bool = True, sharey: bool = False) -> list:
    """n axes in a grid of `ncols` columns (the spare cells hidden)."""
    nrows = max(1, -(-n // ncols))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=sharex, sharey=sharey, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax in axes[:n]:  # small panels read well with a few round ticks (and draw faster)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=4))
    return list(axes[:n])


def kind_of(rs_agents: pd.DataFrame) -> dict[str, str]:
    """{agent: kind} (the first label that names it)."""
    first = rs_agents.drop_duplicates("agent")
    return dict(zip(first["agent"], first["kind"], strict=True))


def order_agents(agents: Sequence[str], kinds: dict[str, str], values: dict[str, float] | None = None) -> list[str]:
    """Agents grouped by kind (hyperscalers, neoclouds, labs, rest of market), then by `values` (descending),
    then in the palette's order."""
    from analysis.summaries import KIND_ORDER

    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    palette = list(AGENT_COLORS)
    return sorted(agents, key=lambda a: (rank.get(kinds.get(a, ""), len(rank)),
                                         -(values or {}).get(a, 0.0),
                                         palette.index(a) if a in palette else len(palette), a))


def agent_label(key: str) -> str:
    return agent_name(key)


def write_text(path: Path, text: str) -> Path:
    return write_file_atomically(path, lambda p: p.write_text(text, encoding="utf-8"))


def layout_once(fig: Figure) -> None:
    """Run the figure's layout engine once, at the PNG's DPI, and fix the result.

    With a layout engine set, every `savefig` first walks the whole figure with drawing switched off (to run the
    engine), then draws it: four walks for a PNG and an SVG. Laid out here at the DPI `savefig` would use, then with
    no engine, each file is one draw and the positions are those `savefig` would have found.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        return
    fig.set_dpi(DPI)
    engine.execute(fig)
    fig.set_layout_engine(None)  # None (not "none", a placeholder engine that still costs the extra walk)


def fix_ticks(fig: Figure, sized: bool = True) -> None:
    """Fix every axis's ticks to those its locator places inside the view, labelled as its formatter labels them among
    all its locator's ticks. Before the layout (`sized=False`), only the locators whose ticks do not depend on the
    axes' size (fixed, or a set number of bins or ticks); after it, all.

    Each layout pass and draw otherwise asks every locator and formatter again, and creates and moves a tick for every
    location the locator returns, though only those inside the view are drawn (a log locator returns a decade beyond
    each end, MaxNLocator a step beyond). What is drawn stays the same: the same ticks, labels and offset text.
    """
    done: set[int] = set()  # tickers fixed already (shared axes share one ticker, and their view)
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            transform = axis.get_transform()
            lo, hi = sorted(transform.transform(axis.get_view_interval()))
            tolerance = 1e-10 * (hi - lo)  # as matplotlib's own test of which ticks to draw
            for ticker in (axis.major, axis.minor):
                if (id(ticker) in done or isinstance(ticker.locator, matplotlib.ticker.NullLocator)
                        or not (sized or _sizeless(ticker.locator))):
                    continue
                done.add(id(ticker))
                locs = np.asarray(ticker.locator(), dtype=float)
                labels = ticker.formatter.format_ticks(locs)
                offset = ticker.formatter.get_offset()
                where = transform.transform(locs)
                keep = (where >= lo - tolerance) & (where <= hi + tolerance)
                ticker.locator = matplotlib.ticker.FixedLocator(locs[keep])
                ticker.formatter = matplotlib.ticker.FixedFormatter(
                    [label for label, inside in zip(labels, keep, strict=True) if inside])
                ticker.formatter.set_offset_string(offset)
                ticker.locator.set_axis(axis)
                ticker.formatter.set_axis(axis)


def _sizeless(locator: matplotlib.ticker.Locator) -> bool:
    """Whether the locator's ticks are the same whatever the axes' size (AutoLocator's and an automatic LogLocator's
    number of ticks follow the axis's length)."""
    if isinstance(locator, matplotlib.ticker.FixedLocator):
        return True
    if isinstance(locator, matplotlib.ticker.MaxNLocator):
        return getattr(locator, "_nbins", "auto") != "auto"
    if isinstance(locator, matplotlib.ticker.LogLocator):
        return getattr(locator, "numticks", "auto") not in ("auto", None)
    return False


def fix_empty_labels(fig: Figure) -> None:
    """Pin the axis labels that have no text, so drawing does not measure every tick label to place them; leave the
    spines out of the layout.

    Matplotlib places an axis label beside the tick labels of its axes (and of aligned siblings) on every draw, and
    measures those tick labels to do so, whether or not the label has any text. Most panels have none. A spine lies
    on its axes' edge (the theme's ticks have no length), yet measuring it for the layout updates its axis's ticks
    again.
    """
    for ax in fig.get_axes():
        for spine in ax.spines.values():
            spine.set_in_layout(False)
        if not ax.xaxis.label.get_text():
            ax.xaxis.set_label_coords(0.5, 0.0)
        if not ax.yaxis.label.get_text():
            ax.yaxis.set_label_coords(0.0, 0.5)


def png_bytes(fig: Figure) -> bytes:
    """The figure drawn on its Agg canvas at DPI, as PNG bytes (`encode_png`)."""
    fig.set_dpi(DPI)
    fig.canvas.draw()
    return encode_png(np.asarray(fig.canvas.buffer_rgba()))


def encode_png(rgba: np.ndarray) -> bytes:
    """An RGBA canvas as PNG bytes: RGB when every pixel is opaque (figures have a white background), unfiltered rows
    deflated (by ISA-L), the DPI in pHYs, matplotlib named in the Software text.

    Written here rather than through Pillow: Pillow tries every PNG filter on every row (two thirds of its encoding
    time, and it has no option to choose one), yet on flat-coloured charts unfiltered rows compress as well or
    better; this takes a third of the time for files no larger.
    """
    height, width = rgba.shape[:2]
    opaque = bool(rgba[..., 3].min() == 255)
    # Pillow drops the alpha channel in C, at twice the speed of numpy's strided copy
    pixels = (np.asarray(Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).convert("RGB"))
              if opaque else rgba)
    rows = np.empty((height, 1 + width * pixels.shape[2]), np.uint8)
    rows[:, 0] = 0  # filter type "none" on every row
    rows[:, 1:] = pixels.reshape(height, -1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    per_metre = round(DPI / 0.0254)
    return b"".join([
        b"\x89PNG\r\n\x1a\n",
        chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2 if opaque else 6, 0, 0, 0)),
        chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
        chunk(b"tEXt", f"Software\0Matplotlib version{matplotlib.__version__}, https://matplotlib.org/".encode("latin-1")),
        chunk(b"IDAT", isal_zlib.compress(rows, PNG_COMPRESSION)),  # the array's own buffer, not a copy
        chunk(b"IEND", b""),
    ])


def svg_and_png(fig: Figure) -> tuple[str, bytes]:
    """The figure's SVG (as `savefig(format="svg")` writes it) and its PNG at DPI, drawn in one walk over its
    artists (`analysis.canvas`), or in two when the PNG could not be drawn along."""
    fig.set_dpi(DPI)
    svg = io.StringIO()
    if not fig.canvas.draw_svg_and_agg(svg):
        fig.canvas.draw()
    return svg.getvalue(), encode_png(np.asarray(fig.canvas.buffer_rgba()))


def save(fig: Figure, out_dir: Path, name: str, title: str, tables: dict[str, pd.DataFrame],
         notes: str = "") -> FigureFile:
    """Write NAME.png (DPI), NAME.svg and the tables behind it (NAME.csv, or NAME_<key>.csv for several), atomically."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
    fix_empty_labels(fig)
    fix_ticks(fig, sized=False)
    layout_once(fig)
    fix_ticks(fig)
    svg_text, png_data = svg_and_png(fig)
    write_file_atomically(png, lambda p: p.write_bytes(png_data))
    write_text(svg, svg_text)
    width_in, height_in = fig.get_size_inches()
    csvs = tuple(write_csv(out_dir / (f"{name}.csv" if key == "" else f"{name}_{key}.csv"), df)
                 for key, df in tables.items())
    return FigureFile(name, title, png, svg, csvs, round(width_in * DPI), round(height_in * DPI), notes)


__all__ = ["AGENT_COLORS", "DPI", "H100E", "SYSTEM_COLORS", "WIDTH_IN", "FigureFile", "NotApplicable", "agent_color",
           "system_color"]
