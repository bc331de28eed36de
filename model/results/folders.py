"""Writing result folders and sweep files atomically, and the names of what a result or sweep folder holds.

A result folder (`airace run`, and each run of a sweep) holds `agents.parquet`, `market.parquet`,
`events.parquet` (columns and dtypes: `model.results.schema`) and `manifest.json`. A sweep folder holds `sweep.json`,
`runs.parquet` (one row per run: run, seed, status, error, wall_time_s, then the sampled parameters), one result
folder per run under `runs/run_NNNN/`, and the combined tables (the ok runs' tables with `run` and the sampled
parameters as first columns).

Readers see either the old folder or file, the whole new one, or nothing: everything is written into a temporary
sibling and renamed into place, with SIGINT/SIGTERM held over the renames.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from model.interrupts import signals_held
from model.results.schema import TABLE_NAMES, conform

MANIFEST = "manifest.json"
SWEEP_JSON = "sweep.json"
RUNS_TABLE = "runs.parquet"
RUNS_DIR = "runs"
RUN_META_COLUMNS = ("run", "seed", "status", "error", "wall_time_s")


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import: os.umask can only be read by setting it


def run_folder_name(run: int) -> str:
    """`run_NNNN`: the folder of run `run` under a sweep's `runs/`."""
    return f"run_{run:04d}"


def table_file(folder: Path | str, name: str) -> Path:
    return Path(folder) / f"{name}.parquet"


def write_file_atomically(path: Path | str, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, then rename it over `path` (signals held)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        tmp.chmod(0o666 & ~_UMASK)  # mkstemp makes it private; an output file is an ordinary file
        with signals_held():
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_json(path: Path | str, data: dict) -> Path:
    return write_file_atomically(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2, default=str) + "\n"))


def write_parquet(path: Path | str, df: pd.DataFrame) -> Path:
    return write_file_atomically(path, lambda tmp: df.to_parquet(tmp, index=False))


def write_csv(path: Path | str, df: pd.DataFrame) -> Path:
    """A CSV with dates as "YYYY-MM-DD" (the text form of the one date convention)."""
    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[col]):
            out[col] = out[col].dt.strftime("%Y-%m-%d")
    return write_file_atomically(path, lambda tmp: out.to_csv(tmp, index=False))


def write_result_folder(out_dir: Path | str, tables: dict[str, pd.DataFrame], manifest: dict) -> Path:
    """Write a result folder: the agents, market and events tables (conformed to the schema, so dates are
    timestamps on disk) and `manifest.json`.

    Tables go into a hidden temporary sibling folder that is renamed into place. An exception or interrupt
    (Ctrl-C; SIGTERM under `model.interrupts.terminate_as_interrupt`) while writing removes the temporary folder;
    the final swap (old folder aside, new folder in, old folder removed) runs with SIGINT/SIGTERM held, and a
    failure during it puts the old folder back.
    """
    unknown = sorted(set(tables) - set(TABLE_NAMES))
    if unknown or set(tables) != set(TABLE_NAMES):
        raise ValueError(f"a result folder holds exactly the tables {', '.join(TABLE_NAMES)}; got {sorted(tables)}")
    conformed = {name: conform(name, tables[name]) for name in TABLE_NAMES}
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    old: Path | None = None
    try:
        for name, df in conformed.items():
            df.to_parquet(table_file(tmp, name), index=False)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str))
        tmp.chmod(0o777 & ~_UMASK)  # mkdtemp makes it private; a result folder is an ordinary folder
        with signals_held():
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
                os.replace(out, old)
            os.replace(tmp, out)
            if old is not None:
                shutil.rmtree(old)
    except BaseException:
        with signals_held():
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None and old.exists():
                if not out.exists():
                    os.replace(old, out)  # put the previous result back
                else:
                    shutil.rmtree(old, ignore_errors=True)
        raise
    return out
