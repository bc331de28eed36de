"""Readable names for what the tables key by: systems by their catalog name (`model.hardware`), agents by the name
analysts use, event types in words; and the units the app prints numbers in."""

from __future__ import annotations

import re
from functools import cache

from model.hardware import systems
from model.results.names import agent_name, with_vendor

KIND_ORDER = ("hyperscaler", "neocloud", "lab", "other")


def agent_label(agent: str) -> str:
    """The agent's display name (`model.results.names`, shared with the report and `compare`)."""
    return agent_name(agent)


@cache
def _catalog() -> dict[str, tuple[str, str]]:
    """{key: (name, status)}: other vendors' systems named with their vendor ("Google · TPU7x Ironwood"); NVIDIA's,
    the market's default, as the catalog names them."""
    return {k: (s.name if s.vendor == "NVIDIA" else with_vendor(s.name, s.vendor), s.status)
            for k, s in systems().items()}


def system_label(key: str) -> str:
    """The catalog's name of a system ("GB300 NVL72", "AWS · EC2 Trn2 UltraServer (64 Trainium2)"); the key itself
    if the catalog does not know it."""
    return _catalog()[key][0] if key in _catalog() else key


def system_short(key: str) -> str:
    """The catalog's name without its parenthesis ("HGX H100 (8-GPU)" -> "HGX H100"), for tight tables."""
    return re.sub(r"\s*\(.*?\)", "", system_label(key)).strip() or key


def system_status(key: str) -> str:
    """shipping, announced, dropped or projection (the catalog's status)."""
    return _catalog()[key][1] if key in _catalog() else ""


def readable(text: str) -> str:
    """Free text with the catalog keys it mentions replaced by the systems' names."""
    if not text:
        return text
    return _KEY_PATTERN().sub(lambda m: system_label(m.group(0)), text)


@cache
def _KEY_PATTERN() -> re.Pattern:  # noqa: N802 (a constant, built once)
    keys = sorted(_catalog(), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(map(re.escape, keys)) + r")\b")


def month_label(month: str) -> str:
    """"2025-03" as the app writes months (ISO, sortable, the tables' convention)."""
    return month[:7]


def compact(value: float, unit: str = "") -> str:
    """1.23 M, 45.6 k, 789: three significant digits with a thousands prefix, then the unit."""
    if value != value:  # NaN
        return "-"
    for scale, prefix in ((1e12, " T"), (1e9, " B"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}{(' ' + unit) if unit else ''}".replace("  ", " ")
    text = f"{value:.3g}"
    return f"{text} {unit}" if unit else text


def usd(value: float) -> str:
    """$23.1 B, $450 M."""
    return "$" + compact(value).replace(" ", "\u202f")


def whole(value: float) -> str:
    """4,608"""
    return f"{value:,.0f}"
