"""Writing result folders and sweep files atomically, and the names of what a result or sweep folder holds.

A result folder (`airace run`, and each run of a sweep) holds `agents.parquet`, `market.parquet`,
`events.parquet` (columns and dtypes: `model.results.schema`) and `manifest.json`. A sweep folder holds `sweep.json`,
`runs.parquet` (one row per run: run, seed, status, error, wall_time_s, then the sampled parameters), one result
folder per run under `runs/run_NNNN/`, and the combined tables (the ok runs' tables with `run` and the sampled
parameters as first columns).

Readers see either the old folder or file, the whole new one, or nothing: everything is written into a temporary
sibling and renamed into place, with SIGINT/SIGTERM held over the renames. Temporary siblings carry the writer's
process id (`.NAME.tmp-PID-XXXX`), so the next writer removes those a killed process left behind.

An output folder (`--out` of run, sweep and report) is written only where that loses nothing of the user's:
`check_output_folder` accepts a folder that is absent, empty, or an airace folder of the same kind recognised by
its manifest (`manifest.json` of a result folder, `sweep.json` of a sweep folder, `report.json` of a report
folder); anything else is an `InputError` naming the folder and why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

import pandas as pd

from model.errors import InputError, dumps_strict
from model.interrupts import signals_held
from model.results.schema import TABLE_NAMES, conform

MANIFEST = "manifest.json"
SWEEP_JSON = "sweep.json"
RUNS_TABLE = "runs.parquet"
RUNS_DIR = "runs"
REPORT_JSON = "report.json"
RUN_META_COLUMNS = ("run", "seed", "status", "error", "wall_time_s")

OutputKind = Literal["run", "sweep", "report"]
MANIFEST_OF: dict[str, str] = {"run": MANIFEST, "sweep": SWEEP_JSON, "report": REPORT_JSON}
_KEYS_OF: dict[str, tuple[str, ...]] = {  # keys every manifest of the kind has (a stray manifest.json has not)
    "run": ("parameters", "seed", "package_version"),
    "sweep": ("runs", "base_seed", "design", "package_version"),
    "report": ("airace", "inputs", "package_version"),
}
KIND_TEXT = {"run": "result folder", "sweep": "sweep folder", "report": "report folder"}


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import: os.umask can only be read by setting it


# -- output folders ---------------------------------------------------------------------------------------------
def airace_folder_kind(path: Path | str) -> OutputKind | None:
    """The kind of airace folder `path` is, recognised by its manifest (a JSON object with the kind's keys), or
    None."""
    path = Path(path)
    for kind, name in MANIFEST_OF.items():
        try:
            data = json.loads((path / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and all(key in data for key in _KEYS_OF[kind]):
            return kind  # type: ignore[return-value]
    return None


def check_output_folder(out: Path | str, kind: OutputKind, keep: Iterable[Path | str] = (),
                        option: str = "--out") -> None:
    """Refuse (InputError) to write `kind` into `out` unless it is absent, an empty folder, or an airace folder of
    the same kind (which is then replaced whole). `keep`: inputs that must survive (a scenario file, the folders a
    report reads): `out` may not be one of them nor hold one. A file where the folder should be, or a folder that
    cannot be listed, is the environment's problem: an OSError (exit 1)."""
    out = Path(out)
    resolved = out.resolve()
    for item in keep:
        item = Path(item).resolve()
        if item == resolved or resolved in item.parents:
            raise InputError(f"{option} {out}: holds {item}, an input of this command; writing the {KIND_TEXT[kind]} "
                             "there would replace it; choose another folder")
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise NotADirectoryError(20, "expected a folder, found a file", str(out))
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise InputError(f"{option} {out}: the current folder (or one holding it); choose a folder for the "
                         f"{KIND_TEXT[kind]}, e.g. results/NAME")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return
    found = airace_folder_kind(out)
    if found == kind:
        return
    if found is not None:
        raise InputError(f"{option} {out}: is an airace {KIND_TEXT[found]}, not a {KIND_TEXT[kind]}; writing here "
                         f"would delete it; choose another folder")
    shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
    raise InputError(f"{option} {out}: folder is not empty ({len(entries)} entries: {shown}) and not an airace "
                     f"{KIND_TEXT[kind]} (no {MANIFEST_OF[kind]}); its files would be deleted; choose a new or "
                     "empty folder")


def check_output_file(out: Path | str, header: str, what: str, keep: Iterable[Path | str] = (),
                      option: str = "--out") -> None:
    """Refuse (InputError) to write a file at `out` unless it is absent or an earlier file of the same kind (its
    first line is `header`), and unless it is none of the inputs `keep` nor inside one. A folder where the file
    should be is the environment's problem: an OSError (exit 1)."""
    out = Path(out)
    resolved = out.resolve()
    for item in keep:
        item = Path(item).resolve()
        if item == resolved or item in resolved.parents:
            raise InputError(f"{option} {out}: is in {item}, an input of this command; choose a file elsewhere")
    if not out.exists() and not out.is_symlink():
        return
    if out.is_dir():
        raise IsADirectoryError(21, "expected a file, found a folder", str(out))
    with out.open("rb") as handle:
        first = handle.readline().decode("utf-8", errors="replace").strip().removeprefix("\ufeff")
    if first != header:
        raise InputError(f"{option} {out}: exists and is not {what} (its first line is not {header!r}); it would "
                         "be overwritten; choose a new file name")


def _tmp_prefix(name: str) -> str:
    return f".{name}.tmp-{os.getpid()}-"


_TMP_PID = re.compile(r"\.tmp-(\d+)-")


def _pid_alive(pid: int) -> bool:
    """Whether process `pid` still runs. A zombie does not: in a container whose first process reaps no orphans
    (Docker without --init), a SIGKILLed sweep's worker stays a zombie forever, and its temporaries must go."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone meanwhile, or no /proc to ask (not Linux)
        return not Path("/proc/self").is_dir()
    return stat.rpartition(")")[2].split()[:1] != ["Z"]  # the state follows the command name in parentheses


def remove_stale_temporaries(folder: Path | str, name: str | None = None, unmarked: bool = False) -> list[Path]:
    """Remove temporary files and folders that writers killed hard (SIGKILL) left in `folder` (those of `name`
    only, if given): hidden `.NAME.tmp-PID-*` entries whose process is gone, and with `unmarked` (a folder only
    airace writes, such as a sweep's runs/) hidden entries without a process id too (earlier versions' names).
    Returns what was removed."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for entry in folder.glob(f".{name}.*" if name else ".*"):
        match = _TMP_PID.search(entry.name)
        if match is None and not unmarked:
            continue
        if match is not None and (int(match.group(1)) == os.getpid() or _pid_alive(int(match.group(1)))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def replace_folder(out_dir: Path | str, fill: Callable[[Path], None]) -> Path:
    """Call `fill(tmp)` on a new temporary sibling folder of `out_dir`, then put it in place of `out_dir` whole.

    An exception or interrupt (Ctrl-C; SIGTERM under `model.interrupts.terminate_as_interrupt`) while filling
    removes the temporary folder; the final swap (old folder aside, new folder in, old folder removed) runs with
    SIGINT/SIGTERM held, and a failure during it puts the old folder back. The caller checks `out_dir` first
    (`check_output_folder`)."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out.parent, out.name)
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(out.name), dir=out.parent))
    old: Path | None = None
    try:
        fill(tmp)
        tmp.chmod(0o777 & ~_UMASK)  # mkdtemp makes it private; a result folder is an ordinary folder
        with signals_held():
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=_tmp_prefix(out.name + ".old"), dir=out.parent))
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


def run_folder_name(run: int) -> str:
    """`run_NNNN`: the folder of run `run` under a sweep's `runs/`."""
    return f"run_{run:04d}"


def table_file(folder: Path | str, name: str) -> Path:
    return Path(folder) / f"{name}.parquet"


def write_file_atomically(path: Path | str, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary file beside `path`, then rename it over `path` (signals held)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent, path.name)
    fd, name = tempfile.mkstemp(prefix=_tmp_prefix(path.name), dir=path.parent)
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
    return write_file_atomically(path, lambda tmp: tmp.write_text(dumps_strict(data, indent=2) + "\n"))


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

    Tables go into a hidden temporary sibling folder that replaces `out_dir` whole (`replace_folder`). The caller
    checks `out_dir` first (`check_output_folder`).
    """
    unknown = sorted(set(tables) - set(TABLE_NAMES))
    if unknown or set(tables) != set(TABLE_NAMES):
        raise ValueError(f"a result folder holds exactly the tables {', '.join(TABLE_NAMES)}; got {sorted(tables)}")
    conformed = {name: conform(name, tables[name]) for name in TABLE_NAMES}

    def fill(tmp: Path) -> None:
        for name, df in conformed.items():
            df.to_parquet(table_file(tmp, name), index=False)
        (tmp / MANIFEST).write_text(dumps_strict(manifest, indent=2))

    return replace_folder(out_dir, fill)
