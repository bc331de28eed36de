"""One colour per agent and per system, shared by the browser app and the analysis figures.

Agents: every named agent of the shipped scenarios has its own hue, chosen so that any two differ clearly (CIE76
colour difference of at least 25 between every pair) and every colour stays legible on a white and on a dark
background (contrast ratio at least 2.4 on white, 2.8 on #121212); `tests/test_viz_palette.py` holds these
properties. Hues are not grouped by kind (five blues for the hyperscalers could not be told apart); the kind shows in
the order of legends instead. The rest of the market, an aggregate, is grey.

Systems: grouped by architecture (Hopper greens, Blackwell blues, Rubin oranges, Feynman purple; Google TPUs teal,
AWS Trainium browns, AMD Instinct reds, each darker with each generation) so a stacked chart reads as generations;
`SYSTEM_COLORS` is in catalog order, which figures use to order systems.

Any other name gets a stable colour from its name, so an agent or system keeps its colour across charts, runs and
scenarios.
"""

from __future__ import annotations

import hashlib

AGENT_COLORS: dict[str, str] = {
    # hyperscalers
    "microsoft": "#1f6fd1",
    "aws": "#f28e00",
    "google": "#14a37f",
    "meta": "#8e5cc9",
    "oracle": "#d9262b",
    # neoclouds
    "coreweave": "#00b4d8",
    "nebius": "#a6a630",
    "lambda": "#7f5539",
    "crusoe": "#f0509c",
    "nscale": "#5cb82e",
    # labs
    "openai": "#b8860b",
    "anthropic": "#e8896b",
    "xai": "#d633d6",
    "google_deepmind": "#4a4af0",
    "meta_ai": "#9b2f8f",
    # everyone else
    "rest_of_market": "#9a9a9a",
    "china": "#8a8a5c",
}

SYSTEM_COLORS: dict[str, str] = {
    "hgx_h100": "#c7e9c0",
    "hgx_h200": "#74c476",
    "hgx_h20": "#31a354",
    "hgx_b200": "#9ecae1",
    "hgx_b300": "#4292c6",
    "gb200_nvl72": "#6baed6",
    "gb300_nvl72": "#08519c",
    "vr_nvl72": "#fd8d3c",
    "rubin_cpx": "#fdd0a2",
    "rubin_ultra_nvl144": "#d94801",
    "feynman": "#756bb1",
    # other vendors: Google TPUs teal, AWS Trainium browns, AMD Instinct reds
    "tpu_v4": "#d8f0ec",
    "tpu_v5e": "#b0e0d8",
    "tpu_v5p": "#80cdc1",
    "tpu_v6e": "#35978f",
    "tpu_v7": "#01665e",
    "trn1": "#f6e8c3",
    "trn2": "#dfc27d",
    "trn2_ultraserver": "#bf812d",
    "trn3": "#8c510a",
    "mi300x": "#fcbba1",
    "mi325x": "#fb6a4a",
    "mi355x": "#cb181d",
    "mi450_helios": "#67000d",
}

# Vendors, for shares by vendor: each the hue of its systems' family (NVIDIA a green of its own, not a generation's).
VENDOR_COLORS: dict[str, str] = {
    "NVIDIA": "#5a9e1b",
    "Google": "#35978f",
    "AWS": "#bf812d",
    "AMD": "#cb181d",
}

# For figures that need a pair meaning "raises" / "lowers" (not agents): a blue and a red that differ for readers
# with red-green colour blindness too.
POSITIVE_COLOR = "#1f6fd1"
NEGATIVE_COLOR = "#d9262b"

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


def vendor_color(name: str) -> str:
    """The vendor's colour (a hex string), the same everywhere."""
    return VENDOR_COLORS.get(name) or _stable(name)
