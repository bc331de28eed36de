"""Batch I/O of the performance model: many jobs from a CSV, one result dict per row, in order.

A row that cannot be evaluated gets `error` set instead of numbers; batch mode never raises.
"""

from __future__ import annotations

import csv
from pathlib import Path

from model.errors import InputError
from model.performance.training import train_estimate

TRAIN_COLUMNS = ("system", "gpus", "workload", "precision", "seq_len", "global_batch_seqs", "tokens")
SERVE_COLUMNS = ("system", "gpus", "workload", "precision", "input_tokens", "output_tokens", "scenario")


def _int(text: str, name: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name}: expected a whole number, got {text!r}") from None
    if value != int(value):
        raise InputError(f"{name}: expected a whole number, got {text!r}")
    return int(value)


def train_batch(csv_path: str | Path) -> list[dict]:
    """Training estimates for every row (columns TRAIN_COLUMNS, optional `date`)."""
    results: list[dict] = []
    with Path(csv_path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            base = {k: row.get(k) for k in TRAIN_COLUMNS}
            try:
                tokens_text = (row.get("tokens") or "").strip()
                result = train_estimate(
                    (row.get("system") or "").strip(), _int(row.get("gpus") or "", "gpus"),
                    (row.get("workload") or "").strip(), (row.get("precision") or "").strip(),
                    _int(row.get("seq_len") or "", "seq_len"),
                    _int(row.get("global_batch_seqs") or "", "global_batch_seqs"),
                    float(tokens_text) if tokens_text else None,
                    date=(row.get("date") or "").strip() or None)
                results.append({**base, **result.to_dict()})
            except (InputError, ValueError, KeyError) as exc:
                results.append({**base, "error": str(exc)})
    return results


def serve_batch(csv_path: str | Path) -> list[dict]:
    """Serving estimates for every row (columns SERVE_COLUMNS, optional `date`, `min_user_tokens_per_s`,
    `max_ttft_s`, `prefill_system`)."""
    from model.performance.serving import serve_estimate  # lazy: serving re-exports this module's names

    out: list[dict] = []
    with Path(csv_path).open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                missing = [c for c in SERVE_COLUMNS[:-1] if not (row.get(c) or "").strip()]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")

                def opt(name: str, cast=float, row=row):
                    text = (row.get(name) or "").strip()
                    return cast(text) if text else None

                res = serve_estimate(
                    row["system"].strip(), _int(row["gpus"], "gpus"), row["workload"].strip(),
                    row["precision"].strip(), _int(row["input_tokens"], "input_tokens"),
                    _int(row["output_tokens"], "output_tokens"),
                    (row.get("scenario") or "offline").strip() or "offline", date=opt("date", str),
                    min_user_tokens_per_s=opt("min_user_tokens_per_s"), max_ttft_s=opt("max_ttft_s"),
                    prefill_system=opt("prefill_system", str))
                out.append({**res.to_dict(), "line": line, "error": None if res.feasible else res.reason})
            except Exception as exc:  # noqa: BLE001 - batch mode reports, never raises
                out.append({**{c: row.get(c) for c in SERVE_COLUMNS}, "line": line, "feasible": False,
                            "error": f"line {line}: {exc}"})
    return out
