"""`perf train|serve --batch FILE.csv`: one job per CSV row, each answer printed as soon as it is computed.

The file is UTF-8, with or without the byte-order mark spreadsheets write. A file that cannot be used at all (missing,
a folder, unreadable, empty, only a header, no header naming the required columns) is an `InputError` (exit 2)
before anything is printed. After that each row gives one JSON line: its inputs and its result, or its inputs and
`error` (with `row`, the data row counted from 1, and `line`, the line of the file) when the row itself is bad;
the other rows go on. JSON is strict: a number that is not finite is `null`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from model.errors import InputError

MAX_JOB_GPUS = 1 << 24
"""The most GPUs one job may name: 16,777,216, over thirty times the largest single fabric of the scenarios
(524,288 GPUs, a three-tier fat tree of 128-port switches) and more than every data-centre GPU shipped to date."""


@dataclass(frozen=True)
class Row:
    """One data row: its number (from 1), its line in the file, and its cells by column name."""

    number: int
    line: int
    cells: dict[str, str]


def whole_number(text: str | None, name: str, low: int = 1, high: int | None = None) -> int:
    """A whole number from a cell or flag ("4608" or "4.608e3"), within [low, high]; InputError otherwise."""
    text = (text or "").strip()
    bound = f" between {low:,} and {high:,}" if high is not None else f" >= {low:,}"
    expected = f"{name}: expected a whole number{bound}, got {text!r}"
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise InputError(expected) from None
        if not math.isfinite(number) or number != int(number):
            raise InputError(expected) from None
        value = int(number)
    if value < low or (high is not None and value > high):
        raise InputError(expected)
    return value


def positive_number(text: str | None, name: str) -> float:
    """A finite number > 0 from a cell; InputError otherwise."""
    text = (text or "").strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{name}: expected a positive finite number, got {text!r}")
    return value


def read_rows(path: str | Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Iterator[Row]:
    """The data rows of a CSV file, after checking the file can be used at all (InputError naming the file
    otherwise; raised on the first `next`, before any row is handed out)."""
    path = Path(path)
    expected = f"expected a CSV file with a header line naming {', '.join(required)}"
    if not path.exists():
        raise InputError(f"{path}: no such file ({expected})")
    if path.is_dir():
        raise InputError(f"{path}: is a folder ({expected})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc}); {expected}") from None
    # Undecodable bytes are kept as surrogates, so that a bad byte spoils its own row only.
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    if not text.strip():
        raise InputError(f"{path}: empty ({expected}, then one row per job)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [cell.strip().lower() for cell in next(reader)]
    except csv.Error as exc:
        raise InputError(f"{path}: line 1: not a CSV header ({exc}); {expected}") from None
    missing = [c for c in required if c not in header]
    if missing or any(_undecodable(c) for c in header):
        raise InputError(f"{path}: line 1: missing column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing) or '(not UTF-8 text)'}; {expected}"
                         + (f" (optional: {', '.join(optional)})" if optional else ""))
    return _rows(path, reader, header)


def _rows(path: Path, reader, header: list[str]) -> Iterator[Row]:
    number = 0
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a NUL byte or an unclosed quote: this row is bad, the file goes on
            number += 1
            yield Row(number, line, {"__error__": f"not CSV ({exc})"})
            continue
        if not any(cell.strip() for cell in cells):
            continue  # blank line
        number += 1
        yield Row(number, line, {name: cells[i] if i < len(cells) else "" for i, name in enumerate(header)})
    if number == 0:
        raise InputError(f"{path}: only a header, no rows (expected one row per job after the header)")


def _undecodable(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def first_problem(row: Row, columns: tuple[str, ...]) -> str | None:
    """What makes a row unreadable before any value is parsed (not UTF-8 text, not CSV), or None."""
    if "__error__" in row.cells:
        return row.cells["__error__"]
    bad = [c for c in columns if _undecodable(row.cells.get(c, ""))]
    return f"{', '.join(bad)}: not UTF-8 text" if bad else None


def evaluate_rows(rows: Iterator[Row], columns: tuple[str, ...], evaluate: Callable[[dict[str, str]], dict],
                  emit: Callable[[dict], None]) -> int:
    """Evaluate each row and `emit` its answer at once; return how many rows failed (bad input in the row).
    Any exception a row raises is that row's error: one bad row never loses the batch."""
    failed = 0
    for row in rows:
        shown = {c: _printable(row.cells.get(c, "")) for c in columns if c in row.cells}
        problem = first_problem(row, columns)
        try:
            if problem is not None:
                raise InputError(problem)
            result = evaluate(row.cells)
        except Exception as exc:  # noqa: BLE001 - batch mode reports each row's problem and goes on
            failed += 1
            message = " ".join(str(exc).split()) or type(exc).__name__
            emit({"row": row.number, "line": row.line, **shown, "feasible": False,
                  "error": f"row {row.number} (line {row.line}): {message}"})
            continue
        emit({"row": row.number, "line": row.line, **shown, **result})
    return failed


def _printable(text: str) -> str:
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace").strip()
