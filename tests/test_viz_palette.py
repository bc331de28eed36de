"""The shared palette: every agent of the shipped scenarios has its own colour, any two clearly different, each
legible on the app's light and dark backgrounds; systems keep catalog order."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from model.hardware import SYSTEM_KEYS
from model.palette import AGENT_COLORS, NEGATIVE_COLOR, POSITIVE_COLOR, SYSTEM_COLORS, agent_color, system_color
from model.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
MIN_DELTA_E = 25.0  # CIE76: 2.3 is a just noticeable difference; 25 reads as a different colour side by side
LIGHT_BG, DARK_BG = "#ffffff", "#121212"  # Vuetify's light and dark backgrounds


def _linear(hex_color: str) -> np.ndarray:
    rgb = np.array(to_rgb(hex_color))
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def lab(hex_color: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ _linear(hex_color) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours."""
    la, lb = (float(_linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_every_agent_of_the_shipped_scenarios_has_its_own_colour():
    agents = {name for path in SCENARIOS.glob("*.toml") for _, name in load_scenario(path).named_agents()}
    assert len(agents) >= 16 and agents <= set(AGENT_COLORS)
    assert len(set(AGENT_COLORS.values())) == len(AGENT_COLORS)


def test_any_two_agent_colours_differ_clearly():
    worst = min((float(np.linalg.norm(lab(AGENT_COLORS[a]) - lab(AGENT_COLORS[b]))), a, b)
                for a, b in itertools.combinations(AGENT_COLORS, 2))
    assert worst[0] >= MIN_DELTA_E, f"{worst[1]} and {worst[2]} are too close (delta E {worst[0]:.1f})"
    hyperscalers = ["microsoft", "aws", "google", "meta", "oracle"]  # once five blues
    hues = {round(float(np.degrees(np.arctan2(*lab(AGENT_COLORS[a])[[2, 1]]))) // 30) for a in hyperscalers}
    assert len(hues) == len(hyperscalers)


@pytest.mark.parametrize("background, minimum", [(LIGHT_BG, 2.4), (DARK_BG, 2.8)])
def test_agent_colours_are_legible_on_light_and_dark_backgrounds(background, minimum):
    faint = {a: round(contrast(c, background), 2) for a, c in AGENT_COLORS.items() if contrast(c, background) < minimum}
    assert faint == {}


def test_systems_in_catalog_order_and_stable_fallbacks():
    assert list(SYSTEM_COLORS) == list(SYSTEM_KEYS)
    assert system_color("gb300_nvl72") == SYSTEM_COLORS["gb300_nvl72"] and agent_color("xai") == AGENT_COLORS["xai"]
    assert agent_color("someone_new") == agent_color("someone_new") and agent_color("someone_new").startswith("#")
    assert np.linalg.norm(lab(POSITIVE_COLOR) - lab(NEGATIVE_COLOR)) >= MIN_DELTA_E
