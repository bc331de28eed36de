"""Write and read result folders atomically (temp dir in the same parent, then rename)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd


def write_results(out_dir, tables: dict[str, pd.DataFrame], manifest: dict) -> Path:
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, df in tables.items():
            df.to_parquet(tmp / f"{name}.parquet", index=False)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_results(directory) -> dict:
    d = Path(directory)
    res = {p.stem: pd.read_parquet(p) for p in sorted(d.glob("*.parquet"))}
    res["manifest"] = json.loads((d / "manifest.json").read_text())
    return res
