"""Reading result folders and sweep folders: one reader, one `Source` per folder, a `ResultSet` for several.

Every table comes back conformed to `model.results.schema` (dates as timestamps, numbers as numbers) with a `run`
column first (0 for a result folder; a sweep's run numbers otherwise). Anything that is not a whole, finished
folder is bad input: an `InputError` whose one line names the file and what was expected (the CLI exits 2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import pandas as pd

from model.errors import InputError
from model.results.folders import (
    MANIFEST,
    RUN_META_COLUMNS,
    RUNS_DIR,
    RUNS_TABLE,
    SWEEP_JSON,
    run_folder_name,
    table_file,
)
from model.results.schema import SCHEMAS, TABLE_NAMES, SchemaError, conform

FolderKind = Literal["run", "sweep"]


@dataclass(frozen=True)
class Source:
    """One result folder or sweep folder, read whole.

    `agents`, `market`, `events`: the schema's columns with `run` first (a sweep's sampled parameters are not
    repeated there: they are in `runs`). `runs`: one row per ok run (run, seed, status, then the sampled
    parameters). `manifest`: manifest.json of a result folder, sweep.json of a sweep. `scenario_params`: the
    resolved scenario parameters of the run (of the first ok run of a sweep).
    """

    path: Path
    kind: FolderKind
    label: str
    agents: pd.DataFrame = field(repr=False)
    market: pd.DataFrame = field(repr=False)
    events: pd.DataFrame = field(repr=False)
    runs: pd.DataFrame = field(repr=False)
    parameters: tuple[str, ...] = ()
    manifest: dict = field(default_factory=dict, repr=False, compare=False)
    scenario_params: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def is_sweep(self) -> bool:
        return self.kind == "sweep"

    @property
    def scenario_file(self) -> str:
        return str(self.manifest.get("scenario_file", ""))


@dataclass(frozen=True)
class ResultSet:
    """Several sources stacked: each frame has `label` and `run` first."""

    sources: tuple[Source, ...]
    agents: pd.DataFrame = field(repr=False)
    market: pd.DataFrame = field(repr=False)
    events: pd.DataFrame = field(repr=False)
    runs: pd.DataFrame = field(repr=False)  # label, run, seed, status, then sampled parameters (NaN where absent)

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.sources]

    def source(self, label: str) -> Source:
        return next(s for s in self.sources if s.label == label)


def folder_kind(path: Path | str) -> FolderKind:
    """'run' or 'sweep', or an `InputError` saying what a folder must hold."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder (expected a result folder or a sweep folder)")
    if (path / SWEEP_JSON).is_file():
        return "sweep"
    if (path / MANIFEST).is_file():
        return "run"
    raise InputError(f"{path}: not a result folder (manifest.json + agents.parquet) nor a sweep folder "
                     f"(sweep.json + runs.parquet)")


def read_json(path: Path) -> dict:
    """A JSON object from a file; an `InputError` naming the file if it is missing, damaged or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: missing (expected a JSON file)") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable JSON ({exc.__class__.__name__}: {_first_line(exc)})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def _read_parquet(path: Path, what: str) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(f"{path}: missing (expected {what})")
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is bad input (pyarrow raises several kinds)
        raise InputError(f"{path}: unreadable Parquet ({exc.__class__.__name__}: {_first_line(exc)}); "
                         f"expected {what}") from None


def read_table(folder: Path | str, name: str) -> pd.DataFrame:
    """One table of a result folder (or a sweep's combined table), conformed to the schema."""
    path = table_file(folder, name)
    df = _read_parquet(path, f"the {name} table of a result folder")
    try:
        df = conform(name, df)
    except SchemaError as exc:
        raise InputError(f"{path}: {exc}") from None
    if df.empty and not SCHEMAS[name].may_be_empty:
        raise InputError(f"{path}: no rows (expected one row per {'agent and ' if name == 'agents' else ''}month)")
    return df


def _with_run(df: pd.DataFrame, run: int) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"run": pd.Series(run, index=df.index, dtype="int64")}), df], axis=1)


def read_run_folder(path: Path | str, label: str | None = None) -> Source:
    """A result folder (`airace run`)."""
    path = Path(path)
    manifest = read_json(path / MANIFEST)
    tables = {name: _with_run(read_table(path, name), 0) for name in TABLE_NAMES}
    runs = pd.DataFrame({"run": [0], "seed": [manifest.get("seed")], "status": ["ok"]})
    params = manifest.get("parameters")
    return Source(path, "run", label or _default_label(path), tables["agents"], tables["market"], tables["events"],
                  runs, (), manifest, params if isinstance(params, dict) else {})


