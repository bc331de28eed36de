"""One colour per agent and per system, shared by the browser app and the analysis figures.

Named agents of the shipped scenarios have fixed colours (grouped by kind: blues for hyperscalers, greens for
neoclouds, reds/oranges for labs, grey for the rest of the market); any other name gets a stable colour from its
name, so an agent keeps its colour across charts, runs and scenarios.
"""

from __future__ import annotations

import hashlib

AGENT_COLORS: dict[str, str] = {
    # hyperscalers
    "microsoft": "#1f4e9c",
    "aws": "#4a90d9",
    "google": "#7fb3e6",
    "meta": "#2a6f97",
    "oracle": "#8c6bb1",
    # neoclouds
    "coreweave": "#1b7837",
    "nebius": "#5aae61",
    "lambda": "#a6d96a",
    "crusoe": "#66bd63",
    "nscale": "#b8e186",
    # labs
    "openai": "#d73027",
    "anthropic": "#f46d43",
    "xai": "#7f0000",
    "google_deepmind": "#fdae61",
    "meta_ai": "#e7298a",
    # everyone else
    "rest_of_market": "#969696",
}

SYSTEM_COLORS: dict[str, str] = {
    "hgx_h100": "#c7e9c0",
    "hgx_h200": "#74c476",
    "hgx_b200": "#9ecae1",
    "hgx_b300": "#4292c6",
    "gb200_nvl72": "#6baed6",
    "gb300_nvl72": "#08519c",
    "vr_nvl72": "#fd8d3c",
    "rubin_cpx": "#fdd0a2",
    "rubin_ultra_nvl144": "#d94801",
    "feynman": "#756bb1",
}

_FALLBACK = ("#17becf", "#bcbd22", "#8c564b", "#e377c2", "#7f7f7f", "#9467bd", "#ff7f0e", "#2ca02c")


def _stable(name: str) -> str:
    digest = hashlib.sha256(name.encode()).digest()
    return _FALLBACK[digest[0] % len(_FALLBACK)]


def agent_color(name: str) -> str:
    """The agent's colour (a hex string), the same everywhere."""
    return AGENT_COLORS.get(name) or _stable(name)


def system_color(key: str) -> str:
    """The system's colour (a hex string), the same everywhere."""
    return SYSTEM_COLORS.get(key) or _stable(key)
