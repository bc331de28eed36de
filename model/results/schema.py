"""The result tables' columns and dtypes, and `conform`, which brings a table to them.

Dates: every `date` column is `DATE_DTYPE` (numpy datetime64[ns]), the first day of the month it describes
(one model step is one calendar month). That holds in the Parquet files `model.results` writes, in every frame it
reads, and in every frame the outcomes module returns. Text appears only at the edges: "YYYY-MM-DD" in CSV files
and "YYYY-MM" in JSON, printed tables and labels. `conform` accepts ISO strings too (what the market's frames carry
and what result folders written before this convention hold) and converts them.

The schema lists the columns the outcomes need (required) and the other DESIGN.md columns (optional: typed when
present). Columns named `<family prefix><system key>` get their family's dtype; any other column passes through
untouched, so a column added by a later issue needs no change here to be carried, only a line to be typed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

DATE_DTYPE = "datetime64[ns]"
TEXT, INT, FLOAT, DATE = "text", "int64", "float64", "date"
TABLE_NAMES = ("agents", "market", "events")


class SchemaError(ValueError):
    """A table does not fit its schema; the message names the column and what was expected (not the file: the
    reader, which knows it, adds it)."""


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # TEXT | INT | FLOAT | DATE
    required: bool
    meaning: str


@dataclass(frozen=True)
class Family:
    """Columns `<prefix><system key>`, one per system of the catalog."""

    prefix: str
    dtype: str
    meaning: str


@dataclass(frozen=True)
class TableSchema:
    name: str
    columns: tuple[Column, ...]
    families: tuple[Family, ...] = ()
    may_be_empty: bool = False  # a run without events has an empty events table

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.required)

    def dtype_of(self, column: str) -> str | None:
        for c in self.columns:
            if c.name == column:
                return c.dtype
        for f in self.families:
            if column.startswith(f.prefix):
                return f.dtype
        return None


AGENTS = TableSchema("agents", (
    Column("date", DATE, True, "first day of the month"),
    Column("agent", TEXT, True, "agent name"),
    Column("kind", TEXT, True, "hyperscaler | neocloud | lab | other (an aggregate: the rest of the market)"),
    Column("gpus_online", INT, False, "GPUs online, all systems"),
    Column("h100e", FLOAT, True, "H100-equivalents online (989 dense BF16 TFLOP/s each)"),
    Column("contracted_h100e", FLOAT, False, "H100e held under active contracts (delivered by the providers)"),
    Column("reachable_h100e", FLOAT, False, "h100e + contracted_h100e"),
    Column("power_mw_online", FLOAT, False, "facility power online (MW)"),
    Column("power_mw_used", FLOAT, False, "facility power drawn by GPUs online (MW)"),
    Column("largest_cluster_gpus", INT, True, "GPUs of the agent's largest training cluster"),
    Column("largest_cluster_h100e", FLOAT, False, "H100e of that cluster"),
    Column("largest_cluster_mw", FLOAT, False, "facility MW of that cluster"),
    Column("largest_cluster_systems", TEXT, False, "systems in that cluster, '+'-joined, most GPUs first"),
    Column("capex_usd_cumulative", FLOAT, False, "capex spent since the start (USD)"),
    Column("reference_run_cluster_gpus", FLOAT, False, "cluster that trains the reference run fastest (empty: none)"),
    Column("frontier_run_days", FLOAT, True, "days to train the reference run on it (empty: no cluster fits)"),
), families=(Family("gpus_online_", INT, "GPUs online of one system"),))

MARKET = TableSchema("market", (
    Column("date", DATE, True, "first day of the month"),
    Column("nvidia_revenue_usd", FLOAT, True, "NVIDIA's revenue in that month (USD)"),
), families=(
    Family("units_shipped_", INT, "systems (not GPUs) shipped that month"),
    Family("backlog_units_", INT, "systems ordered and not yet shipped at the month's end"),
    Family("rental_usd_per_gpu_hour_", FLOAT, "rental price (empty while the system is not shipping)"),
))

EVENTS = TableSchema("events", (
    Column("date", DATE, True, "first day of the month of the event"),
    Column("agent", TEXT, True, "who"),
    Column("event", TEXT, True, "first_delivery | first_online | first_cluster_at_scale | ..."),
    Column("system", TEXT, True, "system key ('' when none)"),
    Column("gpus", INT, True, "GPUs involved (0 when none)"),
    Column("detail", TEXT, False, "free text"),
), may_be_empty=True)

SCHEMAS: dict[str, TableSchema] = {s.name: s for s in (AGENTS, MARKET, EVENTS)}


def to_dates(values: pd.Series, column: str = "date") -> pd.Series:
    """Dates as `DATE_DTYPE`, from timestamps or ISO strings ("YYYY-MM-DD"); each must be a month's first day."""
    if pd.api.types.is_datetime64_any_dtype(values):
        dates = values.astype(DATE_DTYPE)
    else:
        try:
            dates = pd.to_datetime(values.astype(str).str[:10], format="%Y-%m-%d").astype(DATE_DTYPE)
        except (ValueError, TypeError):
            bad = next((v for v in values if not _is_iso_date(v)), values.iloc[0])
            raise SchemaError(f"column {column!r}: expected dates YYYY-MM-DD, got {_shown(bad)}") from None
    if dates.isna().any():
        raise SchemaError(f"column {column!r}: expected a date in every row, got an empty value")
    if (dates.dt.day != 1).any():
        bad = dates[dates.dt.day != 1].iloc[0]
        raise SchemaError(f"column {column!r}: expected the first day of a month, got {bad:%Y-%m-%d}")
    return dates


def _shown(value) -> str:
    """A value as the message shows it: Python's repr of the plain value (1.5, 'abc'), not numpy's."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _is_iso_date(value) -> bool:
    try:
        pd.to_datetime(str(value)[:10], format="%Y-%m-%d")
    except (ValueError, TypeError):
        return False
    return True


def _numbers(values: pd.Series, column: str, dtype: str) -> pd.Series:
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() & values.notna()
    if bad.any():
        raise SchemaError(f"column {column!r}: expected numbers, got {_shown(values[bad].iloc[0])}")
    if dtype == INT:
        if numeric.isna().any():
            raise SchemaError(f"column {column!r}: expected a whole number in every row, got an empty value")
        as_float = numeric.to_numpy(dtype=float)
        fractional = ~np.isfinite(as_float) | (as_float != np.round(as_float))
        if fractional.any():
            raise SchemaError(f"column {column!r}: expected whole numbers, got {_shown(values[fractional].iloc[0])}")
        return numeric.astype(INT)
    return numeric.astype(FLOAT)


def _text(values: pd.Series) -> pd.Series:
    return values.where(values.notna(), "").astype(str)


def conform(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """The table `name` ("agents", "market" or "events") with the schema's dtypes; raises `SchemaError` naming the
    first missing column or the first value that does not fit. Columns the schema does not know are kept as they
    are; the order of columns and rows is kept."""
    schema = SCHEMAS[name]
    missing = [c for c in schema.required if c not in df.columns]
    if missing:
        raise SchemaError(f"missing column {missing[0]!r} (the {name} table needs {', '.join(schema.required)})")
    out = {}
    for column in df.columns:
        dtype = schema.dtype_of(column)
        values = df[column]
        if dtype == DATE:
            out[column] = to_dates(values, column)
        elif dtype in (INT, FLOAT):
            out[column] = values if values.dtype == dtype else _numbers(values, column, dtype)
        elif dtype == TEXT:
            out[column] = _text(values)
        else:
            out[column] = values
    return pd.DataFrame(out, index=df.index)