def read_sweep_folder(path: Path | str, label: str | None = None) -> Source:
    """A finished sweep folder (`airace sweep`): its combined tables, or its ok runs' folders where the combined
    tables are absent."""
    path = Path(path)
    meta = read_json(path / SWEEP_JSON)
    if not meta.get("finished"):
        raise InputError(f"{path / SWEEP_JSON}: finished is empty, the sweep did not finish (its combined tables "
                         "are missing or stale); finish it with `airace sweep ... --resume`")
    runs = _read_parquet(path / RUNS_TABLE, "the runs table of a sweep folder (run, seed, status, ...)")
    for col in ("run", "seed", "status"):
        if col not in runs.columns:
            raise InputError(f"{path / RUNS_TABLE}: missing column {col!r} (expected run, seed, status, ...)")
    parameters = tuple(c for c in runs.columns if c not in RUN_META_COLUMNS)
    ok = runs[runs["status"] == "ok"].drop(columns=[c for c in ("error", "wall_time_s") if c in runs.columns])
    ok = ok.astype({"run": "int64"}).reset_index(drop=True)
    if ok.empty:
        raise InputError(f"{path / RUNS_TABLE}: no run with status 'ok' ({len(runs)} runs listed)")
    if all(table_file(path, name).is_file() for name in TABLE_NAMES):
        tables = {}
        for name in TABLE_NAMES:
            df = read_table(path, name)
            if "run" not in df.columns:
                raise InputError(f"{table_file(path, name)}: missing column 'run' (expected a sweep's combined "
                                 "table)")
            tables[name] = df.drop(columns=[p for p in parameters if p in df.columns]).astype({"run": "int64"})
    else:
        parts: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLE_NAMES}
        for run in ok["run"]:
            folder = path / RUNS_DIR / run_folder_name(run)
            for name in TABLE_NAMES:
                parts[name].append(_with_run(read_table(folder, name), int(run)))
        tables = {name: pd.concat(p, ignore_index=True) for name, p in parts.items()}
    first = path / RUNS_DIR / run_folder_name(int(ok["run"].iloc[0])) / MANIFEST
    params = read_json(first).get("parameters") if first.is_file() else None
    return Source(path, "sweep", label or _default_label(path), tables["agents"], tables["market"],
                  tables["events"], ok, parameters, meta, params if isinstance(params, dict) else {})


def read_folder(path: Path | str, label: str | None = None) -> Source:
    """A result folder or a sweep folder, whichever `path` is."""
    return (read_sweep_folder if folder_kind(path) == "sweep" else read_run_folder)(path, label)


def _default_label(path: Path) -> str:
    return path.resolve().name or str(path)


def distinct_labels(paths: Sequence[Path], scenario_names: Sequence[str]) -> list[str]:
    """Folder names; where two collide, the scenario name, then the parent folder, keeps them apart."""
    labels = [_default_label(p) for p in paths]
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1 and scenario_names[i]:
            labels[i] = f"{lab} ({scenario_names[i]})"
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1:
            labels[i] = f"{paths[i].resolve().parent.name}/{lab}"
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1:
            labels[i] = f"{lab} #{i + 1}"
    return labels


def _labelled(df: pd.DataFrame, label: str) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"label": pd.Series(label, index=df.index)}), df], axis=1)


def read_folders(paths: Sequence[Path | str]) -> ResultSet:
    """Read each folder (result or sweep) and stack their tables with a `label` column (folder names, made
    distinct); raises `InputError` for anything that is not a whole folder."""
    if not paths:
        raise InputError("no RESULTS given (expected one or more result folders or sweep folders)")
    folders = [Path(p) for p in paths]
    sources = [read_folder(p) for p in folders]
    labels = distinct_labels(folders, [Path(s.scenario_file).stem if s.scenario_file else "" for s in sources])
    sources = [s if s.label == lab else _relabel(s, lab) for s, lab in zip(sources, labels, strict=True)]
    stacked = {name: pd.concat([_labelled(getattr(s, name), s.label) for s in sources], ignore_index=True)
               for name in (*TABLE_NAMES, "runs")}
    return ResultSet(tuple(sources), stacked["agents"], stacked["market"], stacked["events"], stacked["runs"])


def _relabel(source: Source, label: str) -> Source:
    return replace(source, label=label)
