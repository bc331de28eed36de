"""The canvas every report figure is drawn on: matplotlib's Agg and SVG renderers, with text measured once per process
and drawn a string at a time.

Text was most of a report's drawing time. Matplotlib measures each string anew for every renderer (one per figure
and file), looks up the font's height tables again for every text it lays out, and since 3.11 draws Agg text glyph
by glyph in Python. Here a string's size, and a font's heights, are kept for the whole process (the report's figures
share most tick labels), and Agg draws a string's glyphs into one bitmap in FreeType's code, as matplotlib did until
3.11, once per process for each string, font and size. Positions, sizes and the SVG's content are those matplotlib
computes; only how Agg blends glyphs differs (glyphs land on whole pixels rather than on fractions of one).

A report's figure is drawn once for both its files (`Canvas.draw_svg_and_agg`): walking the artists cost as much as
the drawing itself, and walked once for the SVG, each drawing call is made again on Agg in pixels.
"""

from __future__ import annotations

import codecs
import math

import numpy as np
from matplotlib import cbook, rcParams
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties, fontManager, get_font
from matplotlib.transforms import Affine2D, Bbox, TransformedPath

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
        return _measured(self._measure, "agg", self.dpi, s, prop, ismath)

    def _measure(self, s, prop, ismath):
        """As `RendererAgg.get_text_width_height_descent`, with a plain string's bitmap drawn from the same layout
        (kept for `_bitmap`): laying a string out is most of the cost of either, and Agg draws what it measures."""
        if ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        font = self._prepare_font(prop)
        font.set_text(s, 0.0, flags=get_hinting_flag())
        width, height = font.get_width_height()  # of the unrotated string
        descent = font.get_descent()
        _keep_bitmap(self.dpi, s, prop, bool(rcParams["text.antialiased"]), font)
        return width / 64.0, height / 64.0, descent / 64.0

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
    time this process asks (or measures it, `_Agg._measure`)."""
    found = _bitmaps.get((renderer.dpi, get_hinting_flag(), antialiased, text, prop))
    if found is None:
        font = renderer._prepare_font(prop)
        font.set_text(text, 0, flags=get_hinting_flag())  # unrotated: draw_text_image rotates the bitmap
        found = _keep_bitmap(renderer.dpi, text, prop, antialiased, font)
    return found


def _keep_bitmap(dpi: float, text: str, prop: FontProperties, antialiased: bool,
                 font) -> tuple[np.ndarray, float, float, float]:
    """Draw the glyphs `font` has laid out for `text` (unrotated, at `dpi`) into one bitmap, and keep it."""
    font.draw_glyphs_to_bitmap(antialiased=antialiased)
    x_offset, y_offset = (v / 64.0 for v in font.get_bitmap_offset())
    found = (np.array(font.get_image(), dtype=np.uint8), font.get_descent() / 64.0, x_offset, y_offset)
    if len(_bitmaps) >= _CACHE_LIMIT:
        _bitmaps.clear()
    _bitmaps[(dpi, get_hinting_flag(), antialiased, text, prop.copy())] = found
    return found


class _SVG(RendererSVG):
    def get_text_width_height_descent(self, s, prop, ismath):
        return _measured(super().get_text_width_height_descent, "svg", SVG_DPI, s, prop, ismath)

    def _get_font_height_metrics(self, prop):
        return _font_heights(prop, SVG_DPI)


class _Both(RendererBase):
    """The SVG renderer, with every drawing call made again on an Agg renderer, scaled from the SVG's points to the
    Agg's pixels: one walk over the figure's artists draws both files.

    The walk is the SVG's (the figure at 72 dpi, text measured by the SVG renderer), so the SVG is the one
    `print_svg` writes. Agg draws the same paths, markers, collections, text and images at the same places in pixels;
    only text positions differ, by the width of a glyph's rounding (they come from the SVG's measures, which scale
    with the size as the Agg's do with hinting off). Calls it cannot mirror (TeX, meshes, Gouraud shading, filters,
    images with their own transform or embedded at another resolution than the PNG's) clear `mirrored`: the Agg
    image is then to be drawn on its own. The report's SVGs embed images at 100 dpi and its PNGs are finer, so its
    figures with images (the timeline, the sensitivity heat map) are always drawn twice.
    """

    def __init__(self, svg: RendererSVG, agg: RendererAgg, scale: float):
        super().__init__()
        self.svg, self.agg, self.scale = svg, agg, scale
        self.width, self.height = svg.width, svg.height
        self.mirrored = True

    # What artists ask while they draw: the SVG renderer's answers.
    def flipy(self):
        return self.svg.flipy()

    def get_canvas_width_height(self):
        return self.svg.get_canvas_width_height()

    def get_text_width_height_descent(self, s, prop, ismath):
        return self.svg.get_text_width_height_descent(s, prop, ismath)

    def _get_font_height_metrics(self, prop):
        return self.svg._get_font_height_metrics(prop)

    def points_to_pixels(self, points):
        return self.svg.points_to_pixels(points)

    def get_image_magnification(self):
        return self.svg.get_image_magnification()

    def option_image_nocomposite(self):
        return self.svg.option_image_nocomposite()

    def option_scale_image(self):
        return self.svg.option_scale_image()

    def new_gc(self):
        return self.svg.new_gc()

    def open_group(self, s, gid=None):
        self.svg.open_group(s, gid)

    def close_group(self, s):
        self.svg.close_group(s)

    def finalize(self):
        self.svg.finalize()

    # Drawing: on both.
    def _pixels(self, transform) -> Affine2D:
        matrix = np.array(transform.get_matrix(), dtype=float)
        matrix[:2] *= self.scale
        return Affine2D(matrix)

    def _agg_gc(self, gc):
        out = self.agg.new_gc()
        out.copy_properties(gc)
        rect = gc.get_clip_rectangle()
        if rect is not None:
            out.set_clip_rectangle(Bbox(rect.get_points() * self.scale))
        path, affine = gc.get_clip_path()
        if path is not None:
            out.set_clip_path(TransformedPath(path, self._pixels(affine)))
        return out

    def draw_path(self, gc, path, transform, rgbFace=None):
        self.svg.draw_path(gc, path, transform, rgbFace)
        self.agg.draw_path(self._agg_gc(gc), path, self._pixels(transform), rgbFace)

    def draw_markers(self, gc, marker_path, marker_trans, path, trans, rgbFace=None):
        self.svg.draw_markers(gc, marker_path, marker_trans, path, trans, rgbFace)
        self.agg.draw_markers(self._agg_gc(gc), marker_path, self._pixels(marker_trans), path, self._pixels(trans),
                              rgbFace)

    def draw_path_collection(self, gc, master_transform, paths, all_transforms, offsets, offset_trans, facecolors,
                             edgecolors, linewidths, linestyles, antialiaseds, urls, offset_position, **kwargs):
        self.svg.draw_path_collection(gc, master_transform, paths, all_transforms, offsets, offset_trans, facecolors,
                                      edgecolors, linewidths, linestyles, antialiaseds, urls, offset_position,
                                      **kwargs)
        # each path goes through its own transform, the master transform, then its offset: scaling the last two
        # scales the whole
        self.agg.draw_path_collection(self._agg_gc(gc), self._pixels(master_transform), paths, all_transforms,
                                      offsets, self._pixels(offset_trans), facecolors, edgecolors, linewidths,
                                      linestyles, antialiaseds, urls, offset_position, **kwargs)

    def draw_image(self, gc, x, y, im, transform=None):
        self.svg.draw_image(gc, x, y, im, transform)
        if transform is None and self.svg.get_image_magnification() == self.scale:  # pixels at the Agg's DPI
            self.agg.draw_image(self._agg_gc(gc), x * self.scale, y * self.scale, im)
        else:
            self.mirrored = False

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        self.svg.draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        # y counts down from the top in both: points from the SVG's top, pixels from the Agg's
        self.agg.draw_text(self._agg_gc(gc), x * self.scale, self.agg.height - (self.height - y) * self.scale, s,
                           prop, angle, ismath, mtext)

    def draw_tex(self, gc, x, y, s, prop, angle, *, mtext=None):
        self.mirrored = False
        self.svg.draw_tex(gc, x, y, s, prop, angle, mtext=mtext)

    def draw_gouraud_triangles(self, gc, triangles_array, colors_array, transform):
        self.mirrored = False
        self.svg.draw_gouraud_triangles(gc, triangles_array, colors_array, transform)

    def draw_quad_mesh(self, *args, **kwargs):
        self.mirrored = False
        self.svg.draw_quad_mesh(*args, **kwargs)

    def start_filter(self):
        self.mirrored = False
        self.svg.start_filter()

    def stop_filter(self, filter_func):
        self.svg.stop_filter(filter_func)


class Canvas(FigureCanvasAgg):
    """Agg for the PNG (and layout), SVG from `savefig(..., format="svg")`, both with the renderers above; or both in
    one walk over the artists (`draw_svg_and_agg`)."""

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

    def draw_svg_and_agg(self, filename, metadata=None) -> bool:
        """Write the figure's SVG (as `print_svg`) and draw it on the Agg renderer (as `draw`) in one walk over its
        artists (`_Both`); returns whether the Agg image is whole (else `draw` it)."""
        agg = self.get_renderer()
        agg.clear()
        dpi = self.figure.dpi
        image_dpi = getattr(self.figure, "_original_dpi", dpi)  # savefig's for the SVG's images: the figure's own
        with (cbook.open_file_cm(filename, "w", encoding="utf-8") as fh,
              cbook._setattr_cm(self, _is_saving=True)):
            if not cbook.file_requires_unicode(fh):
                fh = codecs.getwriter("utf-8")(fh)
            self.figure.dpi = SVG_DPI
            try:
                width, height = self.figure.get_size_inches()
                both = _Both(_SVG(width * SVG_DPI, height * SVG_DPI, fh, image_dpi=image_dpi, metadata=metadata),
                             agg, dpi / SVG_DPI)
                renderer = MixedModeRenderer(self.figure, width, height, image_dpi, both)
                self.figure.draw(renderer)
                renderer.finalize()
            finally:
                self.figure.dpi = dpi
        return both.mirrored
