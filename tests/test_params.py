"""The fitted parameter file: where the values came from, and a clear error for a bad file."""

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from model.errors import InputError
from model.performance.params import DATA_FILE, FitRecord, ServeParams, TrainParams, dumps, fitted, load

ROOT = Path(__file__).resolve().parents[1]


def test_fitted_values_name_the_data_they_came_from():
    """Changing a calibration file without refitting fails here: run `python -m model.performance.calibrate`."""
    _, _, record = fitted()
    assert record.fitted_on and record.objective and record.reference_date
    files = {name for name, _, _ in record.data}
    assert files == {"validation/training_calibration.csv", "validation/inference_calibration.csv",
                     "validation/inference_curves_calibration.csv"}
    for name, sha, rows in record.data:
        path = ROOT / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha, f"{name} changed since the fit: refit"
        assert sum(1 for _ in path.open()) - 1 == rows


def test_no_hold_out_file_feeds_the_fit():
    _, _, record = fitted()
    assert not any("holdout" in name for name, _, _ in record.data)


def test_round_trip(tmp_path):
    train = replace(TrainParams(), attn_eff=0.5)
    serve = replace(ServeParams(), mem_eff=0.7)
    record = FitRecord(fitted_on="2026-01-01", objective="x", data=(("validation/a.csv", "0" * 64, 3),))
    path = tmp_path / "p.toml"
    path.write_text(dumps(train, serve, record))
    assert load(path) == (train, serve, record)


def test_unknown_or_bad_parameter_names_file_and_field(tmp_path):
    text = DATA_FILE.read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("[training]\n", "[training]\ngemm_speedup = 2.0\n"))
    with pytest.raises(InputError, match=r"bad.toml \[training\]: unknown parameter\(s\) gemm_speedup"):
        load(bad)
    bad.write_text(text.replace("[serving]\n", "[serving]\nmem_eff_extra = 1\n").replace("mem_eff = ", "mem_eff = -"))
    with pytest.raises(InputError, match="bad.toml"):
        load(bad)
