"""Write and read result folders atomically (temp dir in the same parent, then rename)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import: os.umask can only be read by setting it


def write_results(out_dir, tables: dict[str, pd.DataFrame], manifest: dict) -> Path:
    """Write a result folder so that readers see either the old folder, the whole new one, or nothing.

    Tables go into a hidden temporary sibling folder that is renamed into place. An exception or interrupt
    (Ctrl-C; SIGTERM under `model.interrupts.terminate_as_interrupt`) while writing removes the temporary folder;
    the final swap (old folder aside, new folder in, old folder removed) runs with SIGINT/SIGTERM held.
    """
    from model.interrupts import signals_held

    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    old: Path | None = None
    try:
        for name, df in tables.items():
            df.to_parquet(tmp / f"{name}.parquet", index=False)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
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


def read_results(directory) -> dict:
    d = Path(directory)
    res = {p.stem: pd.read_parquet(p) for p in sorted(d.glob("*.parquet"))}
    res["manifest"] = json.loads((d / "manifest.json").read_text())
    return res
