"""Month arithmetic: one model step is one calendar month counted from the scenario's `start` ("YYYY-MM")."""

from __future__ import annotations


def month_index(ym: str, start: str) -> int:
    """Months from `start` to `ym` (both "YYYY-MM" or "YYYY-MM-DD")."""
    y, m = map(int, ym.split("-")[:2])
    y0, m0 = map(int, start.split("-")[:2])
    return (y - y0) * 12 + (m - m0)


def date_of(start: str, t: int) -> str:
    """First day of month `t` after `start`, as "YYYY-MM-01"."""
    y0, m0 = map(int, start.split("-")[:2])
    m = m0 - 1 + t
    return f"{y0 + m // 12:04d}-{m % 12 + 1:02d}-01"


def year_of(start: str, t: int) -> int:
    y0, m0 = map(int, start.split("-")[:2])
    return y0 + (m0 - 1 + t) // 12
