"""The canvas every report figure is drawn on: matplotlib's Agg and SVG renderers, with text measured once per process
and drawn a string at a time.

Text was most of a report's drawing time. Matplotlib measures each string anew for every renderer (one per figure
and file), looks up the font's height tables again for every text it lays out, and since 3.11 draws Agg text glyph
by glyph in Python. Here a string's size, and a font's heights, are kept for the whole process (the report's figures
share most tick labels), and Agg draws a string's glyphs into one bitmap in FreeType's code, as matplotlib did until
3.11, once per process for each string, font and size. Positions, sizes and the SVG's content are those matplotlib
computes; only how Agg blends glyphs differs (glyphs land on whole pixels rather than on fractions of one).
"""

from __future__ import annotations

import codecs
import math

import numpy as np
from matplotlib import cbook
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties, fontManager, get_font

SVG_DPI = 72  # the SVG renderer works in points, and the figure's DPI is 72 while it draws
_CACHE_LIMIT = 20_000  # entries per cache; a report uses a few thousand

_sizes: dict[tuple, tuple[float, float, float]] = {}
_heights: dict[tuple, tuple[float | None, float | None, float | None]] = {}
_bitmaps: dict[tuple, tuple[np.ndarray, float, float, float]] = {}


def _font_heights(prop: FontProperties, dpi: float) -> tuple[float | None, float | None, float | None]:
    """(ascent, descent, line gap) in pixels of the font `prop` names, from its OS/2 or hhea table: what
    `matplotlib.text.Text._get_layout` reads there for every text it lays out, read once per font, size and DPI."""
    key = (prop, dpi)
    found = _heights.get(key)
    if found is not None:
        return found
    font = get_font(fontManager._find_fonts_by_props(prop))
    found = (None, None, None)  # no table: matplotlib measures "lp" instead
    for table_name, gap_key, ascent_key, descent_key in (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                                                        ("hhea", "lineGap", "ascent", "descent")):
        table = font.get_sfnt_table(table_name)
        if table is None:
            continue
        scale = 1 / font.get_sfnt_table("head")["unitsPerEm"] * prop.get_size_in_points() * dpi / 72
        found = (table[ascent_key] * scale, -table[descent_key] * scale, table[gap_key] * scale)
        break
    if len(_heights) >= _CACHE_LIMIT:
        _heights.clear()
    _heights[(prop.copy(), dpi)] = found  # a copy: the text may change its own font properties later
    return found


def _measured(measure, kind: str, dpi: float, text: str, prop: FontProperties, ismath) -> tuple[float, float, float]:
    """(width, height, descent) of `text`, measured by `measure` the first time this process asks."""
    key = (kind, dpi, get_hinting_flag(), text, prop, ismath)
    found = _sizes.get(key)
    if found is None:
        found = measure(text, prop, ismath)
        if len(_sizes) >= _CACHE_LIMIT:
            _sizes.clear()
        _sizes[(kind, dpi, get_hinting_flag(), text, prop.copy(), ismath)] = found
    return found


class _Agg(RendererAgg):
    def get_text_width_height_descent(self, s, prop, ismath):
        return _measured(super().get_text_width_height_descent, "agg", self.dpi, s, prop, ismath)

    def _get_font_height_metrics(self, prop):  # the hook Text._get_layout asks before reading the font's tables
        return _font_heights(prop, self.dpi)

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        """The string's glyphs laid out and drawn into one bitmap by FreeType (once per process for each string, font
        and size), then blended at a whole pixel."""
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        image, descent, x_offset, y_offset = _bitmap(self, s, prop, bool(gc.get_antialiased()))
        x = round(x + x_offset + descent * math.sin(math.radians(angle)))
        y = round(y + y_offset + descent * math.cos(math.radians(angle)))
        self._renderer.draw_text_image(image, x, y + 1, angle, gc)
        return None


def _bitmap(renderer: _Agg, text: str, prop: FontProperties,
            antialiased: bool) -> tuple[np.ndarray, float, float, float]:
    """(glyphs, descent, x offset, y offset) of `text` unrotated, in pixels: what FreeType draws for it, drawn the first
    time this process asks."""
    key = (renderer.dpi, get_hinting_flag(), antialiased, text, prop)
    found = _bitmaps.get(key)
    if found is None:
        font = renderer._prepare_font(prop)
        font.set_text(text, 0, flags=get_hinting_flag())  # unrotated: draw_text_image rotates the bitmap
        font.draw_glyphs_to_bitmap(antialiased=antialiased)
        x_offset, y_offset = (v / 64.0 for v in font.get_bitmap_offset())
        found = (np.array(font.get_image(), dtype=np.uint8), font.get_descent() / 64.0, x_offset, y_offset)
        if len(_bitmaps) >= _CACHE_LIMIT:
            _bitmaps.clear()
        _bitmaps[(renderer.dpi, get_hinting_flag(), antialiased, text, prop.copy())] = found
    return found


class _SVG(RendererSVG):
    def get_text_width_height_descent(self, s, prop, ismath):
        return _measured(super().get_text_width_height_descent, "svg", SVG_DPI, s, prop, ismath)

    def _get_font_height_metrics(self, prop):
        return _font_heights(prop, SVG_DPI)


class Canvas(FigureCanvasAgg):
    """Agg for the PNG (and layout), SVG from `savefig(..., format="svg")`, both with the renderers above."""

    def get_renderer(self):
        width, height = self.get_width_height(physical=True)
        key = width, height, self.figure.dpi
        if self._lastKey != key:
            self.renderer = _Agg(width, height, self.figure.dpi)
            self._lastKey = key
        return self.renderer

    def print_svg(self, filename, *, bbox_inches_restore=None, metadata=None, **_savefig_options):
        """As `FigureCanvasSVG.print_svg`, with the SVG renderer above. `savefig` passes its dpi and colours to
        every print method outside matplotlib; SVG uses neither (the figure applies its colours itself)."""
        with cbook.open_file_cm(filename, "w", encoding="utf-8") as fh:
            if not cbook.file_requires_unicode(fh):
                fh = codecs.getwriter("utf-8")(fh)
            dpi = self.figure.dpi
            self.figure.dpi = SVG_DPI
            width, height = self.figure.get_size_inches()
            renderer = MixedModeRenderer(self.figure, width, height, dpi,
                                         _SVG(width * SVG_DPI, height * SVG_DPI, fh, image_dpi=dpi, metadata=metadata),
                                         bbox_inches_restore=bbox_inches_restore)
            self.figure.draw(renderer)
            renderer.finalize()
