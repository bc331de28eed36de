"""Read result folders and sweep folders into tidy frames with `label` and `run` columns.

Every figure reads through here, so the folder formats (DESIGN.md "Result folder", common sweep format) are parsed
in one place and bad input becomes one `InputError` line naming the path and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from model.errors import InputError

RUN_META_COLUMNS = ("run", "seed", "status", "error", "wall_time_s")
REQUIRED_COLUMNS = {
    "agents": ("date", "agent", "kind", "h100e", "largest_cluster_gpus", "frontier_run_days"),
    "market": ("date", "nvidia_revenue_usd"),
    "events": ("date", "agent", "event", "system", "gpus"),
}
TABLES = ("agents", "market", "events")


@dataclass(frozen=True)
class Source:
    """One folder given on the command line."""

    label: str
    path: Path
    kind: str  # "run" | "sweep"
    scenario_file: str
    n_runs: int
    parameters: tuple[str, ...] = ()  # sampled parameter names (sweeps only)
    scenario_params: dict = field(default_factory=dict, compare=False)  # resolved scenario of a (first) run

    @property
    def is_sweep(self) -> bool:
        return self.kind == "sweep"


@dataclass(frozen=True)
class ResultSet:
    """All inputs, stacked: each frame has `label` and `run` first; `date` is a Timestamp."""

    sources: tuple[Source, ...]
    agents: pd.DataFrame
    market: pd.DataFrame
    events: pd.DataFrame
    runs: pd.DataFrame  # label, run, seed, status, then sampled parameters (NaN where a source lacks one)

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.sources]

    def source(self, label: str) -> Source:
        return next(s for s in self.sources if s.label == label)


def folder_kind(path: Path) -> str:
    """'run', 'sweep', or raise InputError with one line saying what a folder must hold."""
    if not path.exists():
        raise InputError(f"{path}: no such file or folder (expected a result folder or a sweep folder)")
    if (path / "sweep.json").is_file() and (path / "runs.parquet").is_file():
        return "sweep"
    if (path / "manifest.json").is_file() and (path / "agents.parquet").is_file():
        return "run"
    raise InputError(f"{path}: not a result folder (manifest.json + agents.parquet) "
                     f"or a sweep folder (sweep.json + runs.parquet)")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable JSON ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _read_table(path: Path, table: str) -> pd.DataFrame:
    if not path.is_file():
        if table == "events":  # a run may have no events table only if it has no events
            return pd.DataFrame(columns=list(REQUIRED_COLUMNS["events"]) + ["detail"])
        raise InputError(f"{path}: missing (expected the {table} table of a result folder)")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is bad input
        raise InputError(f"{path}: unreadable Parquet ({exc.__class__.__name__})") from None
    missing = [c for c in REQUIRED_COLUMNS.get(table, ()) if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column {missing[0]!r} (expected the DESIGN.md columns of {table})")
    return df


def _tidy(df: pd.DataFrame, label: str, run: int | None, drop: Sequence[str] = ()) -> pd.DataFrame:
    df = df.drop(columns=[c for c in drop if c in df.columns])
    if run is not None:
        df = df.assign(run=run)
    df = df.assign(label=label, date=pd.to_datetime(df["date"]).astype("datetime64[ns]"))
    front = ["label", "run"]
    return df[front + [c for c in df.columns if c not in front]]


def _read_run(path: Path, label: str) -> tuple[dict[str, pd.DataFrame], dict]:
    manifest = _read_json(path / "manifest.json")
    tables = {t: _tidy(_read_table(path / f"{t}.parquet", t), label, 0) for t in TABLES}
    return tables, manifest


def _read_sweep(path: Path, label: str) -> tuple[dict[str, pd.DataFrame], dict, pd.DataFrame, tuple[str, ...]]:
    meta = _read_json(path / "sweep.json")
    runs = pd.read_parquet(path / "runs.parquet")
    for col in ("run", "seed", "status"):
        if col not in runs.columns:
            raise InputError(f"{path / 'runs.parquet'}: missing column {col!r} (expected run, seed, status, ...)")
    params = tuple(c for c in runs.columns if c not in RUN_META_COLUMNS)
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        raise InputError(f"{path / 'runs.parquet'}: no run with status 'ok' ({len(runs)} runs listed)")
    tables: dict[str, pd.DataFrame] = {}
    if all((path / f"{t}.parquet").is_file() for t in TABLES):
        for t in TABLES:
            df = _read_table(path / f"{t}.parquet", t)
            if "run" not in df.columns:
                raise InputError(f"{path / (t + '.parquet')}: missing column 'run' (expected the combined table)")
            tables[t] = _tidy(df, label, None, drop=params)
    else:  # combined tables not written (yet): read the run folders
        parts: dict[str, list[pd.DataFrame]] = {t: [] for t in TABLES}
        for run in ok["run"].astype(int):
            run_dir = path / "runs" / f"run_{run:04d}"
            folder_kind(run_dir)
            for t in TABLES:
                parts[t].append(_tidy(_read_table(run_dir / f"{t}.parquet", t), label, run))
        tables = {t: pd.concat(p, ignore_index=True) for t, p in parts.items()}
    first = path / "runs" / f"run_{int(ok['run'].iloc[0]):04d}" / "manifest.json"
    manifest = _read_json(first) if first.is_file() else {}
    meta = {**meta, "parameters_resolved": manifest.get("parameters", {})}
    return tables, meta, ok, params


def _labels(paths: Sequence[Path], scenario_names: Sequence[str]) -> list[str]:
    """Folder names; where two collide, the scenario name, then the parent folder, keeps them apart."""
    labels = [p.resolve().name or str(p) for p in paths]
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


def load(paths: Sequence[str | Path]) -> ResultSet:
    """Read each folder (result or sweep) and stack their tables; raises InputError on anything else."""
    if not paths:
        raise InputError("no RESULTS given (expected one or more result folders or sweep folders)")
    folders = [Path(p) for p in paths]
    kinds = [folder_kind(p) for p in folders]
    metas = [_read_json(p / ("sweep.json" if k == "sweep" else "manifest.json")) for p, k in zip(folders, kinds,
                                                                                               strict=True)]
    scenario_files = [str(m.get("scenario_file", "")) for m in metas]
    labels = _labels(folders, [Path(f).stem if f else "" for f in scenario_files])
    sources, frames, run_rows = [], {t: [] for t in TABLES}, []
    for path, kind, label, scen in zip(folders, kinds, labels, scenario_files, strict=True):
        if kind == "run":
            tables, manifest = _read_run(path, label)
            params: tuple[str, ...] = ()
            run_rows.append(pd.DataFrame({"label": [label], "run": [0], "seed": [manifest.get("seed")],
                                          "status": ["ok"]}))
            resolved = manifest.get("parameters", {})
            n_runs = 1
        else:
            tables, meta, ok, params = _read_sweep(path, label)
            run_rows.append(ok.drop(columns=[c for c in ("error", "wall_time_s") if c in ok.columns])
                            .assign(label=label))
            resolved = meta["parameters_resolved"]
            n_runs = int(tables["agents"]["run"].nunique())
        for t in TABLES:
            frames[t].append(tables[t])
        sources.append(Source(label=label, path=path, kind=kind, scenario_file=scen, n_runs=n_runs,
                              parameters=params, scenario_params=resolved if isinstance(resolved, dict) else {}))
    runs = pd.concat(run_rows, ignore_index=True)
    runs = runs[["label"] + [c for c in runs.columns if c != "label"]]
    stacked = {t: pd.concat(f, ignore_index=True) for t, f in frames.items()}
    return ResultSet(tuple(sources), stacked["agents"], stacked["market"], stacked["events"], runs)
